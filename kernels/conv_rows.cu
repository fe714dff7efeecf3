// conv2d on the CUDA cores with row tiles: each block owns GROUPS·TPX consecutive output pixels of one
// output row × 64 output channels, and stages per input channel the KH input row segments those pixels
// read (a "slab", GROUPS·TPX + (KW − 1)·DW floats each) and the channel's KH·KW weight rows in shared memory.
//
// A thread owns TPX (8 or 16) consecutive pixels × TOC (8 or 4) channels. For one (channel, kh) it loads a window
// of TPX + (KW − 1)·DW consecutive inputs into registers once, and every tap kw reads its 8 operands from
// that window at offset kw·DW: one 16-byte shared load per 4 inputs serves all KW taps, where the
// im2col kernel (conv_tiled.cu) loads and gathers every term of every tap. KW and DW are compile-time
// (FPA_ROWS_KW, FPA_ROWS_DW, set by fpa_kernels.launch) so that the window stays in registers.
//
// The order of the terms is conv_tiled.cu's: input channel outermost, then kh, then kw, each
// accumulator stepping from the bias through k = 0 … K−1 with fpa_step. So the result is bit for bit
// conv_tiled.cu's, the direct kernel's and the CPU twin's.
//
// Input: rows of p.d1 floats, a multiple of 4, with p.p1 (the padding before along W) a multiple of 4
// too, so that every 16-byte piece of a slab lies wholly inside or outside the input; the launcher
// makes a padded copy (ConvParams then says padding 0) when the caller's input is not so. Stride along W
// must be 1.
#include "conv_arith.cuh"

#if FPA_ORDER != FPA_ORDER_SEQUENTIAL
#error "conv_rows.cu implements the sequential order only"
#endif
#if !defined(FPA_ROWS_KW) || !defined(FPA_ROWS_DW) || !defined(FPA_ROWS_TPX) || !defined(FPA_ROWS_TOC) || \
    !defined(FPA_ROWS_GROUPS)
#error "FPA_ROWS_KW, _DW, _TPX, _TOC and _GROUPS must be defined by the launcher (fpa_kernels.rows)"
#endif

namespace {

constexpr int KW = FPA_ROWS_KW, DW = FPA_ROWS_DW;
constexpr int TPX = FPA_ROWS_TPX, TOC = FPA_ROWS_TOC;  // pixels (8, 16) × channels (8, 4) per thread
constexpr int GROUPS = FPA_ROWS_GROUPS;                 // pixel groups per block: 16 or 8
constexpr int PX = GROUPS * TPX, BN = 64, CGROUPS = BN / TOC, THREADS = GROUPS * CGROUPS;
constexpr int WIN = (TPX + (KW - 1) * DW + 3) / 4 * 4;  // the register window, whole 16-byte loads
constexpr int SLAB = PX - TPX + WIN;                     // floats per staged row: the last thread's window
static_assert(TPX == 8 || TPX == 16, "FPA_ROWS_TPX must be 8 or 16");
static_assert(WIN <= TPX + 40, "the launcher sends wider windows to conv_tiled.cu");

__device__ __forceinline__ unsigned smem_address(const void* q) { return (unsigned)__cvta_generic_to_shared(q); }
__device__ __forceinline__ void copy16(float* smem, const float* gmem, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem)), "l"(gmem), "r"(bytes));
}
__device__ __forceinline__ void copy4(float* smem, const float* gmem, int bytes) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_address(smem)), "l"(gmem), "r"(bytes));
}

// Column j of a thread's TOC: channels tn·4 … +3 (and 32 + tn·4 … +3 when TOC = 8), so that the 8 threads
// of a quarter warp read 8 distinct 16-byte words of a weight row (no bank conflict).
__device__ __forceinline__ int column(int tn, int j) { return (j / 4) * 32 + tn * 4 + j % 4; }
static_assert(TOC == 8 || TOC == 4, "FPA_ROWS_TOC must be 8 or 4");

}  // namespace

