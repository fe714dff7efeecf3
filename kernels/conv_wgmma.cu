// conv2d (stride 1 along W, one group) on Hopper's warpgroup tensor-core instructions: TF32 and 3xTF32.
//
// The GEMM is transposed against the other tiled kernels: M = 64 output channels (the weights are the
// wgmma A operand), N = 128 output pixels per warpgroup, K = one tap's CK input channels at a time
// (PTX ISA 8.x, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate": wgmma.mma_async
// .m64n128k8.f32.tf32.tf32, both operands K-major in shared memory, no swizzle). With stride 1 the CK
// channels of 128 consecutive pixels at tap (kh, kw) are rows kw·DW … kw·DW + 127 of the input row
// segment ("slab") staged for kh: one slab in shared memory serves all KW taps by moving the
// descriptor's start address, so there is no im2col gather at all.
//
// Layouts (all written by this file's two prep kernels, so every copy is one contiguous run):
//   input  [N][Hp][plane][Gp][Wp][4]: zero-padded, channels in groups of 4 (Gp = C rounded up to CK, / 4)
//   weight [n_tile][chunk][kh][kw][plane][CK/4][64][4]
// where plane 0 is "big" and plane 1 "small" (3xTF32 only). In shared memory a slab is
// [plane][CK/4][SLABW][4] and a tap's weights [plane][CK/4][64][4]: the canonical K-major no-swizzle
// layout ((8,m),(4,2k)):((4,SBO),(1,LBO)) with core matrices of 8 rows × 16 bytes, SBO = 128 bytes and
// LBO = one 4-channel group's plane (PTX ISA, "Shared Memory Matrix Layout", canonical layouts).
//
// A block: 256 pixels of one output row × 64 channels; warp 8 is the producer (one thread issues
// cp.async.bulk copies that complete on mbarriers: 2 slab stages, 4 tap stages), warps 0–7 are two
// consumer warpgroups of 128 pixels each.
//
// FPA_TC_SPLIT 1 (TF32, cuDNN's TF32 mode): operands rounded to TF32 (nearest), the whole K summed in
// the tensor cores' accumulator. FPA_TC_SPLIT 3 (3xTF32, Ootomo & Yokota 2022, IJHPCA 36(4)): the
// split of conv_tf32.cuh's fpa_split; small·big + big·small + big·big for each tap's CK channels
// summed from zero in the tensor cores, then added to an IEEE fp32 accumulator with __fadd_rn (their
// internal additions truncate: Fasi et al. 2021, PeerJ CS 7:e330). Each term meets at most 3·CK
// tensor-core additions and K/CK fp32 ones, inside fp_analysis.bounds.tensor_core_bound's 3K + 1.
#include "conv_async.cuh"
#include "conv_tf32.cuh"


namespace {

constexpr int PLANES = FPA_TC_SPLIT == 3 ? 2 : 1;
constexpr int CK = FPA_WG_CK, GK = CK / 4;  // channels per K step and their groups of 4
static_assert(CK == 8 || CK == 16 || CK == 32, "FPA_WG_CK must be 8, 16 or 32");
constexpr int PX = FPA_WG_PX, WG_PX = PX / 2, BN = FPA_WG_BN;
constexpr int CONSUMERS = 256, THREADS = CONSUMERS + 32;
constexpr int A_STAGES = FPA_WG_A_STAGES, B_STAGES = FPA_WG_B_STAGES;
constexpr unsigned TAP_BYTES = PLANES * GK * BN * 16;

// --- wgmma ---
// Shared-memory matrix descriptor: start address, leading (K-direction core-matrix) byte offset, stride
// (M/N-direction) byte offset 128, no swizzle; addresses and offsets in units of 16 bytes.
__device__ __forceinline__ unsigned long long descriptor(unsigned address, unsigned lbo) {
    return (unsigned long long)((address & 0x3ffff) >> 4) | (unsigned long long)((lbo >> 4) & 0x3fff) << 16 |
           (unsigned long long)(128 >> 4) << 32;
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wg_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// d (+)= A·B for a 64 × 128 × 8 step: A (weights) and B (pixels) from shared memory; scale_d 0 starts
// from zero.
__device__ __forceinline__ void wgmma_step(float (&d)[64], unsigned long long a, unsigned long long b, int scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, "
        "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, "
        "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "%64, %65, p, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(a), "l"(b), "r"(scale_d));
}

// The geometry every part of the kernel derives from ConvParams (the launcher sets p.d0 = Hp, p.d1 = Wp).
struct Geometry {
    int chunks, gp, slabw, tiles;
    unsigned slab_bytes;
    __device__ Geometry(const ConvParams& p) {
        chunks = (int)((p.c + CK - 1) / CK);
        gp = chunks * GK;
        slabw = PX + (p.k1 - 1) * p.l1;
        tiles = (int)((p.e1 + PX - 1) / PX);
        slab_bytes = (unsigned)(PLANES * GK * slabw * 16);
    }
};

}  // namespace

