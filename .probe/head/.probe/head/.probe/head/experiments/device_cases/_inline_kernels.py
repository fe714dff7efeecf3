"""CUDA kernels for the device cases, built once with torch's load_inline (its build prints to stdout).

``conv2d_direct``: one thread per output, fp32, fmaf chain with the input channel outermost, then kh, kw
(the order cuDNN's fp32 conv equals bit for bit on these shapes: shared/facts). ``conv2d_out_of_bounds``: the
same, writing far outside its output (an illegal address). ``spin``: a kernel that runs for about a minute.
"""

from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void conv2d_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y,
                              int N, int C, int H, int W, int K, int R, int S, int pad, int OH, int OW,
                              long long shift) {
  long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  long long total = (long long)N * K * OH * OW;
  if (idx >= total) return;
  int ow = idx % OW;
  int oh = (idx / OW) % OH;
  int k = (idx / ((long long)OW * OH)) % K;
  int n = idx / ((long long)OW * OH * K);
  float acc = 0.f;
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) {
      int ih = oh - pad + r;
      if (ih < 0 || ih >= H) continue;
      for (int s = 0; s < S; ++s) {
        int iw = ow - pad + s;
        if (iw < 0 || iw >= W) continue;
        acc = fmaf(w[((k * C + c) * R + r) * S + s], x[(((long long)n * C + c) * H + ih) * W + iw], acc);
      }
    }
  y[idx + shift] = acc;
}

__global__ void spin_kernel(float* y, long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {}
  y[0] = 1.f;
}

static torch::Tensor launch(torch::Tensor x, torch::Tensor w, int64_t pad, long long shift) {
  int N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), K = w.size(0), R = w.size(2), S = w.size(3);
  int OH = H + 2 * pad - R + 1, OW = W + 2 * pad - S + 1;
  auto y = torch::empty({N, K, OH, OW}, x.options());
  long long total = (long long)N * K * OH * OW;
  int threads = 256;
  long long blocks = (total + threads - 1) / threads;
  conv2d_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      x.data_ptr<float>(), w.data_ptr<float>(), y.data_ptr<float>(), N, C, H, W, K, R, S, pad, OH, OW, shift);
  return y;
}

torch::Tensor conv2d_direct(torch::Tensor x, torch::Tensor w, int64_t pad) { return launch(x, w, pad, 0); }

torch::Tensor conv2d_out_of_bounds(torch::Tensor x, torch::Tensor w, int64_t pad) {
  return launch(x, w, pad, 1LL << 40);
}

torch::Tensor spin(torch::Tensor like) {
  auto y = torch::zeros({1}, like.options());
  spin_kernel<<<1, 1, 0, at::cuda::getCurrentCUDAStream()>>>(y.data_ptr<float>(), 120000000000LL);
  return y;
}
"""

_CPP = """
torch::Tensor conv2d_direct(torch::Tensor x, torch::Tensor w, int64_t pad);
torch::Tensor conv2d_out_of_bounds(torch::Tensor x, torch::Tensor w, int64_t pad);
torch::Tensor spin(torch::Tensor like);
"""

kernels = load_inline(
    name="fpa_device_cases",
    cpp_sources=_CPP,
    cuda_sources=_CUDA,
    functions=["conv2d_direct", "conv2d_out_of_bounds", "spin"],
    extra_cuda_cflags=["-O3", "-gencode=arch=compute_90,code=sm_90"],
    verbose=True,
)