// FPA_ROWS_MIN_BLOCKS: blocks per SM the register cap aims at (set by the launcher, which sizes the
// stages to share the SM's shared memory among that many blocks).
#ifndef FPA_ROWS_MIN_BLOCKS
#error "FPA_ROWS_MIN_BLOCKS must be defined by the launcher (fpa_kernels.rows)"
#endif
// The steps of one tap run in blocks of FPA_ROWS_IB pixels: for each block, channel by channel, pixel by
// pixel. Every accumulator still takes its terms in order; only the interleaving of the independent
// chains (and so ptxas's register use and schedule) changes.
#ifndef FPA_ROWS_IB
#error "FPA_ROWS_IB must be defined by the launcher (fpa_kernels.rows)"
#endif
static_assert(FPA_ROWS_TPX % FPA_ROWS_IB == 0, "FPA_ROWS_IB must divide FPA_ROWS_TPX");

// Dynamic shared memory: 2 stages × cc channels × (KH slab rows of SLAB floats + KH·KW weight rows of 64).
extern "C" __global__ void __launch_bounds__(THREADS, FPA_ROWS_MIN_BLOCKS) conv_rows(
    const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ bias,
    const float* __restrict__ mult, float* __restrict__ y, ConvParams p, int cc) {
    extern __shared__ __align__(16) float smem[];
    const int t = threadIdx.x, tn = t % CGROUPS, pg = t / CGROUPS;
    const int KH = p.k0, taps = KH * KW;
    const int cg = (int)(p.c / p.groups), og = (int)(p.o / p.groups), K = cg * taps;
    const int tiles = (int)((p.e1 + PX - 1) / PX);
    const long long row = blockIdx.x / tiles;  // (image, output row)
    const int ow0 = (blockIdx.x % tiles) * PX;
    const long long nb = row / p.e0, oh = row % p.e0;
    const int n_tiles = (og + BN - 1) / BN;
    const int g = blockIdx.y / n_tiles, n0 = (blockIdx.y % n_tiles) * BN;
    const int a_floats = cc * KH * SLAB, stage_floats = a_floats + cc * taps * BN;

    // Stage s: input channels s·cc … of this group, their slab rows and their weight rows.
    // The slab of (channel c, kh) starts at input row oh·s0 + kh·l0 − p0, column ow0 − p1; 16-byte pieces
    // outside the input are zero-filled (the launcher guarantees each piece is wholly in or out).
    const float* x_group = x + (nb * p.c + (long long)g * cg) * p.d0 * p.d1;
    const long long h_first = oh * p.s0 - p.p0;
    const int col0 = ow0 - p.p1;
    const float* w_group = wt + (long long)g * K * og + n0;
    const int stages = (cg + cc - 1) / cc;
    auto issue = [&](int s) {
        float* a = smem + (s & 1) * stage_floats;
        float* b = a + a_floats;
        const int c0 = s * cc, cn = min(cc, cg - c0);
        const int a_copies = cn * KH * (SLAB / 4);
        for (int e = t; e < a_copies; e += THREADS) {
            const int r = e / (SLAB / 4), q = e % (SLAB / 4), c = r / KH, kh = r % KH;
            const long long h = h_first + (long long)kh * p.l0;
            const int col = col0 + q * 4;
            const bool inside = h >= 0 && h < p.d0 && col >= 0 && col < p.d1;
            const float* src = x_group + ((long long)(c0 + c) * p.d0 + h) * p.d1 + col;
            copy16(a + r * SLAB + q * 4, inside ? src : x, inside ? 16 : 0);
        }
        const int b_rows = cn * taps;
        const float* w0 = w_group + (long long)c0 * taps * og;
        if ((og & 3) == 0) {  // weight rows 16-byte aligned: 4 channels per copy, zeros past the group's
            for (int e = t; e < b_rows * (BN / 4); e += THREADS) {
                const int k = e / (BN / 4), n = (e % (BN / 4)) * 4;
                const int bytes = 4 * max(0, min(4, og - n0 - n));
                copy16(b + k * BN + n, bytes ? w0 + (long long)k * og + n : w0, bytes);
            }
        } else {
            for (int e = t; e < b_rows * BN; e += THREADS) {
                const int k = e / BN, n = e % BN;
                const bool ok = n0 + n < og;
                copy4(b + k * BN + n, ok ? w0 + (long long)k * og + n : w0, ok ? 4 : 0);
            }
        }
        asm volatile("cp.async.commit_group;\n" ::);
    };

    float acc[TPX][TOC];
#pragma unroll
    for (int j = 0; j < TOC; ++j) {
        const int n = n0 + column(tn, j);
        const float init = (p.has_bias && n < og) ? bias[g * og + n] : 0.0f;
#pragma unroll
        for (int i = 0; i < TPX; ++i) acc[i][j] = init;
    }

    // Row r = c·KH + kh of a stage (input channel c, kernel row kh): its window, loaded once ...
    auto load_window = [&](float (&win)[WIN], const float* a, int r) {
        const float* a_row = a + r * SLAB + pg * TPX;
#pragma unroll
        for (int q = 0; q < WIN / 4; ++q) {
            const float4 v = *reinterpret_cast<const float4*>(a_row + q * 4);
            win[4 * q] = fpa_operand(v.x), win[4 * q + 1] = fpa_operand(v.y);
            win[4 * q + 2] = fpa_operand(v.z), win[4 * q + 3] = fpa_operand(v.w);
        }
    };
    // ... and its KW taps, in order, each reading its operands from the window at kw·DW.
    auto row_taps = [&](const float (&win)[WIN], const float* b, int r) {
        const float* b_rows = b + r * KW * BN;
#pragma unroll
        for (int kw = 0; kw < KW; ++kw) {
            const float4 lo = *reinterpret_cast<const float4*>(b_rows + kw * BN + tn * 4);
            const float4 hi = TOC == 8 ? *reinterpret_cast<const float4*>(b_rows + kw * BN + 32 + tn * 4) : lo;
            const float wv[8] = {fpa_operand(lo.x), fpa_operand(lo.y), fpa_operand(lo.z), fpa_operand(lo.w),
                                 fpa_operand(hi.x), fpa_operand(hi.y), fpa_operand(hi.z), fpa_operand(hi.w)};
#pragma unroll
            for (int i0 = 0; i0 < TPX; i0 += FPA_ROWS_IB)
#pragma unroll
                for (int j = 0; j < TOC; ++j)
#pragma unroll
                    for (int i = i0; i < i0 + FPA_ROWS_IB; ++i)
                        acc[i][j] = fpa_step(acc[i][j], wv[j], win[i + kw * DW]);
        }
    };

    // Stage s + 1 is in flight while stage s is computed; after the barrier nobody reads stage s − 1.
    issue(0);
    for (int s = 0; s < stages; ++s) {
        asm volatile("cp.async.wait_group 0;\n" ::);
        __syncthreads();
        if (s + 1 < stages) issue(s + 1);
        const float* a = smem + (s & 1) * stage_floats;
        const float* b = a + a_floats;
        const int rows = min(cc, cg - s * cc) * KH;
#pragma unroll 1
        for (int r = 0; r < rows; ++r) {
            float win[WIN];
            load_window(win, a, r);
            row_taps(win, b, r);
        }
    }

    const long long E = p.e0 * p.e1;
#pragma unroll
    for (int i = 0; i < TPX; ++i) {
        const int ow = ow0 + pg * TPX + i;
        if (ow >= p.e1) continue;
#pragma unroll
        for (int j = 0; j < TOC; ++j) {
            const int n = n0 + column(tn, j);
            if (n >= og) continue;
            const long long oc = (long long)g * og + n;
            y[(nb * p.o + oc) * E + oh * p.e1 + ow] = fpa_epilogue(acc[i][j], mult, oc, p.negative_slope);
        }
    }
}
