// conv2d on the CUDA cores with row tiles: each block owns GROUPS pixel groups of TPX consecutive output
// pixels × 64 output channels, and stages per input channel the KH input rows those pixels read (a "slab")
// and the channel's KH·KW weight rows in shared memory.
//
// The pixel groups are numbered along the output rows, units_per_row to a row: the launcher sets it to
// ceil(E1 / TPX), so that a block's groups run on into the next row (its slab then holds two row segments)
// and only the last group of a row computes pixels past its end; or, for rows narrower than a block, to
// GROUPS, one block per row. (Blocks aligned to rows would compute 512 pixels for every 496 of the seed's
// rows, E1 = 496 = 31 groups, and take 3 % more blocks.)
//
// A thread owns TPX (8 or 16) consecutive pixels × TOC (8 or 4) channels. For one (channel, kh) it loads a window
// of TPX + (KW − 1)·DW consecutive inputs into registers once, and every tap kw reads its 8 operands from
// that window at offset kw·DW: one 16-byte shared load per 4 inputs serves all KW taps, where the
// im2col kernel (conv_tiled.cu) loads and gathers every term of every tap. KW and DW are compile-time
// (FPA_ROWS_KW, FPA_ROWS_DW, from fpa_kernels.rows.rows_defines) so that the window stays in registers.
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

namespace {

constexpr int KW = FPA_ROWS_KW, DW = FPA_ROWS_DW;
constexpr int TPX = FPA_ROWS_TPX, TOC = FPA_ROWS_TOC;  // pixels (8, 16) × channels (8, 4) per thread
constexpr int GROUPS = FPA_ROWS_GROUPS;                 // pixel groups per block: 16 or 8
constexpr int PX = GROUPS * TPX, BN = FPA_ROWS_BN, CGROUPS = BN / TOC, THREADS = GROUPS * CGROUPS;
constexpr int WIN = (TPX + (KW - 1) * DW + 3) / 4 * 4;  // the register window, whole 16-byte loads
constexpr int REACH = WIN - TPX;                         // inputs a window reads past its own TPX
constexpr int SLAB = PX + 2 * REACH;                     // floats per staged row: two row segments at most
static_assert(TPX == 8 || TPX == 16, "FPA_ROWS_TPX must be 8 or 16");
static_assert(WIN <= TPX + FPA_ROWS_MAX_REACH, "the launcher sends wider windows to conv_tiled.cu");

__device__ __forceinline__ unsigned smem_address(const void* q) { return (unsigned)__cvta_generic_to_shared(q); }
__device__ __forceinline__ void copy16(float* smem, const float* gmem, int bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_address(smem)), "l"(gmem), "r"(bytes));
}
// A 16-byte shared-memory load at a shared-window address: addresses computed once per stage keep the
// loop from re-deriving the window base (S2UR SR_CgaCtaId and a ULEA, ≈ 2 % of its stall samples) per row.
__device__ __forceinline__ float4 load16(unsigned address) {
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(address));
    return v;
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
// The steps of one tap run in blocks of FPA_ROWS_IB pixels: for each block, channel by channel, pixel by
// pixel. Every accumulator still takes its terms in order; only the interleaving of the independent
// chains (and so ptxas's register use and schedule) changes.
static_assert(FPA_ROWS_TPX % FPA_ROWS_IB == 0, "FPA_ROWS_IB must divide FPA_ROWS_TPX");

