// The fast fp64 reference on the tensor cores: conv_tile.cuh's shared-memory tiles (128 pixels × 64
// channels per block, K in chunks of 16) and mma.sync.m8n8k4 in double (PTX ISA, "Warp-level matrix
// multiply-accumulate instructions", .f64 m8n8k4 fragments; Hopper's fp64 tensor cores round like an
// IEEE double fused multiply-add, NVIDIA H100 Tensor Core GPU Architecture whitepaper, "FP64").
//
// Each product of two fp32 values is exact in double, so the output is the double sum of the exact
// products, in a different order than conv_tiled.cu's fp64 build but equal to any fp64 evaluation up to
// fp64 rounding (γ_K in double, Higham 2002, §3.1). The bias starts each sum; doubles are written.
#include "conv_tile.cuh"

using namespace fpa_tile;

constexpr int THREADS = 128;

constexpr int A_LD = BM + 8, B_LD = BN + 8;  // padded rows: a warp's fragment reads hit 32 distinct banks

__device__ __forceinline__ void fpa_dmma(double (&d)[2], double a, double b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
}

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

    // Warp w owns rows (w % 2)·64 … +63 and columns (w / 2)·32 … +31: 8 × 4 tiles of 8 × 8.
    const int warp = t / 32, lane = t % 32, gid = lane >> 2, tig = lane & 3;
    const int wm = (warp & 1) * 64, wn = (warp >> 1) * 32;
    double acc[8][4][2];
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int n = n0 + wn + nt * 8 + tig * 2 + i;
            const double init = (p.has_bias && n < og) ? (double)bias[g * og + n] : 0.0;
#pragma unroll
            for (int mt = 0; mt < 8; ++mt) acc[mt][nt][i] = init;
        }
    }

    // Terms past K are 0 in both tiles (conv_tile.cuh) and add exact zeros.
    run_chunks(loader, &As[0][0][0], A_LD, &Bs[0][0][0], B_LD, [&](int stage, int) {
#pragma unroll
        for (int ks = 0; ks < BK; ks += 4) {
            double b[4];
#pragma unroll
            for (int nt = 0; nt < 4; ++nt) b[nt] = (double)Bs[stage][ks + tig][wn + nt * 8 + gid];
#pragma unroll
            for (int mt = 0; mt < 8; ++mt) {
                const double a = (double)As[stage][ks + tig][wm + mt * 8 + gid];
#pragma unroll
                for (int nt = 0; nt < 4; ++nt) fpa_dmma(acc[mt][nt], a, b[nt]);
            }
        }
    });

#pragma unroll
    for (int mt = 0; mt < 8; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
#pragma unroll
            for (int i = 0; i < 2; ++i) {
                const long long m = m0 + wm + mt * 8 + gid;
                const int n = n0 + wn + nt * 8 + tig * 2 + i;
                if (m >= pixels || n >= og) continue;
                const long long nb = m / E, z = m - nb * E;
                y[(nb * p.o + (long long)g * og + n) * E + z] = acc[mt][nt][i];
            }
}
