// Epilogue and naive-conv kernels for the general device cases: plain CUDA, fp32, one thread per element.
// Built twice by _general_kernels.py: as written, and with --use_fast_math (tanhf, expf, logf approximated).

extern "C" __global__ void mish_kernel(float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = y[i];
  float softplus = v > 20.f ? v : log1pf(expf(v));
  y[i] = v * tanhf(softplus);
}

extern "C" __global__ void gelu_tanh_kernel(float* y, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = y[i];
  y[i] = 0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

// GroupNorm (biased variance, as torch) then tanh; one block per (batch item, group), two passes.
extern "C" __global__ void groupnorm_tanh_kernel(const float* x, float* y, const float* gamma, const float* beta,
                                                 int channels, int groups, long long spatial, float eps) {
  int n = blockIdx.x / groups, g = blockIdx.x % groups;
  int per_group = channels / groups;
  long long count = per_group * spatial;
  const float* base = x + ((long long)n * channels + g * per_group) * spatial;
  __shared__ float partial[256];
  float sum = 0.f;
  for (long long i = threadIdx.x; i < count; i += blockDim.x) sum += base[i];
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  float mean = partial[0] / count;
  __syncthreads();
  float sq = 0.f;
  for (long long i = threadIdx.x; i < count; i += blockDim.x) {
    float d = base[i] - mean;
    sq += d * d;
  }
  partial[threadIdx.x] = sq;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  float inv = rsqrtf(partial[0] / count + eps);
  float* out = y + ((long long)n * channels + g * per_group) * spatial;
  for (long long i = threadIdx.x; i < count; i += blockDim.x) {
    int c = g * per_group + (int)(i / spatial);
    out[i] = tanhf((base[i] - mean) * inv * gamma[c] + beta[c]);
  }
}

// ConvTranspose2d, one thread per output, input channel outermost then kh, kw; fp32 fmaf; groups = 1.
extern "C" __global__ void conv_transpose2d_naive_kernel(const float* x, const float* w, const float* b, float* y,
                                                         int N, int C, int H, int W, int K, int R, int S,
                                                         int stride, int pad, int OH, int OW) {
  long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long total = (long long)N * K * OH * OW;
  if (idx >= total) return;
  int ow = idx % OW, oh = (idx / OW) % OH, k = (idx / ((long long)OW * OH)) % K;
  int n = idx / ((long long)OW * OH * K);
  float acc = 0.f;
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) {
      int t = oh + pad - r;
      if (t < 0 || t % stride) continue;
      int ih = t / stride;
      if (ih >= H) continue;
      for (int s = 0; s < S; ++s) {
        int u = ow + pad - s;
        if (u < 0 || u % stride) continue;
        int iw = u / stride;
        if (iw >= W) continue;
        acc = fmaf(x[(((long long)n * C + c) * H + ih) * W + iw], w[((c * K + k) * R + r) * S + s], acc);
      }
    }
  y[idx] = acc + b[k];
}

extern "C" __global__ void leaky_clamp_kernel(float* y, long long n, float slope, float lo, float hi) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = y[i];
  v = v > 0.f ? v : v * slope;
  y[i] = fminf(fmaxf(v, lo), hi);
}

// bias + ReLU after a bias-less conv, with the slip of reading channel 4's bias for channel 3.
extern "C" __global__ void bias_relu_slip_kernel(float* y, const float* bias, int channels, long long spatial,
                                                 long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  int c = (i / spatial) % channels;
  int read = c == 3 ? 4 : c;
  float v = y[i] + bias[read];
  y[i] = v > 0.f ? v : 0.f;
}