// y[n][o][oh][ow] for one block: see the file comment. Dynamic shared memory: A_STAGES slabs then
// B_STAGES taps; the launcher's size is checked against what this geometry needs.
extern "C" __global__ void __launch_bounds__(THREADS, 1) conv_wgmma(
    const float* __restrict__ xs, const float* __restrict__ ws, const float* __restrict__ bias,
    float* __restrict__ y, ConvParams p) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ __align__(8) unsigned long long full_a[A_STAGES], empty_a[A_STAGES], full_b[B_STAGES],
        empty_b[B_STAGES];

    const Geometry geo(p);
    const int KH = p.k0, KW = p.k1;
    const long long row = blockIdx.x / geo.tiles;
    const int ow0 = (blockIdx.x % geo.tiles) * PX;
    const long long nb = row / p.e0, oh = row % p.e0;
    const int n_tile = blockIdx.y, n0 = n_tile * BN;
    unsigned char* slabs = smem;
    unsigned char* taps = smem + A_STAGES * geo.slab_bytes;

    if (threadIdx.x == 0) {
        unsigned dynamic_bytes;
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamic_bytes));
        if (dynamic_bytes < A_STAGES * geo.slab_bytes + B_STAGES * TAP_BYTES) __trap();  // launcher bug
        for (int s = 0; s < A_STAGES; ++s) bar_init(&full_a[s], 1), bar_init(&empty_a[s], CONSUMERS);
        for (int s = 0; s < B_STAGES; ++s) bar_init(&full_b[s], 1), bar_init(&empty_b[s], CONSUMERS);
        bars_initialised();
    }
    __syncthreads();

    const int warp = threadIdx.x / 32;
    if (warp == CONSUMERS / 32) {  // the producer
        if (threadIdx.x % 32 != 0) return;
        int ia = 0, ib = 0;
        for (int chunk = 0; chunk < geo.chunks; ++chunk)
            for (int kh = 0; kh < KH; ++kh, ++ia) {
                const int sa = ia % A_STAGES;
                bar_wait(&empty_a[sa], ((ia / A_STAGES) & 1) ^ 1);
                bar_expect(&full_a[sa], geo.slab_bytes);
                const long long h = oh * p.s0 + (long long)kh * p.l0;
                for (int plane = 0; plane < PLANES; ++plane)
                    for (int g = 0; g < GK; ++g) {
                        const long long run = ((nb * p.d0 + h) * PLANES + plane) * geo.gp + chunk * GK + g;
                        bulk_copy(slabs + sa * geo.slab_bytes + (plane * GK + g) * geo.slabw * 16,
                                  xs + (run * p.d1 + ow0) * 4, geo.slabw * 16, &full_a[sa]);
                    }
                for (int kw = 0; kw < KW; ++kw, ++ib) {
                    const int sb = ib % B_STAGES;
                    bar_wait(&empty_b[sb], ((ib / B_STAGES) & 1) ^ 1);
                    bar_expect(&full_b[sb], TAP_BYTES);
                    const long long tap = ((long long)(n_tile * geo.chunks + chunk) * KH + kh) * KW + kw;
                    bulk_copy(taps + sb * TAP_BYTES, ws + tap * (TAP_BYTES / 4), TAP_BYTES, &full_b[sb]);
                }
            }
        return;
    }

    // A consumer warpgroup: 64 channels × 128 pixels, 64 accumulators per thread.
    const int wg = warp / 4;
    float acc[64];
#pragma unroll
    for (int r = 0; r < 64; ++r) acc[r] = 0.0f;
#if FPA_TC_SPLIT == 3
    float part[64];
