// Kernels of the device cases without convolutions: plain CUDA, fp32, no fast-math, each written as a KernelBench
// solution would write it. Built once by _beyond_kernels.py (its launchers check the inputs and every launch).
//
// The sums say their order, since the verdict depends on it: `sequential` is one accumulator, first term to last;
// a block tree is 256 threads each adding every 256th term, then a[i] += a[i + s] for s = 128, ..., 1 in shared
// memory (the engine's `threads256` order, bit for bit where the terms are the same); an atomic sum adds its
// partials in the order the blocks arrive.
#include <cstdint>
#include <mma.h>

constexpr int kThreads = 256;  // every block-tree kernel is launched with this many threads (a power of two)

// The sum of the block's `v` (one per thread), as a halving tree in shared memory; every thread gets the total.
__device__ float block_tree_sum(float v, float* partial) {
  partial[threadIdx.x] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  float total = partial[0];
  __syncthreads();  // `partial` may be written again after this
  return total;
}

// x (batch, n, inner) summed over n: one thread per (batch item, inner index), sequentially.
extern "C" __global__ void sum_dim1_sequential_kernel(const float* x, float* y, int batch, int n, int inner) {
  long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (idx >= (long long)batch * inner) return;
  long long b = idx / inner, c = idx % inner;
  const float* column = x + b * n * inner + c;
  float acc = 0.f;
  for (int k = 0; k < n; ++k) acc += column[(long long)k * inner];
  y[idx] = acc;
}

// x (rows, n) summed over n: one block per row, a block tree.
extern "C" __global__ void sum_rows_block_kernel(const float* x, float* y, int n) {
  __shared__ float partial[kThreads];
  const float* row = x + (long long)blockIdx.x * n;
  float acc = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += row[i];
  float total = block_tree_sum(acc, partial);
  if (threadIdx.x == 0) y[blockIdx.x] = total;
}

// x (rows, n) summed over n: block (chunk, row) sums 256 terms as a tree and adds that to y[row] with atomicAdd, so
// each row's n / 256 partials are added in the order their blocks arrive. y must hold zeros.
extern "C" __global__ void sum_rows_atomic_kernel(const float* x, float* y, int n) {
  __shared__ float partial[kThreads];
  long long row = blockIdx.y;
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  float v = i < n ? x[row * n + i] : 0.f;
  float total = block_tree_sum(v, partial);
  if (threadIdx.x == 0) atomicAdd(y + row, total);
}

// The running sum of each row of x (rows, n): one thread per row, sequentially.
extern "C" __global__ void cumsum_rows_sequential_kernel(const float* x, float* y, int rows, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* in = x + (long long)r * n;
  float* out = y + (long long)r * n;
  float acc = 0.f;
  for (int k = 0; k < n; ++k) {
    acc += in[k];
    out[k] = acc;
  }
}

// BatchNorm as in eval mode: normalised with the running statistics, whatever mode the module is in.
extern "C" __global__ void batchnorm_running_kernel(const float* x, float* y, const float* mean, const float* var,
                                                    const float* weight, const float* bias, int channels,
                                                    long long spatial, long long n, float eps) {
  long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (idx >= n) return;
  int c = (idx / spatial) % channels;
  y[idx] = (x[idx] - mean[c]) * rsqrtf(var[c] + eps) * weight[c] + bias[c];
}

// LayerNorm over the last n values of each row (biased variance, as torch): one block per row, the mean and then
// Σ(x − mean)² each as a block tree (two passes).
extern "C" __global__ void layernorm_two_pass_kernel(const float* x, float* y, const float* weight, const float* bias,
                                                     int n, float eps) {
  __shared__ float partial[kThreads];
  const float* row = x + (long long)blockIdx.x * n;
  float* out = y + (long long)blockIdx.x * n;
  float acc = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += row[i];
  float mean = block_tree_sum(acc, partial) / n;
  float squares = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    float d = row[i] - mean;
    squares += d * d;
  }
  float inv = rsqrtf(block_tree_sum(squares, partial) / n + eps);
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = (row[i] - mean) * inv * weight[i] + bias[i];
}

