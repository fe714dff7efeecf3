"""The general device cases' CUDA kernels (``_kernels.cu``), built with torch's load_inline in two ways.

``precise()``: as written. ``fast()``: with ``--use_fast_math`` (expf, logf and friends become the SFU
approximations, division and square root approximate, denormals flushed), as generated kernels often are.
Each returns the extension module; the functions take tensors and return new ones.
"""

import functools
import pathlib

from torch.utils.cpp_extension import load_inline

_LAUNCH = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

static dim3 blocks_for(long long n) { return dim3((unsigned)((n + 255) / 256)); }
#define STREAM at::cuda::getCurrentCUDAStream()

torch::Tensor mish(torch::Tensor x) {
  auto y = x.contiguous().clone();
  mish_kernel<<<blocks_for(y.numel()), 256, 0, STREAM>>>(y.data_ptr<float>(), y.numel());
  return y;
}

torch::Tensor gelu_tanh(torch::Tensor x) {
  auto y = x.contiguous().clone();
  gelu_tanh_kernel<<<blocks_for(y.numel()), 256, 0, STREAM>>>(y.data_ptr<float>(), y.numel());
  return y;
}

torch::Tensor groupnorm_tanh(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, int64_t groups, double eps) {
  auto xc = x.contiguous();
  auto y = torch::empty_like(xc);
  long long spatial = xc.numel() / (xc.size(0) * xc.size(1));
  groupnorm_tanh_kernel<<<(unsigned)(xc.size(0) * groups), 256, 0, STREAM>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), gamma.contiguous().data_ptr<float>(),
      beta.contiguous().data_ptr<float>(), (int)xc.size(1), (int)groups, spatial, (float)eps);
  return y;
}

torch::Tensor conv_transpose2d(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t stride, int64_t pad,
                               int64_t output_padding) {
  auto xc = x.contiguous(), wc = w.contiguous();
  int N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
  int K = wc.size(1), R = wc.size(2), S = wc.size(3);
  int OH = (H - 1) * stride - 2 * pad + R + output_padding, OW = (W - 1) * stride - 2 * pad + S + output_padding;
  auto y = torch::empty({N, K, OH, OW}, xc.options());
  conv_transpose2d_naive_kernel<<<blocks_for(y.numel()), 256, 0, STREAM>>>(
      xc.data_ptr<float>(), wc.data_ptr<float>(), b.contiguous().data_ptr<float>(), y.data_ptr<float>(),
      N, C, H, W, K, R, S, (int)stride, (int)pad, OH, OW);
  return y;
}

torch::Tensor leaky_clamp(torch::Tensor x, double slope, double lo, double hi) {
  auto y = x.contiguous().clone();
  leaky_clamp_kernel<<<blocks_for(y.numel()), 256, 0, STREAM>>>(y.data_ptr<float>(), y.numel(), (float)slope,
                                                                  (float)lo, (float)hi);
  return y;
}

torch::Tensor bias_relu_slip(torch::Tensor x, torch::Tensor bias) {
  auto y = x.contiguous().clone();
  long long spatial = y.numel() / (y.size(0) * y.size(1));
  bias_relu_slip_kernel<<<blocks_for(y.numel()), 256, 0, STREAM>>>(
      y.data_ptr<float>(), bias.contiguous().data_ptr<float>(), (int)y.size(1), spatial, y.numel());
  return y;
}
"""

_FUNCTIONS = ["mish", "gelu_tanh", "groupnorm_tanh", "conv_transpose2d", "leaky_clamp", "bias_relu_slip"]
_DECLARATIONS = """
torch::Tensor mish(torch::Tensor x);
torch::Tensor gelu_tanh(torch::Tensor x);
torch::Tensor groupnorm_tanh(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta, int64_t groups, double eps);
torch::Tensor conv_transpose2d(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t stride, int64_t pad,
                               int64_t output_padding);
torch::Tensor leaky_clamp(torch::Tensor x, double slope, double lo, double hi);
torch::Tensor bias_relu_slip(torch::Tensor x, torch::Tensor bias);
"""


def _build(name: str, flags: list[str]):
    kernels = (pathlib.Path(__file__).parent / "_kernels.cu").read_text()
    return load_inline(
        name=name,
        cpp_sources=_DECLARATIONS,
        cuda_sources=kernels + _LAUNCH,
        functions=_FUNCTIONS,
        extra_cuda_cflags=["-O3", "-gencode=arch=compute_90,code=sm_90", *flags],
        verbose=True,  # its build lines go to stdout, as generated solutions' do
    )


@functools.cache
def precise():
    return _build("fpa_general_precise", [])


@functools.cache
def fast():
    return _build("fpa_general_fast", ["--use_fast_math"])
