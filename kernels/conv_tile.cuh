// The shared-memory tiling of the tiled conv kernels (conv_tiled.cu on the CUDA cores, conv_mma_tiled.cu
// on the tensor cores): the implicit-GEMM layout, the term table and the cp.async copy of one K chunk.
//
// GEMM rows are the output pixels (n, e0, e1, e2) of one group, columns that group's output channels,
// K its (input channel, k0, k1) terms, channel outermost (the kernel's third extent is 1 for every op
// these kernels take: conv2d, conv3d (k, k, 1)). A block owns BM pixels × BN channels; K is walked in
// chunks of BK terms, double-buffered in shared memory: the A tile (im2col of the input, gathered on the
// fly, 0 in the padding) through registers — loads issued before the previous chunk's arithmetic and
// stored after it —, the B tile (weights) by cp.async. (4-byte cp.async for the gather ran at the same
// 11.6 ms on the seed for the CUDA-core and the tensor-core kernel: the copy, not the arithmetic, was
// the limit.)
#pragma once
#include "conv_params.cuh"

namespace fpa_tile {

constexpr int BM = 128, BN = 64, BK = 16, STAGES = 2, THREADS = 128;

__device__ __forceinline__ unsigned smem_address(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// cp.async of `bytes` (0 … size) from gmem, the rest of the `size` bytes zero-filled (PTX ISA, cp.async).
__device__ __forceinline__ void copy4(float* smem, const float* gmem, bool valid) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_address(smem)), "l"(gmem),
                 "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void copy16(float* smem, const float* gmem, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem)), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// The term table of one group, copied from global memory (fpa_kernels.launch.term_table) into the
// block's dynamic shared memory: table[k] = {input offset of term k from the pixel's corner,
// (k0·l0) | (k1·l1) << 16}. Shared, not global: the copy loop reads 16 entries per chunk, and from L1
// they were evicted by the streaming input and cost a trip to L2 before every copy.
__device__ __forceinline__ void load_table(int2* table, const int2* __restrict__ global_table, int K) {
    for (int k = threadIdx.x; k < K; k += blockDim.x) table[k] = global_table[k];
    __syncthreads();
}

// Copies chunk after chunk of the block's A (input, im2col) and B (weights [group][K][channel]) tiles.
// Thread t copies the A column of pixel m0 + t (its corner in the input is found once, here).
struct Loader {
    const float* x;
    const float* x_corner;
    const float* w_group;
    const int2* table;
    int q0, q1, d0, d1, K, og, n0;
    bool m_valid;

    __device__ Loader(const float* x_, const float* wt, const int2* table_, const ConvParams& p, long long m0, int g,
                      int n0_)
        : x(x_), x_corner(x_), table(table_), q0(0), q1(0), d0((int)p.d0), d1((int)p.d1), n0(n0_) {
        const int cg = (int)(p.c / p.groups);
        og = (int)(p.o / p.groups);
        K = cg * p.k0 * p.k1;
        const long long E = p.e0 * p.e1 * p.e2, m = m0 + threadIdx.x;
        const long long nb = m / E, z = m - nb * E;
        const long long z0 = z / (p.e1 * p.e2), z1 = (z / p.e2) % p.e1, z2 = z % p.e2;
        q0 = (int)(z0 * p.s0 - p.p0);
        q1 = (int)(z1 * p.s1 - p.p1);
        const long long q2 = z2 * p.s2 - p.p2;  // the kernel's third extent is 1: one depth per pixel
        m_valid = m < p.n * E && q2 >= 0 && q2 < p.d2;
        if (m_valid)
            x_corner = x + ((nb * p.c + (long long)g * cg) * p.d0 * p.d1 * p.d2 + ((long long)q0 * p.d1 + q1) * p.d2 + q2);
        w_group = wt + (long long)g * K * og;
    }

    // Gather chunk `chunk` of this thread's A column into registers (loads in flight on return).
    __device__ __forceinline__ void fetch_a(int chunk, float (&v)[BK]) const {
        const int k0 = chunk * BK;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            const int k = k0 + kk;
            const int2 e = table[min(k, K - 1)];
            const bool ok = m_valid && k < K && (unsigned)(q0 + (e.y & 0xffff)) < (unsigned)d0 &&
                            (unsigned)(q1 + (e.y >> 16)) < (unsigned)d1;
            v[kk] = ok ? __ldg(x_corner + e.x) : 0.0f;
        }
    }

    // Store the gathered column into a (BK rows of a_ld floats).
    __device__ __forceinline__ void store_a(const float (&v)[BK], float* a, int a_ld) const {
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) a[kk * a_ld + threadIdx.x] = v[kk];
    }

    // Copy chunk `chunk` of B into b (BK rows of b_ld floats) by cp.async (one commit group).
    __device__ __forceinline__ void copy_b(int chunk, float* b, int b_ld) const {
        const int k0 = chunk * BK, t = threadIdx.x;
        if ((og & 3) == 0) {  // rows of B are 16-byte aligned: 4 channels per copy
#pragma unroll
            for (int j = 0; j < BK * BN / 4 / THREADS; ++j) {
                const int e = t + j * THREADS, kk = e / (BN / 4), n = (e % (BN / 4)) * 4;
                const int bytes = k0 + kk < K ? 4 * max(0, min(4, og - n0 - n)) : 0;
                copy16(b + kk * b_ld + n, bytes ? w_group + (long long)(k0 + kk) * og + n0 + n : w_group, bytes);
            }
        } else {
#pragma unroll
            for (int j = 0; j < BK * BN / THREADS; ++j) {
                const int e = t + j * THREADS, kk = e / BN, n = e % BN;
                const bool ok = k0 + kk < K && n0 + n < og;
                copy4(b + kk * b_ld + n, ok ? w_group + (long long)(k0 + kk) * og + n0 + n : w_group, ok);
            }
        }
        commit();
    }
};

// The chunk loop both kernels run: chunk c is computed from stage c % 2 while chunk c + 1's input is in
// flight to registers and its weights to the other stage. One barrier per chunk: after it, chunk c is
// visible to all and nobody reads chunk c − 1's stage any more, so it may be overwritten.
template <class Compute>
__device__ __forceinline__ void run_chunks(const Loader& loader, float* As, int a_ld, float* Bs, int b_ld,
                                           Compute compute) {
    const int chunks = (loader.K + BK - 1) / BK;
    const int a_stage = BK * a_ld, b_stage = BK * b_ld;
    float v[BK];
    loader.fetch_a(0, v);
    loader.copy_b(0, Bs, b_ld);
    loader.store_a(v, As, a_ld);
    for (int c = 0; c < chunks; ++c) {
        const int cur = c & 1, nxt = cur ^ 1;
        wait<0>();
        __syncthreads();
        const bool more = c + 1 < chunks;
        if (more) {
            loader.fetch_a(c + 1, v);
            loader.copy_b(c + 1, Bs + nxt * b_stage, b_ld);
        }
        compute(cur, c);
        if (more) loader.store_a(v, As + nxt * a_stage, a_ld);
    }
}

}  // namespace fpa_tile
