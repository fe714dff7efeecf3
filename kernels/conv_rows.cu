// conv2d on the CUDA cores with row tiles: a tile is GROUPS·TPX consecutive output pixels of one output
// row × 64 output channels; for each input channel the kernel stages the KH input row segments the
// tile reads (a "slab", GROUPS·TPX + (KW − 1)·DW floats each) and the channel's KH·KW weight rows.
//
// A thread owns TPX (8 or 16) consecutive pixels × TOC (8 or 4) channels. For one (channel, kh) it loads
// a window of TPX + (KW − 1)·DW consecutive inputs into registers once, and every tap kw reads its TPX
// operands from that window at offset kw·DW: one 16-byte shared load per 4 inputs serves all KW taps,
// where the im2col kernel (conv_tiled.cu) loads and gathers every term of every tap. KW and DW are
// compile-time (FPA_ROWS_KW, FPA_ROWS_DW, set by fpa_kernels.rows) so that the window stays in registers.
//
// The order of the terms is conv_tiled.cu's: input channel outermost, then kh, then kw, each accumulator
// stepping from the bias through k = 0 … K−1 with fpa_step. So the result is bit for bit conv_tiled.cu's,
// the direct kernel's and the CPU twin's.
//
// Staging: a ring of STAGES shared-memory stages, each cc input channels' slab rows and weight rows,
// filled by the bulk copy engine and completed on mbarriers (conv_async.cuh). Thread 0 issues the copies
// STAGES − 1 stages ahead; it waits until every thread has released the stage it refills, and nobody
// else waits for anything but data, so the warps of a block may drift apart by up to STAGES − 1 stages
// (with __syncthreads after every stage, the barrier waits cost ≈ 5 % of the issue slots; PERF_NOTES.md).
// The grid is persistent: block b computes tiles b, b + gridDim.x, …, and the copies run on across tile
// boundaries, so a tile starts on data already staged.
//
// Input: rows of p.d1 floats, a multiple of 4, and p.p1 (the padding before along W) a multiple of 4, so
// that each slab row is one run of the input row plus zero runs (copied from `zeros`) outside it; the
// launcher makes a padded copy when the caller's input is not so. Stride along W must be 1. Weights:
// [group][64-channel tile][K][64], zero past the group's channels.
#include "conv_arith.cuh"
#include "conv_async.cuh"

#if FPA_ORDER != FPA_ORDER_SEQUENTIAL
#error "conv_rows.cu implements the sequential order only"
#endif
#if !defined(FPA_ROWS_KW) || !defined(FPA_ROWS_DW) || !defined(FPA_ROWS_TPX) || !defined(FPA_ROWS_TOC) || \
    !defined(FPA_ROWS_GROUPS) || !defined(FPA_ROWS_MIN_BLOCKS)
#error "FPA_ROWS_KW, _DW, _TPX, _TOC, _GROUPS and _MIN_BLOCKS must be defined by the launcher (fpa_kernels.rows)"
#endif

namespace {

constexpr int KW = FPA_ROWS_KW, DW = FPA_ROWS_DW;
constexpr int TPX = FPA_ROWS_TPX, TOC = FPA_ROWS_TOC;  // pixels (8, 16) × channels (8, 4) per thread
constexpr int GROUPS = FPA_ROWS_GROUPS;                 // pixel groups per tile: 16 or 8
constexpr int PX = GROUPS * TPX, BN = 64, CGROUPS = BN / TOC, THREADS = GROUPS * CGROUPS;
constexpr int STAGES = 3;
constexpr int WIN = (TPX + (KW - 1) * DW + 3) / 4 * 4;  // the register window, whole 16-byte loads
constexpr int SLAB = PX - TPX + WIN;                     // floats per staged row: the last thread's window
static_assert(TPX == 8 || TPX == 16, "FPA_ROWS_TPX must be 8 or 16");
static_assert(TOC == 8 || TOC == 4, "FPA_ROWS_TOC must be 8 or 4");
static_assert(WIN <= TPX + 40, "the launcher sends wider windows to conv_tiled.cu");

// Column j of a thread's TOC: channels tn·4 … +3 (and 32 + tn·4 … +3 when TOC = 8), so that the 8 threads
// of a quarter warp read 8 distinct 16-byte words of a weight row (no bank conflict).
__device__ __forceinline__ int column(int tn, int j) { return (j / 4) * 32 + tn * 4 + j % 4; }

// One output tile: image nb, output row oh, pixels ow0 …, group g, channels n0 … of the group.
struct Tile {
    long long nb, oh;
    int ow0, g, n0;
};

}  // namespace

