// The per-term arithmetic and the fused epilogue shared by the CUDA-core conv kernels (conv_direct.cu,
// conv_tiled.cu), selected by the defines of fpa_kernels.variants.VariantSpec. Every fp32 operation is an
// _rn intrinsic, so nvcc can neither contract nor reassociate them; the CPU twin does the same steps.
#pragma once
#include "conv_params.cuh"

__device__ __forceinline__ float fpa_operand(float v) {
#if FPA_OPROUND == FPA_OPROUND_TF32
    return fpa_tf32_rne(v);
#elif FPA_OPROUND == FPA_OPROUND_TF32_RZ
    return fpa_tf32_rz(v);
#else
    return v;
#endif
}

__device__ __forceinline__ float fpa_step(float acc, float w, float x) {
#if FPA_FUSED
    return __fmaf_rn(w, x, acc);
#else
    return __fadd_rn(acc, __fmul_rn(w, x));
#endif
}

__device__ __forceinline__ float fpa_odd_piecewise(float z, const float (*c)[8], float scale, float width,
                                                   float cutoff) {
    if (z != z) return z;
    unsigned bits = __float_as_uint(z);
    float a = __uint_as_float(bits & 0x7fffffffu);
    float r = 1.0f;
    if (a < cutoff) {
        int i = (int)__fmul_rn(a, scale);
        float t = __fadd_rn(a, -__fmul_rn((float)i, width));
        r = c[i][7];
#pragma unroll
        for (int j = 6; j >= 0; --j) r = __fmaf_rn(r, t, c[i][j]);
    }
    return __uint_as_float(__float_as_uint(r) | (bits & 0x80000000u));
}

__device__ __forceinline__ float fpa_gelu(float v) {
#if FPA_GELU_IMPL == FPA_GELU_IMPL_FPA  // the project's polynomial erf/tanh (fp_analysis.gelu32): twinned bit for bit
    float half_v = __fmul_rn(FPA_HALF, v);
#if FPA_EPILOGUE == FPA_EPILOGUE_GELU_ERF
    float inner = fpa_odd_piecewise(__fmul_rn(v, FPA_SQRT1_2), fpa_erf_coeffs, FPA_ERF_SCALE, FPA_ERF_WIDTH,
                                    FPA_ERF_CUTOFF);
#else
    float cube = __fmul_rn(__fmul_rn(v, v), v);
    float arg = __fmul_rn(FPA_SQRT_2_OVER_PI, __fmaf_rn(FPA_GELU_TANH_CUBIC, cube, v));
    float inner = fpa_odd_piecewise(arg, fpa_tanh_coeffs, FPA_TANH_SCALE, FPA_TANH_WIDTH, FPA_TANH_CUTOFF);
#endif
    return __fmul_rn(half_v, __fadd_rn(FPA_ONE, inner));
#else  // CUDA's math library, written as PyTorch's GELU kernels write it: no twin, checked against a bound
#if FPA_EPILOGUE == FPA_EPILOGUE_GELU_ERF
    return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
#else
    return 0.5f * v * (1.0f + tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v)));
#endif
#endif
}

// conv_gelu's fused epilogue on one conv value: × the channel's multiplier, LeakyReLU, GELU (the identity
// for the other ops). Shared by the CUDA-core kernels so that each applies the same fp32 steps.
__device__ __forceinline__ float fpa_epilogue(float v, const float* __restrict__ mult, long long oc, float slope) {
#if FPA_EPILOGUE != FPA_EPILOGUE_NONE
    v = __fmul_rn(v, mult[oc]);
    v = v > 0.0f ? v : __fmul_rn(v, slope);
    v = fpa_gelu(v);
#endif
    return v;
}
