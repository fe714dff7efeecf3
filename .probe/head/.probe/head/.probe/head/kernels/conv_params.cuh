// Shared by the conv kernels: the parameter block (its layout is mirrored by fpa_kernels.params) and
// the fp32 → TF32 roundings done on the bit pattern, exactly as fp_analysis.rounding.round_to does.
#pragma once
// The define codes, the tile geometry, the GELU tables and a guard for each define this source must be given:
// written for each build by fpa_kernels.build from fpa_kernels.variants, .geometry and .registry.
#include "fpa_generated.cuh"

struct ConvParams {
    long long n, c, d0, d1, d2;  // input: batch, channels, spatial extents (conv2d: d2 = 1)
    long long o, e0, e1, e2;     // output: channels, spatial extents
    int k0, k1, k2;              // kernel extents
    int s0, s1, s2;              // stride
    int p0, p1, p2;              // padding before (the after-padding only shapes the output)
    int l0, l1, l2;              // dilation
    int groups;
    int has_bias;
    float negative_slope;        // conv_gelu's LeakyReLU slope
};

// TF32, nearest even: add half a quantum less one, plus the kept last bit, then clear the 13 low bits.
__device__ __forceinline__ float fpa_tf32_rne(float v) {
    unsigned b = __float_as_uint(v);
    if ((b & 0x7fffffffu) > 0x7f800000u) return v;  // NaN keeps its payload
    b += 0xfffu + ((b >> 13) & 1u);
    return __uint_as_float(b & 0xffffe000u);
}

// TF32 by truncation.
__device__ __forceinline__ float fpa_tf32_rz(float v) {
    unsigned b = __float_as_uint(v);
    if ((b & 0x7fffffffu) > 0x7f800000u) return v;
    return __uint_as_float(b & 0xffffe000u);
}
