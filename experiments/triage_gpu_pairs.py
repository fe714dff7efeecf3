"""A manifest of load_inline pairs of our own for `fpa triage --device cuda`: eight conv problems, 82 solutions.

Each solution is a self-contained KernelBench solution whose ``ModelNew`` calls a direct fp32 convolution
kernel built with ``torch.utils.cpp_extension.load_inline`` (one output per thread, the products summed over
input channel, then kernel row, then kernel column), 66 of them each a different source, so each a build of its
own, as generated kernels are, and 16 more samples of two of those kernels (``correct_resampled``,
``tf32_resampled``: other Python, the same ``load_inline``), as sampling a model again often gives. The variants
are what generated kernels do:

* arithmetic: ``fmaf`` (correct), mul-then-add rounded apart (``nofma``), the channels summed backwards
  (``reversed``), operands rounded to TF32 (``cvt.rna.tf32.f32``, ``tf32``) or bf16 (``bf16``), GELU's tanh
  form (``gelu_tanh``), ``--use_fast_math`` (``fast_math``);
* bugs: the window shifted by one row (``shifted``), the bias never added (``no_bias``);
* failures: an out-of-bounds store (``illegal_access``), a kernel that spins for ever (``spins``), a source
  that does not compile (``compile_error``).

The label each gets (the manifest's ``expected``) names the verdicts that are right against PyTorch's default
reference on a GPU, whose convolutions cuDNN may run in TF32 (its default allows it): an fp32 kernel is then
the accurate side.

    python experiments/triage_gpu_pairs.py FOLDER      # writes FOLDER/<problem>/… and FOLDER/manifest.csv
"""

from __future__ import annotations

import csv
import pathlib
import sys

# name → (Model's constructor call, forward's epilogue in PyTorch, in CUDA, input shape, conv arguments)
PROBLEMS = {
    "conv_relu": ("nn.Conv2d(32, 48, 3, stride=1, padding=1, dilation=1)", "torch.relu(y)", "fmaxf(v, 0.f)",
                  (8, 32, 64, 64), (1, 1, 1)),
    "dilated_gelu": ("nn.Conv2d(24, 32, 5, stride=1, padding=4, dilation=2)", "F.gelu(y)",
                     "0.5f * v * (1.f + erff(v * 0.70710678118654752f))", (4, 24, 72, 72), (1, 4, 2)),
    "strided_tanh": ("nn.Conv2d(40, 64, 3, stride=2, padding=1, dilation=1)", "torch.tanh(y)", "tanhf(v)",
                     (8, 40, 96, 96), (2, 1, 1)),
    "pointwise_sigmoid": ("nn.Conv2d(64, 48, 1, stride=1, padding=0, dilation=1)", "torch.sigmoid(y)",
                          "1.f / (1.f + expf(-v))", (8, 64, 56, 56), (1, 0, 1)),
    "wide_silu": ("nn.Conv2d(16, 64, 5, stride=1, padding=2, dilation=1)", "F.silu(y)", "v / (1.f + expf(-v))",
                  (4, 16, 80, 80), (1, 2, 1)),
    "dilated3_relu6": ("nn.Conv2d(24, 24, 3, stride=1, padding=3, dilation=3)", "F.relu6(y)",
                       "fminf(fmaxf(v, 0.f), 6.f)", (8, 24, 64, 64), (1, 3, 3)),
    "strided5_elu": ("nn.Conv2d(12, 40, 5, stride=2, padding=2, dilation=1)", "F.elu(y)",
                     "v > 0.f ? v : expm1f(v)", (8, 12, 128, 128), (2, 2, 1)),
    "wide_softplus": ("nn.Conv2d(20, 36, 7, stride=1, padding=3, dilation=1)", "F.softplus(y)",
                      "v > 20.f ? v : log1pf(expf(v))", (4, 20, 48, 96), (1, 3, 1)),
}  # fmt: skip
_ALL = tuple(PROBLEMS)
_TRANSCENDENTAL = tuple(name for name in PROBLEMS if name not in ("conv_relu", "dilated3_relu6"))

_GELU_TANH = "0.5f * v * (1.f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)))"

