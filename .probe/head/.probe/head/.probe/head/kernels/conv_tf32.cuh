// Shared by the tensor-core conv kernels (conv_mma.cu, conv_mma_tiled.cu, conv_wgmma.cu): the
// mma.sync.m16n8k8 TF32 step and the operand split of the tiled kernels.
#pragma once
#include "conv_params.cuh"

// d += a·b for one 16 × 8 × 8 TF32 step (PTX ISA, "Warp-level matrix multiply-accumulate instructions",
// m16n8k8 .tf32 fragments).
__device__ __forceinline__ void fpa_mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// The TF32 operand(s) of one fp32 value. SPLIT 3 (3xTF32): big = v truncated to TF32, so v − big is
// exact in fp32, and small = v − big rounded to TF32 (nearest even); SPLIT 1: big = v rounded to TF32
// (nearest even), small = 0.
template <int SPLIT>
__device__ __forceinline__ void fpa_split(float v, unsigned& big, unsigned& small) {
    if (SPLIT == 3) {
        big = __float_as_uint(v) & 0xffffe000u;
        small = __float_as_uint(fpa_tf32_rne(__fsub_rn(v, __uint_as_float(big))));
    } else {
        big = __float_as_uint(fpa_tf32_rne(v));
        small = 0u;
    }
}
