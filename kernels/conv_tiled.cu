// Convolution as a tiled implicit GEMM on the CUDA cores, for the three seed ops (conv2d is the 3-d
// code with a trailing extent of 1). GEMM rows are the output pixels (n, e0, e1, e2) of one group,
// columns that group's output channels, K its (input channel, k0, k1, k2) terms, channel outermost.
//
// A block owns a 128-pixel × 64-channel tile; its 128 threads each keep an 8 × 8 register tile of
// accumulators. K is walked in chunks of 16 terms that cp.async copies into a 3-stage shared-memory
// ring (im2col of the input on the fly, padding zero-filled by the copy; weights pre-transposed to
// [group][K][channel] by the launcher). Every accumulator still visits its K terms in order 0, 1, …,
// K−1 with fpa_step starting from the bias, so the result is bit for bit the direct kernel's
// sequential chain and the CPU twin's: tiling changes where operands come from, not the arithmetic.
// The tail chunk stops at K exactly (a padded 0·0 term would turn a −0 sum into +0).
//
// FPA_ORDER_FP64 accumulates the exact products in double; with FPA_OUT_DOUBLE the double sum itself
// is written (the fast fp64 reference, fpa_kernels.reference), otherwise it is rounded to fp32 once.
#include "conv_arith.cuh"

#if FPA_ORDER != FPA_ORDER_SEQUENTIAL && FPA_ORDER != FPA_ORDER_FP64
#error "conv_tiled.cu implements the sequential and fp64 orders only"
#endif

#ifndef FPA_OUT_DOUBLE
#define FPA_OUT_DOUBLE 0
#endif

#if FPA_ORDER == FPA_ORDER_FP64
typedef double acc_t;
#else
typedef float acc_t;
#endif
#if FPA_OUT_DOUBLE
typedef double out_t;
#else
typedef float out_t;
#endif

constexpr int BM = 128, BN = 64, BK = 16, STAGES = 3, THREADS = 128;

__device__ __forceinline__ void fpa_cp_async4(float* smem, const float* gmem, bool valid) {
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    // src-size 0 copies nothing and zero-fills the 4 bytes: the padding and the ragged tile edges.
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 4 : 0));
}

__device__ __forceinline__ void fpa_cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void fpa_cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ acc_t fpa_tiled_step(acc_t acc, float w, float x) {
#if FPA_ORDER == FPA_ORDER_FP64
    return __fma_rn((double)w, (double)x, acc);  // the product is exact in double: fma = add
#else
    return fpa_step(acc, w, x);
#endif
}