# variant → (problems it is written for, the verdicts that are right for it, changes to the template). Whether
# PyTorch's reference convolution runs in TF32 is cuDNN's choice per shape (on the H200 it did for conv_relu and
# dilated_gelu, not for the stride-2 strided_tanh): where it does, a TF32 reference is part of the right verdict.
_TF32_REF = "reference_tf32"
VARIANTS = {
    "correct": (_ALL, f"{_TF32_REF}|identical", {}),
    "nofma": (_ALL, f"{_TF32_REF}|accumulation_order|identical",
              {"ACCUMULATE": "acc = __fadd_rn(acc, __fmul_rn(xv, wv));"}),
    "reversed": (_ALL, f"{_TF32_REF}|accumulation_order|identical",
                 {"CHANNELS": "for (int c = C - 1; c >= 0; --c)"}),
    "tf32": (_ALL, f"{_TF32_REF} + candidate_tf32|candidate_tf32|shared_tf32", {"LOAD": "tf32"}),
    "bf16": (_ALL, f"{_TF32_REF} + candidate_bf16|candidate_bf16", {"LOAD": "bf16"}),
    "gelu_tanh": (("dilated_gelu",), f"{_TF32_REF} + gelu_approximation|gelu_approximation",
                  {"EPILOGUE": _GELU_TANH}),
    # fast-math's erff/tanhf error is below TF32's: where the reference is TF32, that is the cause named
    "fast_math": (_TRANSCENDENTAL, f"approximation|{_TF32_REF}|{_TF32_REF} + approximation|identical",
                  {"FLAGS": '["--use_fast_math"]'}),
    "shifted": (_ALL, "bug", {"ROW": "p * stride - pad + r * dil + 1"}),
    "no_bias": (_ALL, "bug", {"BIAS": ""}),
    "illegal_access": (("conv_relu",), "user_code_failed", {"EXTRA": "if (idx == 0) y[-(1ll << 40)] = 1.f;"}),
    # spins on a global load the compiler must repeat (a volatile local's loop was removed: the kernel returned)
    "spins": (("dilated_gelu",), "user_code_failed",
              {"EXTRA": "if (idx == 0) { while (((volatile float*)y)[0] != 12345.f) {} }"}),
    "compile_error": (("dilated_gelu",), "user_code_failed", {"EXTRA": "this_is_not_cuda;"}),
    # another sample of the same kernel: its Python differs, its load_inline is the correct (TF32) one's byte for
    # byte, so fpa's store of builds (run.extension_store) compiles it once for both
    "correct_resampled": (_ALL, f"{_TF32_REF}|identical", {"TAG": "correct", "FORWARD": "_RESAMPLED"}),
    "tf32_resampled": (_ALL, f"{_TF32_REF} + candidate_tf32|candidate_tf32|shared_tf32",
                       {"LOAD": "tf32", "TAG": "tf32", "FORWARD": "_RESAMPLED"}),
}  # fmt: skip
_FORWARDS = {
    "": "return _ext.conv_forward(x.contiguous(), self.conv.weight.contiguous(), self.conv.bias, {args})",
    "_RESAMPLED": "weight, bias = self.conv.weight, self.conv.bias  # a sample of its own\n"
                  "        return _ext.conv_forward(x.contiguous(), weight.contiguous(), bias, {args})",
}  # fmt: skip

_LOADS = {
    "fp32": "__device__ __forceinline__ float load(float v) { return v; }",
    "tf32": (
        "__device__ __forceinline__ float load(float v) {\n"
        '    unsigned u; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(u) : "f"(v)); return __uint_as_float(u);\n}'
    ),
    "bf16": "__device__ __forceinline__ float load(float v) { return __bfloat162float(__float2bfloat16(v)); }",
}

_PROBLEM = '''"""{name}: a conv problem of fp_analysis's own, in KernelBench's format."""

import torch
import torch.nn.functional as F
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = {conv}

    def forward(self, x):
        y = self.conv(x)
        return {epilogue}


def get_inputs():
    return [torch.randn{shape}]


def get_init_inputs():
    return []
'''

