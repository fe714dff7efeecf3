// Direct convolution, one thread per output element, for the three seed ops (conv2d is the 3-d code
// with a trailing extent of 1). Every arithmetic choice is a compile-time define written by
// fpa_kernels.variants.VariantSpec.defines(); the CPU twin reads the same spec
// (fp_analysis.orders.accumulate + fp_analysis.gelu32.epilogue32), so the two compute the same bits.
//
// All fp32 arithmetic uses the _rn intrinsics: nvcc may then neither contract a multiply and an add
// into an FMA nor reassociate (CUDA C++ Programming Guide, "Intrinsic Functions"); --use_fast_math
// still adds .ftz to them, which the twin models with ftz=True.
#include "conv_arith.cuh"

extern "C" __global__ void conv_direct(const float* __restrict__ x, const float* __restrict__ w,
                                       const float* __restrict__ bias, const float* __restrict__ mult,
                                       float* __restrict__ y, ConvParams p) {
    const long long total = p.n * p.o * p.e0 * p.e1 * p.e2;
    const long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= total) return;
    long long r = idx;
    const long long z2 = r % p.e2; r /= p.e2;
    const long long z1 = r % p.e1; r /= p.e1;
    const long long z0 = r % p.e0; r /= p.e0;
    const long long oc = r % p.o;
    const long long nb = r / p.o;
    const int cg = (int)(p.c / p.groups);
    const int g = (int)(oc / (p.o / p.groups));
    const int taps = p.k0 * p.k1 * p.k2;
    const int K = cg * taps;
    const float* wrow = w + oc * K;
    const float* xb = x + (nb * p.c + (long long)g * cg) * p.d0 * p.d1 * p.d2;

    // Term q of the visited order: its weight and input (0 where the tap falls in the padding).
    auto term = [&](int q, float& wv, float& xv) {
#if FPA_TAP_OUTER
        const int k = (q % cg) * taps + q / cg;
#else
        const int k = q;
#endif
        const int c = k / taps, tap = k % taps;
        const int i0 = tap / (p.k1 * p.k2), i1 = (tap / p.k2) % p.k1, i2 = tap % p.k2;
        const long long q0 = z0 * p.s0 - p.p0 + (long long)i0 * p.l0;
        const long long q1 = z1 * p.s1 - p.p1 + (long long)i1 * p.l1;
        const long long q2 = z2 * p.s2 - p.p2 + (long long)i2 * p.l2;
        const bool inside = q0 >= 0 && q0 < p.d0 && q1 >= 0 && q1 < p.d1 && q2 >= 0 && q2 < p.d2;
        wv = fpa_operand(wrow[k]);
        xv = inside ? fpa_operand(xb[((c * p.d0 + q0) * p.d1 + q1) * p.d2 + q2]) : 0.0f;
    };

    const float init = p.has_bias ? bias[oc] : 0.0f;
    float acc;
    float wv, xv;
#if FPA_ORDER == FPA_ORDER_SEQUENTIAL
    acc = init;
    for (int q = 0; q < K; ++q) {
        term(q, wv, xv);
        acc = fpa_step(acc, wv, xv);
    }
#elif FPA_ORDER == FPA_ORDER_SPLIT_K
    // FPA_SPLITS contiguous blocks of ceil(K/S) visited terms, the bias starting block 0; then adjacent
    // pairs are added level by level, an odd last partial moving up unchanged (fp_analysis.orders).
    float part[FPA_SPLITS];
    const int chunk = (K + FPA_SPLITS - 1) / FPA_SPLITS;
#pragma unroll
    for (int s = 0; s < FPA_SPLITS; ++s) {
        float a = s == 0 ? init : 0.0f;
        const int hi = min((s + 1) * chunk, K);
        for (int q = min(s * chunk, K); q < hi; ++q) {
            term(q, wv, xv);
            a = fpa_step(a, wv, xv);
        }
        part[s] = a;
    }
    int n = FPA_SPLITS;
#pragma unroll
    for (int level = 0; level < 12; ++level) {
        if (n > 1) {
#pragma unroll
            for (int i = 0; i < FPA_SPLITS / 2; ++i)
                if (i < n / 2) part[i] = __fadd_rn(part[2 * i], part[2 * i + 1]);
            if (n & 1) part[n / 2] = part[n - 1];
            n = (n + 1) / 2;
        }
    }
    acc = part[0];
#elif FPA_ORDER == FPA_ORDER_KAHAN
    float comp = 0.0f;
    acc = init;
    for (int q = 0; q < K; ++q) {
        term(q, wv, xv);
#if FPA_FUSED
        const float yk = __fmaf_rn(wv, xv, -comp);
#else
        const float yk = __fadd_rn(__fmul_rn(wv, xv), -comp);
#endif
        const float t = __fadd_rn(acc, yk);
        comp = __fadd_rn(__fadd_rn(t, -acc), -yk);
        acc = t;
    }
#elif FPA_ORDER == FPA_ORDER_FP64
    double a64 = (double)init;
    for (int q = 0; q < K; ++q) {
        term(q, wv, xv);
        a64 += (double)wv * (double)xv;  // exact product: fused or not, the same sum
    }
    acc = __double2float_rn(a64);
#endif

    y[idx] = fpa_epilogue(acc, mult, oc, p.negative_slope);
}