// LayerNorm from each row's E[x] and E[x²] (given): the variance as E[x²] − E[x]² (one pass), then the normalisation.
// Every operation rounds on its own (the _rn intrinsics keep nvcc from fusing a multiply and an add), in the order of
// torch's decomposition of layer_norm: var = msq − mean·mean, rstd = rsqrt(var + eps), ((x − mean)·rstd)·w + b.
extern "C" __global__ void layernorm_from_moments_kernel(const float* x, float* y, const float* mean, const float* msq,
                                                         const float* weight, const float* bias, int n,
                                                         long long total, float eps) {
  long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (idx >= total) return;
  long long r = idx / n;
  int i = idx % n;
  float m = mean[r];
  float var = __fsub_rn(msq[r], __fmul_rn(m, m));
  float inv = rsqrtf(__fadd_rn(var, eps));
  float v = __fmul_rn(__fsub_rn(x[idx], m), inv);
  y[idx] = __fadd_rn(__fmul_rn(v, weight[i]), bias[i]);
}

// Softmax over the last n values of each row as exp(x) / Σ exp(x), without subtracting the row's max: one block per
// row, the denominator a block tree. expf overflows to inf past x ≈ 88.72, and then inf / inf is NaN.
extern "C" __global__ void softmax_unshifted_kernel(const float* x, float* y, int n) {
  __shared__ float partial[kThreads];
  const float* row = x + (long long)blockIdx.x * n;
  float* out = y + (long long)blockIdx.x * n;
  float acc = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += expf(row[i]);
  float total = block_tree_sum(acc, partial);
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = expf(row[i]) / total;
}

// C (m, n) = A (m, k) · B (k, n), row-major, on the tensor cores in TF32: one warp per 16×16 tile of C, operands
// loaded from global memory and rounded to TF32 with __float_to_tf32 (cvt.rna: to nearest, ties away from zero),
// fp32 accumulators. Needs m and n multiples of 16, k a multiple of 8 (the launcher checks).
extern "C" __global__ void matmul_tf32_wmma_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  using namespace nvcuda;
  long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
  int tiles_n = n / 16;
  long long tile_m = warp / tiles_n, tile_n = warp % tiles_n;
  if (tile_m >= m / 16) return;  // the same for every lane of the warp
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::fill_fragment(acc, 0.f);
  for (int kk = 0; kk < k; kk += 8) {
    wmma::load_matrix_sync(fa, a + tile_m * 16 * k + kk, k);
    wmma::load_matrix_sync(fb, b + (long long)kk * n + tile_n * 16, n);
    for (int t = 0; t < fa.num_elements; ++t) fa.x[t] = wmma::__float_to_tf32(fa.x[t]);
    for (int t = 0; t < fb.num_elements; ++t) fb.x[t] = wmma::__float_to_tf32(fb.x[t]);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(c + tile_m * 16 * n + tile_n * 16, acc, n, wmma::mem_row_major);
}

// C (m, n) = A (m, k) · B (k, n), row-major: one thread per output, a sequential fmaf chain over k.
extern "C" __global__ void matmul_naive_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
  long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (idx >= (long long)m * n) return;
  long long i = idx / n, j = idx % n;
  const float* row = a + i * k;
  float acc = 0.f;
  for (int kk = 0; kk < k; ++kk) acc = fmaf(row[kk], b[(long long)kk * n + j], acc);
  c[idx] = acc;
}

// The index of the largest of x (batch, n, inner) over n, the first where several are equal (as torch.argmax; NaN is
// not handled): one thread per (batch item, inner index).
extern "C" __global__ void argmax_dim1_kernel(const float* x, int64_t* y, int batch, int n, int inner) {
  long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (idx >= (long long)batch * inner) return;
  long long b = idx / inner, c = idx % inner;
  const float* column = x + b * n * inner + c;
  float best = column[0];
  int64_t at = 0;
  for (int k = 1; k < n; ++k) {
    float v = column[(long long)k * inner];
    if (v > best) {
      best = v;
      at = k;
    }
  }
  y[idx] = at;
}

// argmax_dim1_kernel with an off-by-one slip: the loop stops before the last of the n values, never picking it.
extern "C" __global__ void argmax_dim1_short_kernel(const float* x, int64_t* y, int batch, int n, int inner) {
  long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (idx >= (long long)batch * inner) return;
  long long b = idx / inner, c = idx % inner;
  const float* column = x + b * n * inner + c;
  float best = column[0];
  int64_t at = 0;
  for (int k = 1; k < n - 1; ++k) {
    float v = column[(long long)k * inner];
    if (v > best) {
      best = v;
      at = k;
    }
  }
  y[idx] = at;
}