_SOLUTION = '''"""{name}, {variant}: a direct-convolution CUDA kernel built with load_inline."""

import torch
from torch import nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <cuda_bf16.h>

{load}

__device__ __forceinline__ float epilogue(float v) {{ return {epilogue}; }}

__global__ void conv_{tag}(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                          float* __restrict__ y, int N, int C, int H, int W, int K, int R, int S, int P, int Q,
                          int stride, int pad, int dil) {{
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx >= (long long)N * K * P * Q) return;
    {extra}
    int q = idx % Q, p = (idx / Q) % P, k = (idx / ((long long)P * Q)) % K, n = idx / ((long long)K * P * Q);
    float acc = 0.f;
    {channels} {{
        for (int r = 0; r < R; ++r) {{
            int h = {row};
            if (h < 0 || h >= H) continue;
            for (int s = 0; s < S; ++s) {{
                int col = q * stride - pad + s * dil;
                if (col < 0 || col >= W) continue;
                float xv = load(x[(((long long)n * C + c) * H + h) * W + col]);
                float wv = load(w[(((long long)k * C + c) * R + r) * S + s]);
                {accumulate}
            }}
        }}
    }}
    {bias}
    y[idx] = epilogue(acc);
}}

torch::Tensor conv_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b,
                           int64_t stride, int64_t pad, int64_t dil) {{
    int N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), K = w.size(0), R = w.size(2), S = w.size(3);
    int P = (H + 2 * pad - dil * (R - 1) - 1) / stride + 1, Q = (W + 2 * pad - dil * (S - 1) - 1) / stride + 1;
    auto y = torch::empty({{N, K, P, Q}}, x.options());
    long long total = (long long)N * K * P * Q;
    conv_{tag}<<<(total + 255) / 256, 256>>>(x.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
                                            y.data_ptr<float>(), N, C, H, W, K, R, S, P, Q, stride, pad, dil);
    return y;
}}
"""

_ext = load_inline(
    name="triage_{tag}",
    cpp_sources="torch::Tensor conv_forward(torch::Tensor x, torch::Tensor w, torch::Tensor b, "
    "int64_t stride, int64_t pad, int64_t dil);",
    cuda_sources=_CUDA,
    functions=["conv_forward"],
    extra_cuda_cflags={flags},
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = {conv}

    def forward(self, x):
        {forward}
'''


def write(folder: pathlib.Path) -> list[dict]:
    """Write the problems, solutions and ``manifest.csv``; the manifest's rows."""
    rows = []
    for name, (conv, epilogue, cuda_epilogue, shape, args) in PROBLEMS.items():
        (folder / name).mkdir(parents=True, exist_ok=True)
        problem = folder / name / "problem.py"
        problem.write_text(_PROBLEM.format(name=name, conv=conv, epilogue=epilogue, shape=shape))
        for variant, (problems, expected, changes) in VARIANTS.items():
            if name not in problems:
                continue
            text = _SOLUTION.format(
                name=name,
                variant=variant,
                tag=f"{name}_{changes.get('TAG', variant)}",
                load=_LOADS[changes.get("LOAD", "fp32")],
                epilogue=changes.get("EPILOGUE", cuda_epilogue),
                extra=changes.get("EXTRA", ""),
                channels=changes.get("CHANNELS", "for (int c = 0; c < C; ++c)"),
                row=changes.get("ROW", "p * stride - pad + r * dil"),
                accumulate=changes.get("ACCUMULATE", "acc = fmaf(xv, wv, acc);"),
                bias=changes.get("BIAS", "acc += b[k];"),
                flags=changes.get("FLAGS", "[]"),
                conv=conv,
                forward=_FORWARDS[changes.get("FORWARD", "")].format(args=", ".join(map(str, args))),
            )
            solution = folder / name / f"{variant}.py"
            solution.write_text(text)
            rows.append({"problem": f"{name}/problem.py", "solution": f"{name}/{variant}.py",
                         "id": f"{name}/{variant}", "expected": expected})  # fmt: skip
    with open(folder / "manifest.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["problem", "solution", "id", "expected"])
        writer.writeheader()
        writer.writerows(rows)
    return rows


if __name__ == "__main__":
    written = write(pathlib.Path(sys.argv[1]))
    print(f"{len(written)} pairs written to {sys.argv[1]}/manifest.csv")
