// conv2d on the CUDA cores for convs with few terms per output (K = channels · KH · KW ≤ FPA_LANES_MAX_K), which
// are bound by writing their output, not by arithmetic: conv3d (k, k, 1) through its 2-d view (fpa_kernels.rows
// .rows_view: K = 27 on the preset, 2.6 GB written). conv_rows.cu gives such a conv a thread of 8 consecutive
// pixels × 8 channels, 168 registers (12 warps an SM, spills) and stores 16-byte pieces of 8 channels 64 bytes apart.
// Here every lane of a warp owns pixels lane, lane + 32, … (TPX of them, 32 apart) of the same TOC channels, so
// that one store instruction of a warp writes 32 consecutive floats of one channel (a whole 128-byte line), a
// thread holds TPX · TOC accumulators and no window (64 registers: 32 warps an SM), and a block stages its weights
// once for all the units of work it takes (persistent blocks) and each unit's whole input at once (K is small), with
// no pipeline to hold registers for: the other blocks of the SM compute while one stages.
//
// A unit of work is PX = 32·TPX consecutive output pixels of one output row (units do not run on into the next
// row: a row's last unit computes up to PX − 1 pixels past its end, which are not stored) × BN = 64 output channels,
// warp w channels w·TOC … w·TOC + TOC − 1. Shared memory holds the rows (channel c, kernel row kh) of the input
// that the block's pixels read, SLAB = PX + (KW − 1)·DW floats each, zero where they fall in the padding, and the
// block's K × 64 weights. A lane's operand of tap kw for its pixel i is row[lane + 32·i + kw·DW]: consecutive
// lanes read consecutive words (no bank conflict); the weights of a tap are the same for the whole warp (one
// broadcast 16-byte load per 4 channels).
//
// The order of the terms is conv_tiled.cu's and conv_rows.cu's: each accumulator steps from the bias through
// k = (c·KH + kh)·KW + kw = 0 … K−1 with fpa_step, so the result is bit for bit theirs and the CPU twin's.
// Stride along W must be 1; any stride, padding and dilation along H, any padding and dilation along W, groups.
#include "conv_arith.cuh"

#if FPA_ORDER != FPA_ORDER_SEQUENTIAL
#error "conv_lanes.cu implements the sequential order only"
#endif

namespace {

constexpr int KW = FPA_LANES_KW, DW = FPA_LANES_DW;    // compile-time: a row's taps and their offsets
constexpr int TPX = FPA_LANES_TPX, TOC = FPA_LANES_TOC;  // pixels (32 apart) × channels per thread
constexpr int BN = FPA_ROWS_BN, WARPS = BN / TOC, THREADS = 32 * WARPS, PX = 32 * TPX;
constexpr int SLAB = (PX + (KW - 1) * DW + 3) / 4 * 4;  // floats per staged input row: the weights after them
                                                       // start 16-byte aligned (their float4 loads)
static_assert(FPA_LANES_MAX_K >= 1, "the rows' tables hold FPA_LANES_MAX_K rows");
// The taps of a row one at a time: unrolled, ptxas loads the next taps' operands early and spills at the 64-register
// cap (44 bytes with 4 blocks per SM, nvcc 13.0); FPA_LANES_UNROLL_KW = 1 unrolls them (experiments/tile_probe.py).
#ifndef FPA_LANES_UNROLL_KW
#define FPA_LANES_UNROLL_KW 0
#endif
constexpr int KW_UNROLL = FPA_LANES_UNROLL_KW ? KW : 1;
static_assert(TOC % 4 == 0 && BN % TOC == 0, "FPA_LANES_TOC must be a multiple of 4 that divides 64");

}  // namespace

