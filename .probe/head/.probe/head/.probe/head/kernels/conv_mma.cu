// conv2d as an implicit GEMM on the tensor cores: mma.sync.m16n8k8 with TF32 operands (PTX ISA,
// "Warp-level matrix multiply-accumulate instructions", m16n8k8 .tf32 fragment layouts).
// Rows of the GEMM are output pixels (n, e0, e1), columns output channels within one group, and the
// K axis the group's (input channel, kh, kw) terms, channel outermost. Each warp owns a 16×8 tile and
// reads its fragments straight from global memory: a correctness instrument, not a fast kernel.
// FPA_TC_SPLIT 1: operands rounded to TF32 (nearest even) as cuDNN's TF32 mode does.
// FPA_TC_SPLIT 3: 3xTF32 — a = big + small, both TF32; small·big + big·small + big·big (Ootomo &
// Yokota 2022, IJHPCA 36(4), "Recovering single precision accuracy from Tensor Cores ...").
#include "conv_tf32.cuh"

extern "C" __global__ void conv_mma(const float* __restrict__ x, const float* __restrict__ w,
                                    const float* __restrict__ bias, const float* __restrict__ mult,
                                    float* __restrict__ y, ConvParams p) {
    const int lane = threadIdx.x & 31;
    const long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    const int cg = (int)(p.c / p.groups), og = (int)(p.o / p.groups);
    const int taps = p.k0 * p.k1, K = cg * taps;
    const long long pixels = p.n * p.e0 * p.e1;
    const long long row_tiles = (pixels + 15) / 16;
    const int col_tiles = (og + 7) / 8;
    if (warp >= row_tiles * col_tiles * p.groups) return;  // whole warps leave together
    const long long row_tile = warp % row_tiles;
    const long long rest = warp / row_tiles;
    const int col_tile = (int)(rest % col_tiles), g = (int)(rest / col_tiles);
    const int gid = lane >> 2, tig = lane & 3;

    // The input value of GEMM row `row` (a pixel of this tile) at term k; 0 outside the input or past K.
    auto a_at = [&](int row, int k) -> float {
        const long long m = row_tile * 16 + row;
        if (m >= pixels || k >= K) return 0.0f;
        const long long e1 = m % p.e1, e0 = (m / p.e1) % p.e0, nb = m / (p.e1 * p.e0);
        const int c = k / taps, tap = k % taps, i0 = tap / p.k1, i1 = tap % p.k1;
        const long long q0 = e0 * p.s0 - p.p0 + (long long)i0 * p.l0;
        const long long q1 = e1 * p.s1 - p.p1 + (long long)i1 * p.l1;
        if (q0 < 0 || q0 >= p.d0 || q1 < 0 || q1 >= p.d1) return 0.0f;
        return x[((nb * p.c + (long long)g * cg + c) * p.d0 + q0) * p.d1 + q1];
    };
    auto b_at = [&](int k, int col) -> float {
        const int oc_in_group = col_tile * 8 + col;
        if (oc_in_group >= og || k >= K) return 0.0f;
        return w[((long long)g * og + oc_in_group) * K + k];
    };

    float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (int k0 = 0; k0 < K; k0 += 8) {
        const float av[4] = {a_at(gid, k0 + tig), a_at(gid + 8, k0 + tig), a_at(gid, k0 + tig + 4),
                             a_at(gid + 8, k0 + tig + 4)};
        const float bv[2] = {b_at(k0 + tig, gid), b_at(k0 + tig + 4, gid)};
        unsigned a_big[4], b_big[2];
#pragma unroll
        for (int i = 0; i < 4; ++i) a_big[i] = __float_as_uint(fpa_tf32_rne(av[i]));
#pragma unroll
        for (int i = 0; i < 2; ++i) b_big[i] = __float_as_uint(fpa_tf32_rne(bv[i]));
#if FPA_TC_SPLIT == 3
        unsigned a_small[4], b_small[2];
#pragma unroll
        for (int i = 0; i < 4; ++i) a_small[i] = __float_as_uint(fpa_tf32_rne(__fsub_rn(av[i], __uint_as_float(a_big[i]))));
#pragma unroll
        for (int i = 0; i < 2; ++i) b_small[i] = __float_as_uint(fpa_tf32_rne(__fsub_rn(bv[i], __uint_as_float(b_big[i]))));
        fpa_mma(d, a_small, b_big);
        fpa_mma(d, a_big, b_small);
#endif
        fpa_mma(d, a_big, b_big);
    }

#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const long long m = row_tile * 16 + gid + (i >= 2 ? 8 : 0);
        const int oc_in_group = col_tile * 8 + tig * 2 + (i & 1);
        if (m >= pixels || oc_in_group >= og) continue;
        const long long oc = (long long)g * og + oc_in_group;
        const long long e1 = m % p.e1, e0 = (m / p.e1) % p.e0, nb = m / (p.e1 * p.e0);
        const float v = p.has_bias ? __fadd_rn(d[i], bias[oc]) : d[i];
        y[((nb * p.o + oc) * p.e0 + e0) * p.e1 + e1] = v;
    }
}