#endif
    const unsigned slab_lbo = geo.slabw * 16, tap_lbo = BN * 16;
    int ia = 0, ib = 0;
    for (int chunk = 0; chunk < geo.chunks; ++chunk)
        for (int kh = 0; kh < KH; ++kh, ++ia) {
            const int sa = ia % A_STAGES;
            bar_wait(&full_a[sa], (ia / A_STAGES) & 1);
            const unsigned slab = smem_u32(slabs + sa * geo.slab_bytes);
            for (int kw = 0; kw < KW; ++kw, ++ib) {
                const int sb = ib % B_STAGES;
                bar_wait(&full_b[sb], (ib / B_STAGES) & 1);
                const unsigned tap = smem_u32(taps + sb * TAP_BYTES);
                const unsigned pixels = slab + (wg * WG_PX + kw * p.l1) * 16;
                wg_fence();
#pragma unroll
                for (int ks = 0; ks < CK / 8; ++ks) {
                    // K step ks: channel groups 2ks and 2ks + 1 of each plane.
                    const unsigned long long w_big = descriptor(tap + 2 * ks * tap_lbo, tap_lbo);
                    const unsigned long long x_big = descriptor(pixels + 2 * ks * slab_lbo, slab_lbo);
#if FPA_TC_SPLIT == 3
                    const unsigned long long w_small = descriptor(tap + (GK + 2 * ks) * tap_lbo, tap_lbo);
                    const unsigned long long x_small = descriptor(pixels + (GK + 2 * ks) * slab_lbo, slab_lbo);
                    wgmma_step(part, w_small, x_big, ks != 0);
                    wgmma_step(part, w_big, x_small, 1);
                    wgmma_step(part, w_big, x_big, 1);
#else
                    wgmma_step(acc, w_big, x_big, 1);
#endif
                }
                wg_commit();
                wg_wait<0>();
#if FPA_TC_SPLIT == 3
#pragma unroll
                for (int r = 0; r < 64; ++r) acc[r] = __fadd_rn(acc[r], part[r]);
#endif
                bar_arrive(&empty_b[sb]);  // this thread's wgmma reads of the tap are done
            }
            bar_arrive(&empty_a[sa]);
        }

    // Accumulator fragment of wgmma m64nNk8 .f32 (PTX ISA, "Matrix fragments for wgmma", accumulator D):
    // warp w of the warpgroup holds rows 16w …; register 4j + 2h + e is row gid + 8h, column 8j + 2·tig + e.
    const int lane = threadIdx.x % 32, gid = lane / 4, tig = lane % 4, wr = warp % 4;
    const long long plane_out = p.e0 * p.e1;
#pragma unroll
    for (int j = 0; j < 16; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int oc = n0 + 16 * wr + gid + 8 * h, ow = ow0 + wg * WG_PX + 8 * j + 2 * tig + e;
                if (oc >= p.o || ow >= p.e1) continue;
                const float v = acc[4 * j + 2 * h + e];
                y[(nb * p.o + oc) * plane_out + oh * p.e1 + ow] = p.has_bias ? __fadd_rn(v, bias[oc]) : v;
            }
}

// The input in the layout above: out[n][hp][plane][g][wp][j] = split(x[n][4g + j][hp − p0][wp − p1]),
// zero outside the input and past its C channels. One thread per 4 channels of one padded pixel.
extern "C" __global__ void conv_wgmma_input(const float* __restrict__ x, float4* __restrict__ out, ConvParams p,
                                            long long hp, long long wp, int gp) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= p.n * hp * gp * wp) return;
    const long long w = i % wp, g = (i / wp) % gp, h = (i / (wp * gp)) % hp, nb = i / (wp * gp * hp);
    const long long hi = h - p.p0, wi = w - p.p1;
    float big[4], small[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const long long c = 4 * g + j;
        const bool inside = c < p.c && hi >= 0 && hi < p.d0 && wi >= 0 && wi < p.d1;
        unsigned b = 0u, s = 0u;
        if (inside) fpa_split<FPA_TC_SPLIT>(x[((nb * p.c + c) * p.d0 + hi) * p.d1 + wi], b, s);
        big[j] = __uint_as_float(b), small[j] = __uint_as_float(s);
    }
    const long long base = ((nb * hp + h) * PLANES * gp + g) * wp + w;  // plane 0
    out[base] = make_float4(big[0], big[1], big[2], big[3]);
    if (PLANES == 2) out[base + gp * wp] = make_float4(small[0], small[1], small[2], small[3]);
}

// The weights in the layout above: one thread per output float, zero past O and C.
extern "C" __global__ void conv_wgmma_weight(const float* __restrict__ w, float* __restrict__ out, ConvParams p,
                                             int n_tiles) {
    const int chunks = (int)((p.c + CK - 1) / CK), KH = p.k0, KW = p.k1;
    const long long total = (long long)n_tiles * chunks * KH * KW * PLANES * GK * BN * 4;
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    const int j = (int)(i % 4), oc_in = (int)((i / 4) % BN), g = (int)((i / (4 * BN)) % GK);
    long long rest = i / (4 * BN * GK);
    const int plane = (int)(rest % PLANES);
    rest /= PLANES;
    const int kw = (int)(rest % KW), kh = (int)((rest / KW) % KH), chunk = (int)((rest / (KW * KH)) % chunks);
    const int tile = (int)(rest / ((long long)KW * KH * chunks));
    const long long oc = (long long)tile * BN + oc_in, c = (long long)chunk * CK + 4 * g + j;
    unsigned b = 0u, s = 0u;
    if (oc < p.o && c < p.c) fpa_split<FPA_TC_SPLIT>(w[((oc * p.c + c) * KH + kh) * KW + kw], b, s);
    out[i] = __uint_as_float(plane == 0 ? b : s);
}