// mean((p − t)²) over all n values: a single block, each thread an fmaf chain over every 256th value, then the tree.
extern "C" __global__ void mse_block_kernel(const float* p, const float* t, float* out, long long n) {
  __shared__ float partial[kThreads];
  float acc = 0.f;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) {
    float d = p[i] - t[i];
    acc = fmaf(d, d, acc);
  }
  float total = block_tree_sum(acc, partial);
  if (threadIdx.x == 0) out[0] = total / (float)n;
}

// GELU's tanh approximation, one thread per value.
extern "C" __global__ void gelu_tanh_kernel(const float* x, float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  y[i] = 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

// Each row's triplet margin loss, max(‖a − p‖ − ‖a − n‖ + margin, 0), with the distances taken without the eps that
// torch's pairwise_distance adds to every difference (‖a − p + eps‖): one block per row, each Σ a block tree.
extern "C" __global__ void triplet_rows_no_eps_kernel(const float* a, const float* p, const float* neg, float* loss,
                                                      int dim, float margin) {
  __shared__ float partial[kThreads];
  long long base = (long long)blockIdx.x * dim;
  float near = 0.f, far = 0.f;
  for (int i = threadIdx.x; i < dim; i += blockDim.x) {
    float dp = a[base + i] - p[base + i];
    float dn = a[base + i] - neg[base + i];
    near += dp * dp;
    far += dn * dn;
  }
  float d_near = sqrtf(block_tree_sum(near, partial));
  float d_far = sqrtf(block_tree_sum(far, partial));
  if (threadIdx.x == 0) loss[blockIdx.x] = fmaxf(d_near - d_far + margin, 0.f);
}

// The mean of v's n values: a single block, each thread every 256th value, then the tree.
extern "C" __global__ void mean_block_kernel(const float* v, float* out, long long n) {
  __shared__ float partial[kThreads];
  float acc = 0.f;
  for (long long i = threadIdx.x; i < n; i += blockDim.x) acc += v[i];
  float total = block_tree_sum(acc, partial);
  if (threadIdx.x == 0) out[0] = total / (float)n;
}

// x (batch, channels, spatial) divided by the root mean square over channels, sqrt(mean(x²) + eps): one thread per
// (batch item, spatial position), the channels' squares an fmaf chain.
extern "C" __global__ void rmsnorm_dim1_kernel(const float* x, float* y, int batch, int channels, long long spatial,
                                               float eps) {
  long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (idx >= batch * spatial) return;
  long long b = idx / spatial, s = idx % spatial;
  const float* in = x + b * channels * spatial + s;
  float* out = y + b * channels * spatial + s;
  float acc = 0.f;
  for (int c = 0; c < channels; ++c) {
    float v = in[c * spatial];
    acc = fmaf(v, v, acc);
  }
  float rms = sqrtf(acc / channels + eps);
  for (int c = 0; c < channels; ++c) out[c * spatial] = in[c * spatial] / rms;
}

// Cross-entropy of logits x (rows, classes) against class indices t, averaged over rows: a single block, each thread
// every 256th row — log Σ exp(x − max) + max − x[t], the exponentials summed sequentially — then the tree. A target
// outside 0 ... classes − 1 gives NaN.
extern "C" __global__ void cross_entropy_block_kernel(const float* x, const int64_t* t, float* out, int rows,
                                                      int classes) {
  __shared__ float partial[kThreads];
  float acc = 0.f;
  for (int r = threadIdx.x; r < rows; r += blockDim.x) {
    const float* logits = x + (long long)r * classes;
    float top = logits[0];
    for (int c = 1; c < classes; ++c) top = fmaxf(top, logits[c]);
    float sum = 0.f;
    for (int c = 0; c < classes; ++c) sum += expf(logits[c] - top);
    int64_t target = t[r];
    bool valid = target >= 0 && target < classes;
    acc += valid ? logf(sum) + top - logits[valid ? target : 0] : __int_as_float(0x7fc00000);
  }
  float total = block_tree_sum(acc, partial);
  if (threadIdx.x == 0) out[0] = total / rows;
}
