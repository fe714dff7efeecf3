// The shared-memory tiling of the tiled conv kernels (conv_tiled.cu on the CUDA cores; conv_mma_tiled.cu
// and conv_dmma_tiled.cu on the tensor cores): the implicit-GEMM layout, the term table, the loads of
// one K chunk and the chunk loop.
//
// GEMM rows are the output pixels (n, e0, e1, e2) of one group, columns that group's output channels,
// K its (input channel, k0, k1) terms, channel outermost (the kernel's third extent is 1 for every op
// these kernels take: conv2d, conv3d (k, k, 1)). A block owns BM pixels × BN channels; K is walked in
// chunks of BK terms, double-buffered in shared memory: the A tile (im2col of the zero-padded input,
// gathered on the fly) through registers — loads issued before the previous chunk's arithmetic and
// stored after it —, the B tile (weights) by 16-byte cp.async. (4-byte cp.async for the gather ran the
// seed in 11.6 ms in the CUDA-core and the tensor-core kernel alike: the copy, not the arithmetic, was
// the limit; experiments/PERF_NOTES.md has the versions.)
#pragma once
#include "conv_params.cuh"

namespace fpa_tile {

constexpr int BM = FPA_TILE_BM, BN = FPA_TILE_BN, BK = FPA_TILE_BK, STAGES = FPA_TILE_STAGES;

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

// The term table of one group, copied from global memory (fpa_kernels.general.term_table) into the
// block's dynamic shared memory: table[k] = offset of term k's input from the output pixel's corner,
// for k < K rounded up to BK (the entries past K are 0). In shared memory every thread reads the same
// four entries with one 16-byte load (from global memory the table measured the same, 11.6 ms on the
// seed, when the gather had other costs; it stays here because it costs a quarter of the instructions).
__device__ __forceinline__ void load_table(int* table, const int* __restrict__ global_table, int K) {
    const int padded = (K + BK - 1) / BK * BK;
    for (int k = threadIdx.x; k < padded; k += blockDim.x) table[k] = global_table[k];
    __syncthreads();
}

// Copies chunk after chunk of the block's A (input, im2col) and B (weights [group][K][channel]) tiles.
// The input is already zero-padded by the launcher (ConvParams then says padding 0), so every term of
// a real output lies inside it and the gather needs no bounds checks. With NT threads, thread t gathers
// A_PER terms of pixel m0 + t % BM (rows past the last pixel re-read the last pixel; their results are
// never stored), and makes B_PER 16-byte weight copies.
template <int NT>
struct Loader {
    static constexpr int A_PER = BM * BK / NT, B_PER = BK * BN / 4 / NT;
    static_assert(A_PER % 4 == 0 && B_PER >= 1, "NT must be 128 or 256");
    const float* x_corner;
    const float* w_group;
    const int* table;
    int K, og, n0, kk0;
    int b_kk[B_PER], b_n[B_PER], b_bytes[B_PER];

    __device__ Loader(const float* x, const float* wt, const int* table_, const ConvParams& p, long long m0, int g,
                      int n0_)
        : table(table_), n0(n0_) {
        const int cg = (int)(p.c / p.groups);
        og = (int)(p.o / p.groups);
        K = cg * p.k0 * p.k1;
        kk0 = (threadIdx.x / BM) * A_PER;
        const long long E = p.e0 * p.e1 * p.e2, m = min(m0 + threadIdx.x % BM, p.n * E - 1);
        const long long nb = m / E, z = m - nb * E;
        const long long z0 = z / (p.e1 * p.e2), z1 = (z / p.e2) % p.e1, z2 = z % p.e2;
        x_corner = x + ((nb * p.c + (long long)g * cg) * p.d0 * p.d1 * p.d2 + (z0 * p.s0 * p.d1 + z1 * p.s1) * p.d2 +
                        z2 * p.s2);
        w_group = wt + (long long)g * K * og;
#pragma unroll
        for (int j = 0; j < B_PER; ++j) {
            const int e = threadIdx.x + j * NT;
            b_kk[j] = e / (BN / 4);
            b_n[j] = (e % (BN / 4)) * 4;
            b_bytes[j] = 4 * max(0, min(4, og - n0 - b_n[j]));
        }
    }

    // The input at `offset` elements from the corner: one IMAD.WIDE.U32 for the address (with a pointer
    // plus a signed int, nvcc spent four instructions on each).
    __device__ __forceinline__ float at(int offset) const {
        const unsigned long long base = reinterpret_cast<unsigned long long>(x_corner);
        return __ldg(reinterpret_cast<const float*>(base + (unsigned long long)(unsigned)offset * 4ull));
    }

    // Gather chunk `chunk` of this thread's A column into registers (loads in flight on return); terms
    // past K are 0, so a tensor-core step over them adds exact zeros.
    __device__ __forceinline__ void fetch_a(int chunk, float (&v)[A_PER]) const {
        const int k0 = chunk * BK + kk0;
        const int4* offsets = reinterpret_cast<const int4*>(table + k0);  // 4 offsets per shared load
#pragma unroll
        for (int q = 0; q < A_PER / 4; ++q) {
            const int4 o = offsets[q];
            v[4 * q] = at(o.x);
            v[4 * q + 1] = at(o.y);
            v[4 * q + 2] = at(o.z);
            v[4 * q + 3] = at(o.w);
        }
        if (k0 + A_PER > K) {
#pragma unroll
            for (int kk = 0; kk < A_PER; ++kk)
                if (k0 + kk >= K) v[kk] = 0.0f;
        }
    }

    // Store the gathered terms into a (BK rows of a_ld floats).
    __device__ __forceinline__ void store_a(const float (&v)[A_PER], float* a, int a_ld) const {
#pragma unroll
        for (int kk = 0; kk < A_PER; ++kk) a[(kk0 + kk) * a_ld + threadIdx.x % BM] = v[kk];
    }

    // Copy chunk `chunk` of B into b (BK rows of b_ld floats) by cp.async (one commit group).
    __device__ __forceinline__ void copy_b(int chunk, float* b, int b_ld) const {
        const int k0 = chunk * BK, t = threadIdx.x;
        if ((og & 3) == 0) {  // rows of B are 16-byte aligned: 4 channels per copy
#pragma unroll
            for (int j = 0; j < B_PER; ++j) {
                const int k = k0 + b_kk[j], bytes = k < K ? b_bytes[j] : 0;
                copy16(b + b_kk[j] * b_ld + b_n[j], bytes ? w_group + (unsigned)(k * og + n0 + b_n[j]) : w_group, bytes);
            }
        } else {
#pragma unroll
            for (int j = 0; j < BK * BN / NT; ++j) {
                const int e = t + j * NT, kk = e / BN, n = e % BN;
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
template <int NT, class Compute>
__device__ __forceinline__ void run_chunks(const Loader<NT>& loader, float* As, int a_ld, float* Bs, int b_ld,
                                           Compute compute) {
    const int chunks = (loader.K + BK - 1) / BK;
    const int a_stage = BK * a_ld, b_stage = BK * b_ld;
    float v[Loader<NT>::A_PER];
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
