"""The beyond device cases' CUDA kernels (``_kernels.cu``), built once with torch's load_inline as written (-O3, no
fast-math) into the extension ``fpa_beyond_kernels``.

``kernels()`` returns the extension module; its functions take CUDA float32 tensors (int64 class indices for
``cross_entropy``), check them, launch one kernel (two for ``triplet_no_eps``), check the launch, and return new
tensors in the shapes the problems' Models return.
"""

import functools
import pathlib

from torch.utils.cpp_extension import load_inline

_LAUNCH = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#define STREAM c10::cuda::getCurrentCUDAStream()

static unsigned blocks_for(long long n) { return (unsigned)((n + kThreads - 1) / kThreads); }

static torch::Tensor checked(const torch::Tensor& t, const char* name) {
  TORCH_CHECK(t.is_cuda(), name, " must be a CUDA tensor");
  TORCH_CHECK(t.scalar_type() == torch::kFloat32, name, " must be float32, not ", t.scalar_type());
  TORCH_CHECK(t.numel() > 0, name, " must not be empty");
  return t.contiguous();
}

torch::Tensor sum_dim1_sequential(torch::Tensor x) {
  auto xc = checked(x, "x");
  TORCH_CHECK(xc.dim() == 3, "x must be (batch, n, inner)");
  const c10::cuda::CUDAGuard guard(xc.device());
  auto y = torch::empty({xc.size(0), 1, xc.size(2)}, xc.options());
  sum_dim1_sequential_kernel<<<blocks_for(xc.size(0) * xc.size(2)), kThreads, 0, STREAM>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), (int)xc.size(0), (int)xc.size(1), (int)xc.size(2));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor sum_rows_block(torch::Tensor x) {
  auto xc = checked(x, "x");
  TORCH_CHECK(xc.dim() == 2, "x must be (rows, n)");
  const c10::cuda::CUDAGuard guard(xc.device());
  auto y = torch::empty({xc.size(0), 1}, xc.options());
  sum_rows_block_kernel<<<(unsigned)xc.size(0), kThreads, 0, STREAM>>>(xc.data_ptr<float>(), y.data_ptr<float>(),
                                                                       (int)xc.size(1));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor sum_rows_atomic(torch::Tensor x) {
  auto xc = checked(x, "x");
  TORCH_CHECK(xc.dim() == 2 && xc.size(0) <= 65535, "x must be (rows, n) with at most 65535 rows");
  const c10::cuda::CUDAGuard guard(xc.device());
  auto y = torch::zeros({xc.size(0)}, xc.options());
  dim3 grid(blocks_for(xc.size(1)), (unsigned)xc.size(0));
  sum_rows_atomic_kernel<<<grid, kThreads, 0, STREAM>>>(xc.data_ptr<float>(), y.data_ptr<float>(), (int)xc.size(1));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor cumsum_rows_sequential(torch::Tensor x) {
  auto xc = checked(x, "x");
  TORCH_CHECK(xc.dim() == 2, "x must be (rows, n)");
  const c10::cuda::CUDAGuard guard(xc.device());
  auto y = torch::empty_like(xc);
  cumsum_rows_sequential_kernel<<<blocks_for(xc.size(0)), kThreads, 0, STREAM>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), (int)xc.size(0), (int)xc.size(1));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor batchnorm_running(torch::Tensor x, torch::Tensor mean, torch::Tensor var, torch::Tensor weight,
                                torch::Tensor bias, double eps) {
  auto xc = checked(x, "x");
  auto m = checked(mean, "running_mean"), v = checked(var, "running_var");
  auto w = checked(weight, "weight"), b = checked(bias, "bias");
  TORCH_CHECK(xc.dim() >= 2 && m.numel() == xc.size(1) && v.numel() == xc.size(1) && w.numel() == xc.size(1) &&
              b.numel() == xc.size(1), "x must be (batch, channels, ...) with one statistic per channel");
  const c10::cuda::CUDAGuard guard(xc.device());
  auto y = torch::empty_like(xc);
  long long spatial = xc.numel() / (xc.size(0) * xc.size(1));
  batchnorm_running_kernel<<<blocks_for(xc.numel()), kThreads, 0, STREAM>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), m.data_ptr<float>(), v.data_ptr<float>(), w.data_ptr<float>(),
      b.data_ptr<float>(), (int)xc.size(1), spatial, xc.numel(), (float)eps);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor layernorm_two_pass(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
  auto xc = checked(x, "x");
  auto w = checked(weight, "weight"), b = checked(bias, "bias");
  long long n = w.numel();
  TORCH_CHECK(b.numel() == n && xc.numel() % n == 0, "weight and bias must hold the normalized shape of x");
  const c10::cuda::CUDAGuard guard(xc.device());
  auto y = torch::empty_like(xc);
  layernorm_two_pass_kernel<<<(unsigned)(xc.numel() / n), kThreads, 0, STREAM>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), (int)n, (float)eps);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor layernorm_from_moments(torch::Tensor x, torch::Tensor mean, torch::Tensor msq, torch::Tensor weight,
                                     torch::Tensor bias, double eps) {
  auto xc = checked(x, "x");
  auto m = checked(mean, "mean"), q = checked(msq, "msq");
  auto w = checked(weight, "weight"), b = checked(bias, "bias");
  long long n = w.numel();
  TORCH_CHECK(b.numel() == n && xc.numel() % n == 0, "weight and bias must hold the normalized shape of x");
  TORCH_CHECK(m.numel() == xc.numel() / n && q.numel() == m.numel(), "mean and msq must hold one value a row");
  const c10::cuda::CUDAGuard guard(xc.device());
  auto y = torch::empty_like(xc);
  layernorm_from_moments_kernel<<<blocks_for(xc.numel()), kThreads, 0, STREAM>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), m.data_ptr<float>(), q.data_ptr<float>(), w.data_ptr<float>(),
      b.data_ptr<float>(), (int)n, xc.numel(), (float)eps);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor softmax_unshifted(torch::Tensor x) {
  auto xc = checked(x, "x");
  const c10::cuda::CUDAGuard guard(xc.device());
  auto y = torch::empty_like(xc);
  long long n = xc.size(-1);
  softmax_unshifted_kernel<<<(unsigned)(xc.numel() / n), kThreads, 0, STREAM>>>(xc.data_ptr<float>(),
                                                                                y.data_ptr<float>(), (int)n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor matmul_tf32(torch::Tensor a, torch::Tensor b) {
  auto ac = checked(a, "A"), bc = checked(b, "B");
  TORCH_CHECK(ac.dim() == 2 && bc.dim() == 2 && ac.size(1) == bc.size(0), "A (m, k) and B (k, n)");
  long long m = ac.size(0), k = ac.size(1), n = bc.size(1);
  TORCH_CHECK(m % 16 == 0 && n % 16 == 0 && k % 8 == 0, "m and n must be multiples of 16, k of 8");
  const c10::cuda::CUDAGuard guard(ac.device());
  auto c = torch::empty({m, n}, ac.options());
  long long threads = (m / 16) * (n / 16) * 32;  // a warp per 16×16 tile
  matmul_tf32_wmma_kernel<<<blocks_for(threads), kThreads, 0, STREAM>>>(
      ac.data_ptr<float>(), bc.data_ptr<float>(), c.data_ptr<float>(), (int)m, (int)n, (int)k);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return c;
}

torch::Tensor matmul_naive(torch::Tensor a, torch::Tensor b) {
  auto ac = checked(a, "A"), bc = checked(b, "B");
  TORCH_CHECK(ac.dim() == 2 && bc.dim() == 2 && ac.size(1) == bc.size(0), "A (m, k) and B (k, n)");
  long long m = ac.size(0), k = ac.size(1), n = bc.size(1);
  const c10::cuda::CUDAGuard guard(ac.device());
  auto c = torch::empty({m, n}, ac.options());
  matmul_naive_kernel<<<blocks_for(m * n), kThreads, 0, STREAM>>>(ac.data_ptr<float>(), bc.data_ptr<float>(),
                                                                   c.data_ptr<float>(), (int)m, (int)n, (int)k);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return c;
}

static torch::Tensor argmax_launch(torch::Tensor x, bool short_loop) {
  auto xc = checked(x, "x");
  TORCH_CHECK(xc.dim() == 3, "x must be (batch, n, inner)");
  const c10::cuda::CUDAGuard guard(xc.device());
  auto y = torch::empty({xc.size(0), xc.size(2)}, xc.options().dtype(torch::kInt64));
  auto kernel = short_loop ? argmax_dim1_short_kernel : argmax_dim1_kernel;
  kernel<<<blocks_for(xc.size(0) * xc.size(2)), kThreads, 0, STREAM>>>(
      xc.data_ptr<float>(), y.data_ptr<int64_t>(), (int)xc.size(0), (int)xc.size(1), (int)xc.size(2));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor argmax_dim1(torch::Tensor x) { return argmax_launch(x, false); }

torch::Tensor argmax_dim1_short(torch::Tensor x) { return argmax_launch(x, true); }

torch::Tensor mse(torch::Tensor predictions, torch::Tensor targets) {
  auto p = checked(predictions, "predictions"), t = checked(targets, "targets");
  TORCH_CHECK(p.sizes() == t.sizes(), "predictions and targets must have one shape");
  const c10::cuda::CUDAGuard guard(p.device());
  auto out = torch::empty({}, p.options());
  mse_block_kernel<<<1, kThreads, 0, STREAM>>>(p.data_ptr<float>(), t.data_ptr<float>(), out.data_ptr<float>(),
                                               p.numel());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

torch::Tensor gelu_tanh(torch::Tensor x) {
  auto xc = checked(x, "x");
  const c10::cuda::CUDAGuard guard(xc.device());
  auto y = torch::empty_like(xc);
  gelu_tanh_kernel<<<blocks_for(xc.numel()), kThreads, 0, STREAM>>>(xc.data_ptr<float>(), y.data_ptr<float>(),
                                                                    xc.numel());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor triplet_no_eps(torch::Tensor anchor, torch::Tensor positive, torch::Tensor negative, double margin) {
  auto a = checked(anchor, "anchor"), p = checked(positive, "positive"), n = checked(negative, "negative");
  TORCH_CHECK(a.dim() == 2 && p.sizes() == a.sizes() && n.sizes() == a.sizes(), "three (rows, dim) tensors");
  const c10::cuda::CUDAGuard guard(a.device());
  auto rows = torch::empty({a.size(0)}, a.options());
  triplet_rows_no_eps_kernel<<<(unsigned)a.size(0), kThreads, 0, STREAM>>>(
      a.data_ptr<float>(), p.data_ptr<float>(), n.data_ptr<float>(), rows.data_ptr<float>(), (int)a.size(1),
      (float)margin);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  auto out = torch::empty({}, a.options());
  mean_block_kernel<<<1, kThreads, 0, STREAM>>>(rows.data_ptr<float>(), out.data_ptr<float>(), rows.numel());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

torch::Tensor rmsnorm_dim1(torch::Tensor x, double eps) {
  auto xc = checked(x, "x");
  TORCH_CHECK(xc.dim() >= 2, "x must be (batch, channels, ...)");
  const c10::cuda::CUDAGuard guard(xc.device());
  auto y = torch::empty_like(xc);
  long long spatial = xc.numel() / (xc.size(0) * xc.size(1));
  rmsnorm_dim1_kernel<<<blocks_for(xc.size(0) * spatial), kThreads, 0, STREAM>>>(
      xc.data_ptr<float>(), y.data_ptr<float>(), (int)xc.size(0), (int)xc.size(1), spatial, (float)eps);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return y;
}

torch::Tensor cross_entropy(torch::Tensor logits, torch::Tensor targets) {
  auto x = checked(logits, "logits");
  TORCH_CHECK(targets.is_cuda() && targets.scalar_type() == torch::kInt64, "targets must be CUDA int64");
  auto t = targets.contiguous();
  TORCH_CHECK(x.dim() == 2 && t.dim() == 1 && t.size(0) == x.size(0), "logits (rows, classes), targets (rows)");
  const c10::cuda::CUDAGuard guard(x.device());
  auto out = torch::empty({}, x.options());
  cross_entropy_block_kernel<<<1, kThreads, 0, STREAM>>>(x.data_ptr<float>(), t.data_ptr<int64_t>(),
                                                         out.data_ptr<float>(), (int)x.size(0), (int)x.size(1));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}
"""

_DECLARATIONS = """
torch::Tensor sum_dim1_sequential(torch::Tensor x);
torch::Tensor sum_rows_block(torch::Tensor x);
torch::Tensor sum_rows_atomic(torch::Tensor x);
torch::Tensor cumsum_rows_sequential(torch::Tensor x);
torch::Tensor batchnorm_running(torch::Tensor x, torch::Tensor mean, torch::Tensor var, torch::Tensor weight,
                                torch::Tensor bias, double eps);
torch::Tensor layernorm_two_pass(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);
torch::Tensor layernorm_from_moments(torch::Tensor x, torch::Tensor mean, torch::Tensor msq, torch::Tensor weight,
                                     torch::Tensor bias, double eps);
torch::Tensor softmax_unshifted(torch::Tensor x);
torch::Tensor matmul_tf32(torch::Tensor a, torch::Tensor b);
torch::Tensor matmul_naive(torch::Tensor a, torch::Tensor b);
torch::Tensor argmax_dim1(torch::Tensor x);
torch::Tensor argmax_dim1_short(torch::Tensor x);
torch::Tensor mse(torch::Tensor predictions, torch::Tensor targets);
torch::Tensor gelu_tanh(torch::Tensor x);
torch::Tensor triplet_no_eps(torch::Tensor anchor, torch::Tensor positive, torch::Tensor negative, double margin);
torch::Tensor rmsnorm_dim1(torch::Tensor x, double eps);
torch::Tensor cross_entropy(torch::Tensor logits, torch::Tensor targets);
"""
FUNCTIONS = [line.split("(")[0].split()[-1] for line in _DECLARATIONS.split(";") if "(" in line]
FOLDER = pathlib.Path(__file__).parent
SOURCES = (FOLDER / "_kernels.cu", pathlib.Path(__file__))  # what the build depends on (device_beyond.py hashes it)


def cuda_source() -> str:
    """The CUDA source load_inline compiles: the kernels, then the launchers."""
    return SOURCES[0].read_text() + _LAUNCH


@functools.cache
def kernels():
    return load_inline(
        name="fpa_beyond_kernels",
        cpp_sources=_DECLARATIONS,
        cuda_sources=cuda_source(),
        functions=FUNCTIONS,
        extra_cuda_cflags=["-O3", "-gencode=arch=compute_90,code=sm_90"],
        verbose=True,  # its build lines go to stdout, as generated solutions' do
    )