// ktab[k] = {input offset of term k relative to the pixel's corner, k0·l0, k1·l1, k2·l2} for the
// group's K terms (written by fpa_kernels.launch), so the copy loop needs no division.
extern "C" __global__ void __launch_bounds__(THREADS) conv_tiled(
    const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ bias,
    const float* __restrict__ mult, out_t* __restrict__ y, const int4* __restrict__ ktab, ConvParams p) {
    __shared__ __align__(16) float As[STAGES][BK][BM];
    __shared__ __align__(16) float Bs[STAGES][BK][BN];

    const int t = threadIdx.x;
    const int cg = (int)(p.c / p.groups), og = (int)(p.o / p.groups);
    const int K = cg * p.k0 * p.k1 * p.k2;
    const long long E = p.e0 * p.e1 * p.e2;  // output pixels per image
    const long long pixels = p.n * E;
    const long long m0 = (long long)blockIdx.x * BM;
    const int n_tiles = (og + BN - 1) / BN;
    const int g = blockIdx.y / n_tiles, n0 = (blockIdx.y % n_tiles) * BN;

    // This thread copies the A column of pixel m0 + t: its corner in the input, once.
    const long long m_copy = m0 + t;
    const bool m_valid = m_copy < pixels;
    int q0 = 0, q1 = 0, q2 = 0;
    const float* x_corner = x;
    if (m_valid) {
        const long long nb = m_copy / E, z = m_copy - nb * E;
        const long long z0 = z / (p.e1 * p.e2), z1 = (z / p.e2) % p.e1, z2 = z % p.e2;
        q0 = (int)(z0 * p.s0 - p.p0);
        q1 = (int)(z1 * p.s1 - p.p1);
        q2 = (int)(z2 * p.s2 - p.p2);
        x_corner = x + ((nb * p.c + (long long)g * cg) * p.d0 * p.d1 * p.d2 + ((long long)q0 * p.d1 + q1) * p.d2 + q2);
    }
    const float* w_group = wt + (long long)g * K * og;

    auto load_chunk = [&](int chunk, int stage) {
        const int k0 = chunk * BK;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            const int k = k0 + kk;
            // Unconditional (clamped) table loads: all 16 are in flight at once. Behind a branch each
            // waited for the previous copy, and the loader's latency tripled the kernel's time.
            const int4 e = __ldg(ktab + min(k, K - 1));
            const bool ok = m_valid && k < K && (unsigned)(q0 + e.y) < (unsigned)p.d0 &&
                            (unsigned)(q1 + e.z) < (unsigned)p.d1 && (unsigned)(q2 + e.w) < (unsigned)p.d2;
            fpa_cp_async4(&As[stage][kk][t], ok ? x_corner + e.x : x, ok);
        }
#pragma unroll
        for (int j = 0; j < BK * BN / THREADS; ++j) {
            const int e = t + j * THREADS, kk = e / BN, n = e % BN;
            const bool ok = k0 + kk < K && n0 + n < og;
            fpa_cp_async4(&Bs[stage][kk][n], ok ? w_group + (long long)(k0 + kk) * og + n0 + n : wt, ok);
        }
    };

    // Thread tile: rows tm·4 … +3 and 64 + tm·4 … +3, columns tn·4 … +3 and 32 + tn·4 … +3 (one
    // 16-byte shared load per group of four, broadcast across the warp).
    const int tn = t % 8, tm = t / 8;
    acc_t acc[8][8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const int n = n0 + (j < 4 ? tn * 4 + j : 32 + tn * 4 + j - 4);
        const acc_t init = (p.has_bias && n < og) ? (acc_t)bias[g * og + n] : (acc_t)0;
#pragma unroll
        for (int i = 0; i < 8; ++i) acc[i][j] = init;
    }

    // One term kk of a stage: the thread's 8 inputs and 8 weights, operand rounding applied; then 64 steps.
    auto fragments = [&](int stage, int kk, float (&a)[8], float (&b)[8]) {
        const float4 a_lo = *reinterpret_cast<const float4*>(&As[stage][kk][tm * 4]);
        const float4 a_hi = *reinterpret_cast<const float4*>(&As[stage][kk][64 + tm * 4]);
        const float4 b_lo = *reinterpret_cast<const float4*>(&Bs[stage][kk][tn * 4]);
        const float4 b_hi = *reinterpret_cast<const float4*>(&Bs[stage][kk][32 + tn * 4]);
        const float av[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
        const float bv[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
        for (int i = 0; i < 8; ++i) a[i] = fpa_operand(av[i]), b[i] = fpa_operand(bv[i]);
    };
    auto steps = [&](const float (&a)[8], const float (&b)[8]) {
#pragma unroll
        for (int i = 0; i < 8; ++i)
#pragma unroll
            for (int j = 0; j < 8; ++j) acc[i][j] = fpa_tiled_step(acc[i][j], b[j], a[i]);
    };
    // A whole chunk: the next term's fragments are read from shared memory while this term's steps run.
    auto compute_chunk = [&](int stage) {
        float a[2][8], b[2][8];
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
            float a[8], b[8];
            fragments(stage, kk, a, b);
            steps(a, b);
        }
    };

    const int chunks = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < chunks) load_chunk(s, s);
        fpa_cp_commit();
    }
    for (int c = 0; c < chunks; ++c) {
        fpa_cp_wait<STAGES - 2>();
        __syncthreads();  // chunk c is visible to all; everyone is done with chunk c − 1's stage
        if (c + STAGES - 1 < chunks) load_chunk(c + STAGES - 1, (c + STAGES - 1) % STAGES);
        fpa_cp_commit();
        const int kn = K - c * BK;
        if (kn >= BK)
            compute_chunk(c % STAGES);
        else
            compute_tail(c % STAGES, kn);
    }
    fpa_cp_wait<0>();

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const long long m = m0 + (i < 4 ? tm * 4 + i : 64 + tm * 4 + i - 4);
        if (m >= pixels) continue;
        const long long nb = m / E, z = m - nb * E;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int n = n0 + (j < 4 ? tn * 4 + j : 32 + tn * 4 + j - 4);
            if (n >= og) continue;
            const long long oc = (long long)g * og + n;
#if FPA_OUT_DOUBLE
            const out_t v = acc[i][j];
#else
#if FPA_ORDER == FPA_ORDER_FP64
            float v = __double2float_rn(acc[i][j]);  // the one final rounding, as conv_direct.cu
#else
            float v = acc[i][j];
#endif
#if FPA_EPILOGUE
            v = __fmul_rn(v, mult[oc]);
            v = v > 0.0f ? v : __fmul_rn(v, p.negative_slope);
            v = fpa_gelu(v);
#endif
#endif
            y[(nb * p.o + oc) * E + z] = v;
        }
    }
}
