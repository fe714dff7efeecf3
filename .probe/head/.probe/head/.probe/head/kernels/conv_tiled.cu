// Convolution as a tiled implicit GEMM on the CUDA cores, for the three seed ops (conv2d is the 3-d
// code with a trailing extent of 1); the tiling and the copies are conv_tile.cuh's.
//
// A block owns a 128-pixel × 64-channel tile; each thread keeps an 8 × TN register tile of accumulators
// (256 threads × 8 × 4 by default), fed by 16-byte shared-memory loads. Every accumulator still visits its K terms in order
// 0, 1, …, K−1 with fpa_step starting from the bias, so the result is bit for bit the direct kernel's
// sequential chain and the CPU twin's: tiling changes where operands come from, not the arithmetic.
// The tail chunk stops at K exactly (a padded 0·0 term would turn a −0 sum into +0).
//
// FPA_ORDER_FP64 accumulates the exact products in double and rounds the sum to fp32 once.
#include "conv_arith.cuh"
#include "conv_tile.cuh"

#if FPA_ORDER != FPA_ORDER_SEQUENTIAL && FPA_ORDER != FPA_ORDER_FP64
#error "conv_tiled.cu implements the sequential and fp64 orders only"
#endif

#if FPA_ORDER == FPA_ORDER_FP64
typedef double acc_t;
#else
typedef float acc_t;
#endif

using namespace fpa_tile;

__device__ __forceinline__ acc_t fpa_tiled_step(acc_t acc, float w, float x) {
#if FPA_ORDER == FPA_ORDER_FP64
    return __fma_rn((double)w, (double)x, acc);  // the product is exact in double: fma = add
#else
    return fpa_step(acc, w, x);
#endif
}

// Threads per block: 128 with 8 × 8 accumulators each (default), or 256 with 8 × 4. On the H100 the
// 256-thread build ran the seed in 10.4 ms against 9.3 ms: twice the warps did not pay for the lower
// share of FFMA among the instructions (experiments/tile_probe.py, experiments/PERF_NOTES.md).
// Blocks per SM the register cap aims at: as many as fit.
#ifndef FPA_TILED_THREADS
#define FPA_TILED_THREADS 128
#endif
#ifndef FPA_MIN_BLOCKS
#define FPA_MIN_BLOCKS (FPA_TILED_THREADS == 256 ? 2 : (FPA_ORDER == FPA_ORDER_FP64 ? 2 : 3))
#endif
constexpr int THREADS = FPA_TILED_THREADS;
constexpr int TN = BM * BN / THREADS / 8;  // accumulator columns per thread: 8 rows × TN
constexpr int CT = BN / TN;                // threads across the 64 columns

__device__ __forceinline__ int fpa_tile_column(int tn, int j) { return (j / 4) * (CT * 4) + tn * 4 + j % 4; }

// Dynamic shared memory: the group's term table (see conv_tile.cuh).
extern "C" __global__ void __launch_bounds__(THREADS, FPA_MIN_BLOCKS) conv_tiled(
    const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ bias,
    const float* __restrict__ mult, float* __restrict__ y, const int* __restrict__ ktab, ConvParams p) {
    __shared__ __align__(16) float As[STAGES][BK][BM];
    __shared__ __align__(16) float Bs[STAGES][BK][BN];
    extern __shared__ __align__(16) int table[];

    const int t = threadIdx.x;
    const int og = (int)(p.o / p.groups);
    const long long E = p.e0 * p.e1 * p.e2;  // output pixels per image
    const long long pixels = p.n * E;
    const long long m0 = (long long)blockIdx.x * BM;
    const int n_tiles = (og + BN - 1) / BN;
    const int g = blockIdx.y / n_tiles, n0 = (blockIdx.y % n_tiles) * BN;
    const Loader<THREADS> loader(x, wt, table, p, m0, g, n0);
    const int K = loader.K;
    load_table(table, ktab, K);

    // Thread tile: rows tm·4 … +3 and 64 + tm·4 … +3; columns tn·4 … +3 (and, with TN = 8, 32 + tn·4 …
    // +3): one 16-byte shared load per group of four, broadcast across the warp.
    const int tn = t % CT, tm = t / CT;
    acc_t acc[8][TN];
#pragma unroll
    for (int j = 0; j < TN; ++j) {
        const int n = n0 + fpa_tile_column(tn, j);
        const acc_t init = (p.has_bias && n < og) ? (acc_t)bias[g * og + n] : (acc_t)0;
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[i][j] = init;
    }

    // One term kk of a stage: the thread's 8 inputs and TN weights, operand rounding applied; then the steps.
    auto fragments = [&](int stage, int kk, float (&a)[8], float (&b)[TN]) {
        const float4 a_lo = *reinterpret_cast<const float4*>(&As[stage][kk][tm * 4]);
        const float4 a_hi = *reinterpret_cast<const float4*>(&As[stage][kk][64 + tm * 4]);
        const float av[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
#pragma unroll
        for (int i = 0; i < 8; ++i) a[i] = fpa_operand(av[i]);
#pragma unroll
        for (int h = 0; h < TN / 4; ++h) {
            const float4 bq = *reinterpret_cast<const float4*>(&Bs[stage][kk][fpa_tile_column(tn, 4 * h)]);
            b[4 * h] = fpa_operand(bq.x), b[4 * h + 1] = fpa_operand(bq.y);
            b[4 * h + 2] = fpa_operand(bq.z), b[4 * h + 3] = fpa_operand(bq.w);
        }
    };
    auto steps = [&](const float (&a)[8], const float (&b)[TN]) {
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fpa_tiled_step(acc[i][j], b[j], a[i]);
    };
    // A whole chunk: the next term's fragments are read from shared memory while this term's steps run.
    auto compute_chunk = [&](int stage) {
        float a[2][8], b[2][TN];
        fragments(stage, 0, a[0], b[0]);
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            if (kk + 1 < BK) fragments(stage, kk + 1, a[(kk + 1) & 1], b[(kk + 1) & 1]);
            steps(a[kk & 1], b[kk & 1]);
        }
    };
    auto compute_tail = [&](int stage, int kn) {
#pragma unroll 1
        for (int kk = 0; kk < kn; ++kk) {
            float a[8], b[TN];
            fragments(stage, kk, a, b);
            steps(a, b);
        }
    };

    run_chunks(loader, &As[0][0][0], BM, &Bs[0][0][0], BN, [&](int stage, int c) {
        const int kn = K - c * BK;
        if (kn >= BK)
            compute_chunk(stage);
        else
            compute_tail(stage, kn);
    });

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const long long m = m0 + (i < 4 ? tm * 4 + i : 64 + tm * 4 + i - 4);
        if (m >= pixels) continue;
        const long long nb = m / E, z = m - nb * E;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int n = n0 + fpa_tile_column(tn, j);
            if (n >= og) continue;
            const long long oc = (long long)g * og + n;
#if FPA_ORDER == FPA_ORDER_FP64
            float v = __double2float_rn(acc[i][j]);  // the one final rounding, as conv_direct.cu
#else
            float v = acc[i][j];
#endif
            y[(nb * p.o + oc) * E + z] = fpa_epilogue(v, mult, oc, p.negative_slope);
        }
    }
}
