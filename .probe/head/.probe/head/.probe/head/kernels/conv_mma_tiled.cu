// conv2d as a tiled implicit GEMM on the tensor cores: conv_tile.cuh's shared-memory tiles (128 pixels ×
// 64 channels per block, K in chunks of 16), four warps of 64 × 32 each, mma.sync.m16n8k8 with TF32
// operands (PTX ISA, "Warp-level matrix multiply-accumulate instructions", m16n8k8 .tf32 fragments).
//
// FPA_TC_SPLIT 1 (TF32, as cuDNN's TF32 mode): operands rounded to TF32 (nearest even), the whole sum
// accumulated inside the mma.
// FPA_TC_SPLIT 3 (3xTF32): a = big + small with big = a truncated to TF32 (exact split: a − big is
// exact in fp32) and small = a − big rounded to TF32; small·big + big·small + big·big (Ootomo & Yokota
// 2022, IJHPCA 36(4), "Recovering single precision accuracy from Tensor Cores while surpassing the FP32
// theoretical peak performance"). Each 8-term step is summed by the tensor core from zero and then added
// to an IEEE fp32 accumulator with __fadd_rn: the tensor cores' own accumulation truncates (Fasi et al.
// 2021, "Numerical behavior of NVIDIA tensor cores", PeerJ CS 7:e330), and carrying the running sum
// through it made 3xTF32 3–10× less accurate than an fp32 chain (issue 3's measurement).
#include "conv_tf32.cuh"
#include "conv_tile.cuh"


using namespace fpa_tile;

constexpr int THREADS = 128;

constexpr int A_LD = BM + 8, B_LD = BN + 8;  // padded rows: a warp's fragment reads hit 32 distinct banks

extern "C" __global__ void __launch_bounds__(THREADS) conv_mma_tiled(
    const float* __restrict__ x, const float* __restrict__ wt, const float* __restrict__ bias,
    const float* __restrict__ mult, float* __restrict__ y, const int* __restrict__ ktab, ConvParams p) {
    __shared__ __align__(16) float As[STAGES][BK][A_LD];
    __shared__ __align__(16) float Bs[STAGES][BK][B_LD];
    extern __shared__ __align__(16) int table[];

    const int t = threadIdx.x;
    const int og = (int)(p.o / p.groups);
    const long long E = p.e0 * p.e1 * p.e2;
    const long long pixels = p.n * E;
    const long long m0 = (long long)blockIdx.x * BM;
    const int n_tiles = (og + BN - 1) / BN;
    const int g = blockIdx.y / n_tiles, n0 = (blockIdx.y % n_tiles) * BN;
    const Loader<THREADS> loader(x, wt, table, p, m0, g, n0);
    const int K = loader.K;
    load_table(table, ktab, K);

    const int warp = t / 32, lane = t % 32, gid = lane >> 2, tig = lane & 3;
    const int wm = (warp & 1) * 64, wn = (warp >> 1) * 32;
    float acc[4][4][4];
#pragma unroll
    for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[mt][nt][i] = 0.0f;

    // One chunk: two 8-term steps. Terms past K are 0 in both tiles (conv_tile.cuh): exact zeros.
    auto compute_chunk = [&](int stage) {
#pragma unroll
        for (int ks = 0; ks < BK; ks += 8) {
            unsigned b_big[4][2], b_small[4][2];
#pragma unroll
            for (int nt = 0; nt < 4; ++nt) {
                const int c = wn + nt * 8 + gid;
                fpa_split<FPA_TC_SPLIT>(Bs[stage][ks + tig][c], b_big[nt][0], b_small[nt][0]);
                fpa_split<FPA_TC_SPLIT>(Bs[stage][ks + tig + 4][c], b_big[nt][1], b_small[nt][1]);
            }
#pragma unroll
            for (int mt = 0; mt < 4; ++mt) {  // one m-tile's A fragments live at a time: fewer registers
                unsigned a_big[4], a_small[4];
                const int r = wm + mt * 16 + gid;
                fpa_split<FPA_TC_SPLIT>(As[stage][ks + tig][r], a_big[0], a_small[0]);
                fpa_split<FPA_TC_SPLIT>(As[stage][ks + tig][r + 8], a_big[1], a_small[1]);
                fpa_split<FPA_TC_SPLIT>(As[stage][ks + tig + 4][r], a_big[2], a_small[2]);
                fpa_split<FPA_TC_SPLIT>(As[stage][ks + tig + 4][r + 8], a_big[3], a_small[3]);
#pragma unroll
                for (int nt = 0; nt < 4; ++nt) {
#if FPA_TC_SPLIT == 3
                    float step[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    fpa_mma(step, a_small, b_big[nt]);
                    fpa_mma(step, a_big, b_small[nt]);
                    fpa_mma(step, a_big, b_big[nt]);
#pragma unroll
                    for (int i = 0; i < 4; ++i) acc[mt][nt][i] = __fadd_rn(acc[mt][nt][i], step[i]);
#else
                    fpa_mma(acc[mt][nt], a_big, b_big[nt]);
#endif
                }
            }
        }
    };

    run_chunks(loader, &As[0][0][0], A_LD, &Bs[0][0][0], B_LD, [&](int stage, int) { compute_chunk(stage); });

#pragma unroll
    for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const long long m = m0 + wm + mt * 16 + gid + (i >= 2 ? 8 : 0);
                const int n = n0 + wn + nt * 8 + tig * 2 + (i & 1);
                if (m >= pixels || n >= og) continue;
                const long long nb = m / E, z = m - nb * E, oc = (long long)g * og + n;
                const float v = acc[mt][nt][i];
                y[(nb * p.o + oc) * E + z] = p.has_bias ? __fadd_rn(v, bias[oc]) : v;
            }
}