// Dynamic shared memory: STAGES × cc channels × (KH slab rows of SLAB floats + KH·KW weight rows of 64).
extern "C" __global__ void __launch_bounds__(THREADS, FPA_ROWS_MIN_BLOCKS) conv_rows(
    const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ bias,
    const float* __restrict__ mult, float* __restrict__ y, const float* __restrict__ zeros, ConvParams p, int cc) {
    extern __shared__ __align__(128) float smem[];
    __shared__ __align__(8) unsigned long long full[STAGES], empty[STAGES];
    const int t = threadIdx.x, tn = t % CGROUPS, pg = t / CGROUPS;
    const int KH = p.k0, taps = KH * KW;
    const int cg = (int)(p.c / p.groups), og = (int)(p.o / p.groups), K = cg * taps;
    const int tiles_w = (int)((p.e1 + PX - 1) / PX), oc_tiles = (og + BN - 1) / BN;
    const long long tiles = p.n * p.e0 * tiles_w * p.groups * oc_tiles;
    const int stages = (cg + cc - 1) / cc;  // per tile
    const int stage_floats = cc * (KH * SLAB + taps * BN);

    auto tile_of = [&](long long T) {
        const int ty = (int)(T % (p.groups * oc_tiles));
        const long long rest = T / (p.groups * oc_tiles), row = rest / tiles_w;
        return Tile{row / p.e0, row % p.e0, (int)(rest % tiles_w) * PX, ty / oc_tiles, (ty % oc_tiles) * BN};
    };

    if (t == 0) {
        for (int s = 0; s < STAGES; ++s) bar_init(&full[s], 1), bar_init(&empty[s], THREADS);
        bars_initialised();
    }
    __syncthreads();

    // Thread 0: stage q of this block (tile q / stages of its list, channels (q % stages)·cc …) into ring
    // slot q % STAGES, once every thread has released what that slot held. Nothing past the last tile.
    auto issue = [&](long long q) {
        const long long T = blockIdx.x + (q / stages) * gridDim.x;
        if (T >= tiles) return;
        const Tile tile = tile_of(T);
        const int c0 = (int)(q % stages) * cc, cn = min(cc, cg - c0), slot = (int)(q % STAGES);
        bar_wait(&empty[slot], (unsigned)((q / STAGES) & 1) ^ 1u);
        float* a = smem + slot * stage_floats;
        float* b = a + cc * KH * SLAB;
        bar_expect(&full[slot], (unsigned)(cn * (KH * SLAB + taps * BN) * 4));
        const int col0 = tile.ow0 - p.p1, lo = max(col0, 0), hi = min(col0 + SLAB, (int)p.d1);
        for (int c = 0; c < cn; ++c)
            for (int kh = 0; kh < KH; ++kh) {
                float* dst = a + (c * KH + kh) * SLAB;
                const long long h = tile.oh * p.s0 + (long long)kh * p.l0 - p.p0;
                if (h < 0 || h >= p.d0 || hi <= lo) {
                    bulk_copy(dst, zeros, SLAB * 4, &full[slot]);
                    continue;
                }
                const long long channel = tile.nb * p.c + (long long)tile.g * cg + c0 + c;
                if (lo > col0) bulk_copy(dst, zeros, (lo - col0) * 4, &full[slot]);
                bulk_copy(dst + (lo - col0), x + (channel * p.d0 + h) * p.d1 + lo, (hi - lo) * 4, &full[slot]);
                if (col0 + SLAB > hi) bulk_copy(dst + (hi - col0), zeros, (col0 + SLAB - hi) * 4, &full[slot]);
            }
        const long long w_rows = ((long long)tile.g * oc_tiles + tile.n0 / BN) * K + (long long)c0 * taps;
        bulk_copy(b, wt + w_rows * BN, cn * taps * BN * 4, &full[slot]);
    };

    // Row r = c·KH + kh of a stage (input channel c, kernel row kh): its window, loaded once ...
    auto load_window = [&](float (&win)[WIN], const float* a, int r) {
        const float* a_row = a + r * SLAB + pg * TPX;
#pragma unroll
        for (int i = 0; i < WIN / 4; ++i) {
            const float4 v = *reinterpret_cast<const float4*>(a_row + i * 4);
            win[4 * i] = fpa_operand(v.x), win[4 * i + 1] = fpa_operand(v.y);
            win[4 * i + 2] = fpa_operand(v.z), win[4 * i + 3] = fpa_operand(v.w);
        }
    };

    if (t == 0)
        for (int q = 0; q < STAGES - 1; ++q) issue(q);
    long long q = 0;  // the next stage this block consumes
    for (long long T = blockIdx.x; T < tiles; T += gridDim.x) {
        const Tile tile = tile_of(T);
        float acc[TPX][TOC];
#pragma unroll
        for (int j = 0; j < TOC; ++j) {
            const int n = tile.n0 + column(tn, j);
            const float init = (p.has_bias && n < og) ? bias[tile.g * og + n] : 0.0f;
#pragma unroll
            for (int i = 0; i < TPX; ++i) acc[i][j] = init;
        }
        // ... and its KW taps, in order, each reading its operands from the window at kw·DW.
        auto row_taps = [&](const float (&win)[WIN], const float* b, int r) {
            const float* b_rows = b + r * KW * BN;
#pragma unroll
            for (int kw = 0; kw < KW; ++kw) {
                const float4 lo = *reinterpret_cast<const float4*>(b_rows + kw * BN + tn * 4);
                const float4 hi =
                    TOC == 8 ? *reinterpret_cast<const float4*>(b_rows + kw * BN + 32 + tn * 4) : lo;
                const float wv[8] = {fpa_operand(lo.x), fpa_operand(lo.y), fpa_operand(lo.z), fpa_operand(lo.w),
                                     fpa_operand(hi.x), fpa_operand(hi.y), fpa_operand(hi.z), fpa_operand(hi.w)};
#pragma unroll
                for (int i = 0; i < TPX; ++i)
#pragma unroll
                    for (int j = 0; j < TOC; ++j) acc[i][j] = fpa_step(acc[i][j], wv[j], win[i + kw * DW]);
            }
        };
        for (int s = 0; s < stages; ++s, ++q) {
            if (t == 0) issue(q + STAGES - 1);
            const int slot = (int)(q % STAGES);
            bar_wait(&full[slot], (unsigned)((q / STAGES) & 1));
            const float* a = smem + slot * stage_floats;
            const float* b = a + cc * KH * SLAB;
            const int rows = min(cc, cg - s * cc) * KH;
#pragma unroll 1
            for (int r = 0; r < rows; ++r) {
                float win[WIN];
                load_window(win, a, r);
                row_taps(win, b, r);
            }
            bar_arrive(&empty[slot]);  // this thread's reads of the stage are done
        }

        const long long E = p.e0 * p.e1;
#pragma unroll
        for (int i = 0; i < TPX; ++i) {
            const int ow = tile.ow0 + pg * TPX + i;
            if (ow >= p.e1) continue;
#pragma unroll
            for (int j = 0; j < TOC; ++j) {
                const int n = tile.n0 + column(tn, j);
                if (n >= og) continue;
                const long long oc = (long long)tile.g * og + n;
                y[(tile.nb * p.o + oc) * E + tile.oh * p.e1 + ow] =
                    fpa_epilogue(acc[i][j], mult, oc, p.negative_slope);
            }
        }
    }
}
