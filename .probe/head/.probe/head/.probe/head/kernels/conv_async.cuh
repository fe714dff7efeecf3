// For the kernels whose shared-memory stages are filled by the bulk copy engine (conv_wgmma.cu): mbarriers
// and cp.async.bulk (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier",
// "Data Movement and Conversion Instructions: cp.async.bulk").
#pragma once

__device__ __forceinline__ unsigned smem_u32(const void* q) { return (unsigned)__cvta_generic_to_shared(q); }

__device__ __forceinline__ void bar_init(unsigned long long* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}
__device__ __forceinline__ void bar_expect(unsigned long long* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ void bar_arrive(unsigned long long* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// Wait until the phase with parity `parity` of `bar` has completed. A wait of more than 10 s can only be
// a broken pipeline: trap, so that the launch fails with an error instead of hanging the GPU.
__device__ __forceinline__ bool bar_try_wait(unsigned long long* bar, unsigned parity) {
    unsigned done;
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_u32(bar)), "r"(parity)
        : "memory");
    return done != 0;
}
__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ void bar_wait(unsigned long long* bar, unsigned parity) {
    if (bar_try_wait(bar, parity)) return;
    const unsigned long long start = global_ns();
    while (!bar_try_wait(bar, parity))
        if (global_ns() - start > 10000000000ull) __trap();
}
__device__ __forceinline__ void bulk_copy(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(smem_u32(bar))
                 : "memory");
}
// After initialising mbarriers: make the inits visible to the copy engine (then a __syncthreads).
__device__ __forceinline__ void bars_initialised() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