// Dynamic shared memory: 2 stages × cc channels × (KH slab rows of SLAB floats + KH·KW weight rows of 64).
// units_per_row: pixel groups to an output row in the numbering of the blocks' groups (≥ GROUPS).
extern "C" __global__ void __launch_bounds__(THREADS, FPA_ROWS_MIN_BLOCKS) conv_rows(
    const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ bias,
    const float* __restrict__ mult, float* __restrict__ y, ConvParams p, int cc,
    int units_per_row) {
    extern __shared__ __align__(16) float smem[];
    const int t = threadIdx.x, tn = t % CGROUPS, pg = t / CGROUPS;
    const int KH = p.k0, taps = KH * KW;
    const int cg = (int)(p.c / p.groups), og = (int)(p.o / p.groups), K = cg * taps;
    // This block's groups: n1 of output row row0 (image · E0 + oh) from group g0 on, then the rest of
    // them at the start of row row0 + 1 (when there is one). Each row segment of the slab spans its
    // groups' pixels and the last one's reach: len1 floats, then up to len floats.
    const long long rows_total = p.n * p.e0;
    const long long u0 = (long long)blockIdx.x * GROUPS, row0 = u0 / units_per_row;
    const int g0 = (int)(u0 % units_per_row), n1 = min(GROUPS, units_per_row - g0);
    const bool two_rows = n1 < GROUPS && row0 + 1 < rows_total;
    const int len1 = n1 * TPX + REACH, len = two_rows ? len1 + (GROUPS - n1) * TPX + REACH : len1;
    // This thread's group: its row, its first output pixel and where its window starts in a slab row.
    const bool in_second = pg >= n1;
    const long long my_row = row0 + in_second;
    const int ow_first = (in_second ? pg - n1 : g0 + pg) * TPX;
    const int win_at = in_second ? len1 + (pg - n1) * TPX : pg * TPX;
    const int n_tiles = (og + BN - 1) / BN;
    const int g = blockIdx.y / n_tiles, n0 = (blockIdx.y % n_tiles) * BN;
    const int a_floats = cc * KH * SLAB, stage_floats = a_floats + cc * taps * BN;

    // Stage s: input channels s·cc … of this group, their slab rows and their weight rows.
    // The segment of (channel c, kh) for output row (nb, oh) starts at input row oh·s0 + kh·l0 − p0, column
    // (first pixel) − p1; 16-byte pieces outside the input are zero-filled (the launcher guarantees each
    // piece is wholly in or out). Pieces past len are not staged: only threads without outputs read them.
    const long long row1 = row0 + 1;
    const float* x_seg0 = x + ((row0 / p.e0) * p.c + (long long)g * cg) * p.d0 * p.d1;
    const float* x_seg1 = x + ((row1 / p.e0) * p.c + (long long)g * cg) * p.d0 * p.d1;
    const long long h_seg0 = (row0 % p.e0) * p.s0 - p.p0, h_seg1 = (row1 % p.e0) * p.s0 - p.p0;
    const int col_seg0 = g0 * TPX - p.p1, col_seg1 = -len1 - p.p1;  // column of slab float f: col_seg + f
    const float* w_group = wt + (long long)g * K * og + n0;
    const int stages = (cg + cc - 1) / cc;
    const long long plane = p.d0 * p.d1;
    auto issue = [&](int s) {
        float* a = smem + (s & 1) * stage_floats;
        float* b = a + a_floats;
        const int c0 = s * cc, cn = min(cc, cg - c0);
        // A thread's pieces are the same (kh, float f) in every channel: their place is worked out once
        // and serves the stage's cn channels, one plane apart in the input and KH·SLAB floats in a stage.
        // (Worked out per piece, this index arithmetic drew ≈ 25 % of the stall samples on the seed; once
        // per stage, with the weights' single run, the seed went from 8.10 to 7.39 ms.)
        for (int e = t; e < KH * (SLAB / 4); e += THREADS) {
            const int kh = e / (SLAB / 4), f = e % (SLAB / 4) * 4;
            if (f >= len) continue;
            const bool second = f >= len1;
            const long long h = (second ? h_seg1 : h_seg0) + (long long)kh * p.l0;
            const int col = (second ? col_seg1 : col_seg0) + f;
            const bool inside = h >= 0 && h < p.d0 && col >= 0 && col < p.d1;
            const float* src = (second ? x_seg1 : x_seg0) + ((long long)c0 * p.d0 + h) * p.d1 + col;
            float* dst = a + kh * SLAB + f;
            for (int c = 0; c < cn; ++c, src += plane, dst += KH * SLAB)
                copy16(dst, inside ? src : x, inside ? 16 : 0);
        }
        const int b_rows = cn * taps;
        const float* w0 = w_group + (long long)c0 * taps * og;
        if (og == BN) {  // the stage's weight rows are one contiguous run of b_rows · BN floats
            for (int e = t; e < b_rows * (BN / 4); e += THREADS) copy16(b + 4 * e, w0 + 4 * e, 16);
        } else if ((og & 3) == 0) {  // weight rows 16-byte aligned: 4 channels per copy, zeros past the group's
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
    auto load_window = [&](float (&win)[WIN], unsigned a, int r) {
        const unsigned a_row = a + 4 * (r * SLAB + win_at);
#pragma unroll
        for (int q = 0; q < WIN / 4; ++q) {
            const float4 v = load16(a_row + 16 * q);
            win[4 * q] = fpa_operand(v.x), win[4 * q + 1] = fpa_operand(v.y);
            win[4 * q + 2] = fpa_operand(v.z), win[4 * q + 3] = fpa_operand(v.w);
        }
    };
    // ... and its KW taps, in order, each reading its operands from the window at kw·DW.
    auto row_taps = [&](const float (&win)[WIN], unsigned b, int r) {
        const unsigned b_rows = b + 4 * (r * KW * BN + tn * 4);
#pragma unroll
        for (int kw = 0; kw < KW; ++kw) {
            const float4 lo = load16(b_rows + 4 * kw * BN);
            const float4 hi = TOC == 8 ? load16(b_rows + 4 * (kw * BN + 32)) : lo;
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
        const unsigned a = smem_address(smem + (s & 1) * stage_floats), b = a + 4 * a_floats;
        const int rows = min(cc, cg - s * cc) * KH;
#pragma unroll 1
        for (int r = 0; r < rows; ++r) {
            float win[WIN];
            load_window(win, a, r);
            row_taps(win, b, r);
        }
    }

    // Four consecutive pixels of a channel leave as one 16-byte store where they are aligned (E1 and the
    // output a multiple of 4 floats): a warp's store then writes 32 pieces of 16 bytes instead of 32 floats
    // in 32 different sectors, a quarter of the store transactions.
    if (my_row >= rows_total) return;
    const long long E = p.e0 * p.e1, nb = my_row / p.e0, oh = my_row % p.e0;
    const bool vector = p.e1 % 4 == 0 && ((unsigned long long)y & 15) == 0;
#pragma unroll
    for (int j = 0; j < TOC; ++j) {
        const int n = n0 + column(tn, j);
        if (n >= og) continue;
        const long long oc = (long long)g * og + n;
        float* y_row = y + (nb * p.o + oc) * E + oh * p.e1;
#pragma unroll
        for (int i = 0; i < TPX; i += 4) {
            const int ow = ow_first + i;
            float v[4];
#pragma unroll
            for (int d = 0; d < 4; ++d) v[d] = fpa_epilogue(acc[i + d][j], mult, oc, p.negative_slope);
            if (vector && ow + 3 < p.e1) {
                *reinterpret_cast<float4*>(y_row + ow) = make_float4(v[0], v[1], v[2], v[3]);
            } else {
#pragma unroll
                for (int d = 0; d < 4; ++d)
                    if (ow + d < p.e1) y_row[ow + d] = v[d];
            }
        }
    }
}