// FPA_LANES_MIN_BLOCKS: blocks per SM the register cap aims at (the launcher's shared memory per block is small).
// Dynamic shared memory: 4 · (cg · KH · SLAB + K · BN) bytes. The blocks are persistent: blockIdx.x takes units
// (an output row's PX pixels) blockIdx.x, + gridDim.x, … < units, so that its weights are staged once for all of
// them; units_per_row = ceil(E1 / PX).
extern "C" __global__ void __launch_bounds__(THREADS, FPA_LANES_MIN_BLOCKS) conv_lanes(
    const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ bias,
    const float* __restrict__ mult, float* __restrict__ y, ConvParams p, int units_per_row, int units) {
    extern __shared__ __align__(16) float smem[];
    __shared__ long long row_at[FPA_LANES_MAX_K];  // input row r's offset in an image, less the unit's own
    __shared__ int row_h[FPA_LANES_MAX_K];         // and its kernel row's offset along H, kh·l0 − p0
    __shared__ float bias_s[BN];                   // each accumulator's start: its channel's bias, or 0
    const int t = threadIdx.x, lane = t % 32, warp = t / 32;
    const int KH = p.k0, cg = (int)(p.c / p.groups), og = (int)(p.o / p.groups);
    const int rows = cg * KH, K = rows * KW;
    const int n_tiles = (og + BN - 1) / BN;
    const int g = blockIdx.y / n_tiles, n0 = (blockIdx.y % n_tiles) * BN;
    float* a = smem;                // [rows][SLAB]
    float* b = smem + rows * SLAB;  // [K][BN]

    // Operands are staged rounded as the variant rounds them (fpa_operand: TF32 or none), once, not at each use.
    // The weights, [group][K][og] (as for conv_tiled.cu): the block's 64 channels of each term, zero past og.
    const float* w_group = wt + (long long)g * K * og + n0;
    for (int e = t; e < K * BN; e += THREADS) {
        const int k = e / BN, n = e % BN;
        b[e] = n0 + n < og ? fpa_operand(w_group[(long long)k * og + n]) : 0.0f;
    }
    // Row r = c·KH + kh of a unit is input row oh·s0 + kh·l0 − p0 of channel g·cg + c.
    for (int r = t; r < rows; r += THREADS) {
        const int c = r / KH, kh = r % KH;
        row_h[r] = kh * p.l0 - p.p0;
        row_at[r] = ((long long)g * cg + c) * p.d0 * p.d1;
    }
    for (int n = t; n < BN; n += THREADS) bias_s[n] = (p.has_bias && n0 + n < og) ? bias[g * og + n0 + n] : 0.0f;
    const long long E = p.e0 * p.e1;
    // The store's channels: this warp's first channel in the output, and how many of its TOC are the group's.
    const int oc0 = g * og + n0 + warp * TOC, channels = og - n0 - warp * TOC;

    // (The launcher keeps units, and so the output rows N·E0, below 2^31: ints, which hold half the registers.)
    for (int u = blockIdx.x; u < units; u += gridDim.x) {
        const int row = u / units_per_row;  // output row: image · E0 + oh
        const int ow0 = (u - row * units_per_row) * PX;
        const int nb = row / (int)p.e0, oh = row - nb * (int)p.e0;
        const float* x_image = x + (long long)nb * p.c * p.d0 * p.d1;
        // where the unit's outputs go: this lane's first pixel of channel 0, and how many of its pixels are in the row
        float* const y_unit = y + (long long)nb * p.o * E + (long long)oh * p.e1 + ow0 + lane;
        const int left = (int)p.e1 - ow0 - lane;
        __syncthreads();  // the last unit's reads of its rows are done (and, the first time, the tables are made)
        // this thread's first staged float: row t / SLAB, float t % SLAB; then THREADS floats at a time
        for (int r = t / SLAB, f = t % SLAB; r < rows;) {
            const long long h = (long long)oh * p.s0 + row_h[r];
            const long long col = (long long)ow0 + f - p.p1;
            const bool inside = h >= 0 && h < p.d0 && col >= 0 && col < p.d1;
            a[r * SLAB + f] = inside ? fpa_operand(x_image[row_at[r] + h * p.d1 + col]) : 0.0f;
            for (f += THREADS; f >= SLAB; f -= SLAB) ++r;
        }
        __syncthreads();

        float acc[TPX][TOC];
#pragma unroll
        for (int j = 0; j < TOC; ++j)
#pragma unroll
            for (int i = 0; i < TPX; ++i) acc[i][j] = bias_s[warp * TOC + j];
#pragma unroll 1
        for (int r = 0; r < rows; ++r) {
            const float* a_row = a + r * SLAB + lane;
            const float* b_row = b + r * KW * BN + warp * TOC;
#pragma unroll KW_UNROLL
            for (int kw = 0; kw < KW; ++kw) {
                float wv[TOC];
#pragma unroll
                for (int q = 0; q < TOC / 4; ++q) {
                    const float4 v = *reinterpret_cast<const float4*>(b_row + kw * BN + 4 * q);
                    wv[4 * q] = v.x, wv[4 * q + 1] = v.y, wv[4 * q + 2] = v.z, wv[4 * q + 3] = v.w;
                }
#pragma unroll
                for (int i = 0; i < TPX; ++i) {
                    const float xv = a_row[32 * i + kw * DW];
#pragma unroll
                    for (int j = 0; j < TOC; ++j) acc[i][j] = fpa_step(acc[i][j], wv[j], xv);
                }
            }
        }

        // A warp's store writes 32 consecutive pixels of one channel: 128 bytes, one line.
#pragma unroll
        for (int j = 0; j < TOC; ++j) {
            if (j >= channels) break;
            const int oc = oc0 + j;
#pragma unroll
            for (int i = 0; i < TPX; ++i)
                if (32 * i < left) y_unit[oc * E + 32 * i] = fpa_epilogue(acc[i][j], mult, oc, p.negative_slope);
        }
    }
}
