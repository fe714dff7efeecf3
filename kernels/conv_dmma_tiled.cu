// The fast fp64 reference on the tensor cores: conv_tile.cuh's shared-memory tiles (128 pixels × 64
// channels per block, K in chunks of 16) and Hopper's fp64 mma.sync.m16n8k{4,8,16} (PTX ISA 7.8,
// "Warp-level matrix multiply-accumulate instructions", .f64 m16n8k4/k8/k16 fragments, sm_90), or the
// m8n8k4 of sm_80 with FPA_DMMA_K = 0. Hopper's fp64 tensor cores round like an IEEE double fused
// multiply-add (NVIDIA H100 Tensor Core GPU Architecture whitepaper, "FP64").
//
// Why the sm_90 shapes: m8n8k4 ran the seed at 28 TFLOP/s of fp64 work on an H200, against 57 for
// cuBLAS's DGEMM, which issues m16n8k16 (experiments/PERF_NOTES.md has the probe).
//
// Each product of two fp32 values is exact in double, so the output is the double sum of the exact
// products, in a different order than conv_tiled.cu's fp64 build but equal to any fp64 evaluation up to
// fp64 rounding (γ_K in double, Higham 2002, §3.1). The bias starts each sum; doubles are written.
#include "conv_tile.cuh"

using namespace fpa_tile;

constexpr int THREADS = 128;

constexpr int A_LD = BM + 8, B_LD = BN + 8;  // padded rows: a warp's fragment reads hit 32 distinct banks

#ifndef FPA_DMMA_K
#define FPA_DMMA_K 8
#endif
// KS terms per instruction; the legacy m8n8k4 tiles a warp's 64 rows in 8 row tiles of 8, the sm_90
// shapes in 4 of 16.
constexpr int KS = FPA_DMMA_K == 0 ? 4 : FPA_DMMA_K, MT = FPA_DMMA_K == 0 ? 8 : 4, CV = FPA_DMMA_K == 0 ? 2 : 4;
static_assert(FPA_DMMA_K == 0 || FPA_DMMA_K == 4 || FPA_DMMA_K == 8 || FPA_DMMA_K == 16, "FPA_DMMA_K: 0, 4, 8, 16");
static_assert(BK % KS == 0, "a chunk holds whole instructions");

// One warp-wide multiply-accumulate: d (CV doubles) += A (a: KS/2 doubles, or 1 for m8n8k4) × B (b: KS/4).
__device__ __forceinline__ void fpa_dmma(double (&d)[CV], const double* a, const double* b) {
#if FPA_DMMA_K == 0
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a[0]), "d"(b[0]));
#elif FPA_DMMA_K == 4
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b[0]));
#elif FPA_DMMA_K == 8
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
                 "{%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
                   "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
#endif
}

// The fragments (PTX ISA, the .f64 mma fragment figures), with gid = lane / 4 and tig = lane % 4:
// m16n8kKS: a[v0 + 2·v1] = A[gid + 8·v0][tig + 4·v1], b[v] = B[tig + 4·v][gid],
//           d[i + 2·h] = D[gid + 8·h][2·tig + i];
// m8n8k4:   a[0] = A[gid][tig], b[0] = B[tig][gid], d[i] = D[gid][2·tig + i].
constexpr int A_REGS = FPA_DMMA_K == 0 ? 1 : KS / 2, B_REGS = FPA_DMMA_K == 0 ? 1 : KS / 4;
constexpr int ROWS_PER_TILE = FPA_DMMA_K == 0 ? 8 : 16;
__device__ __forceinline__ int a_row(int v) { return (v % 2) * 8; }
__device__ __forceinline__ int a_k(int v) { return (v / 2) * 4; }
__device__ __forceinline__ int d_row(int v) { return (v / 2) * 8; }

extern "C" __global__ void __launch_bounds__(THREADS) conv_dmma_tiled(
    const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ bias,
    const float* __restrict__ mult, double* __restrict__ y, const int* __restrict__ ktab, ConvParams p) {
    __shared__ __align__(16) float As[STAGES][BK][A_LD];
    __shared__ __align__(16) float Bs[STAGES][BK][B_LD];
    extern __shared__ __align__(16) int table[];

    const int t = threadIdx.x;
    const int og = (int)(p.o / p.groups);
    const long long E = p.e0 * p.e1 * p.e2;
    const long long pixels = p.n * E;
    const long long m0 = (long long)blockIdx.x * BM;
    const int n_tiles = (og + BN - 1) / BN;
    const int g = blockIdx.y / n_tiles, n0 = (blockIdx.y % n_tiles) * BN;
    const Loader<THREADS> loader(x, wt, table, p, m0, g, n0);
    load_table(table, ktab, loader.K);

    // Warp w owns rows (w % 2)·64 … +63 and columns (w / 2)·32 … +31: MT × 4 tiles of ROWS_PER_TILE × 8.
    const int warp = t / 32, lane = t % 32, gid = lane >> 2, tig = lane & 3;
    const int wm = (warp & 1) * 64, wn = (warp >> 1) * 32;
    double acc[MT][4][CV];
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
#pragma unroll
        for (int v = 0; v < CV; ++v) {
            const int n = n0 + wn + nt * 8 + tig * 2 + v % 2;
            const double init = (p.has_bias && n < og) ? (double)bias[g * og + n] : 0.0;
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) acc[mt][nt][v] = init;
        }
    }

    // Terms past K are 0 in both tiles (conv_tile.cuh) and add exact zeros.
    run_chunks(loader, &As[0][0][0], A_LD, &Bs[0][0][0], B_LD, [&](int stage, int) {
#pragma unroll
        for (int ks = 0; ks < BK; ks += KS) {
            double b[4][B_REGS];
#pragma unroll
            for (int nt = 0; nt < 4; ++nt)
#pragma unroll
                for (int v = 0; v < B_REGS; ++v) b[nt][v] = (double)Bs[stage][ks + tig + 4 * v][wn + nt * 8 + gid];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                double a[A_REGS];
#pragma unroll
                for (int v = 0; v < A_REGS; ++v)
                    a[v] = (double)As[stage][ks + tig + a_k(v)][wm + mt * ROWS_PER_TILE + gid + a_row(v)];
#pragma unroll
                for (int nt = 0; nt < 4; ++nt) fpa_dmma(acc[mt][nt], a, b[nt]);
            }
        }
    });

#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
#pragma unroll
            for (int v = 0; v < CV; ++v) {
                const long long m = m0 + wm + mt * ROWS_PER_TILE + gid + d_row(v);
                const int n = n0 + wn + nt * 8 + tig * 2 + v % 2;
                if (m >= pixels || n >= og) continue;
                const long long nb = m / E, z = m - nb * E;
                y[(nb * p.o + (long long)g * og + n) * E + z] = acc[mt][nt][v];
            }
}
