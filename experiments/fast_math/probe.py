"""What --use_fast_math computes, held against fp64 and against the engine's re-creation of it
(``fp_analysis.model.fast_math``): experiments/fast_math/probe.cu built plain and fast, on a dense grid of inputs.

    python experiments/fast_math/probe.py OUT.json [COMMIT]          (on a GPU machine with nvcc)

For each function: the largest error of each build against fp64, and of the fast build against the re-creation, in
units of 2^-24·(|f(x)| + |x|) (the engine's floor unit for an activation) and in ulps of f(x), with the largest
per band of |x|, and how often fast and plain differ. Alternative tanh forms are held against it too: which one
CUDA's tanhf takes under fast-math is not documented.
"""

from __future__ import annotations

import ctypes
import json
import math
import pathlib
import shutil
import subprocess
import sys
import tempfile

import torch
from fpa_kernels.driver import Kernel

from fp_analysis.model import fast_math

HERE = pathlib.Path(__file__).resolve().parent
ROWS = ["exp", "tanh", "log", "rsqrt", "sqrt", "reciprocal", "div", "sigmoid", "silu", "erf", "softplus",
        "gelu_erf", "gelu_tanh", "mish", "softmax_term"]  # fmt: skip
U = 2.0**-24
BANDS = [0.0, 0.01, 0.1, 0.6, 1.0, 3.0, 10.0, 30.0]


def exact(name: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    a = x.abs() + 1e-30
    return {
        "exp": lambda: torch.exp(x), "tanh": lambda: torch.tanh(x), "log": lambda: torch.log(a),
        "rsqrt": lambda: torch.rsqrt(a), "sqrt": lambda: torch.sqrt(a), "reciprocal": lambda: 1.0 / x,
        "div": lambda: x / y, "sigmoid": lambda: torch.sigmoid(x), "silu": lambda: x * torch.sigmoid(x),
        "erf": lambda: torch.erf(x), "softplus": lambda: torch.log1p(torch.exp(x)),
        "gelu_erf": lambda: torch.nn.functional.gelu(x),
        "gelu_tanh": lambda: torch.nn.functional.gelu(x, approximate="tanh"),
        "mish": lambda: x * torch.tanh(torch.log1p(torch.exp(x))), "softmax_term": lambda: torch.exp(x - 4.0) / y,
    }[name]()  # fmt: skip


def recreated(name: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The engine's fast-math form (``fast_math.EMULATED``) where it has one, else the exact function."""
    forms = fast_math.EMULATED
    return {
        "exp": lambda: forms["exp"](x), "sigmoid": lambda: forms["sigmoid"](x), "silu": lambda: forms["silu"](x),
        "softplus": lambda: forms["softplus"](x, 1.0, math.inf),
        "mish": lambda: x * torch.tanh(torch.log1p(fast_math.exp(x))),
        "softmax_term": lambda: fast_math.exp((x - 4.0).float().double()) / y,  # v - 4.0f rounded as the kernel does
    }.get(name, lambda: exact(name, x, y))()  # fmt: skip


TANH_FORMS = {  # candidate forms of tanhf under fast-math
    "exact": lambda x: torch.tanh(x),
    "1-2/(e^2x+1) for |x|>=0.6": lambda x: torch.where(
        x.abs() >= 0.6, torch.sign(x) * (1 - 2 / (fast_math.exp(2 * x.abs()) + 1)), torch.tanh(x)
    ),
    "(e^2x-1)/(e^2x+1) everywhere": lambda x: (fast_math.exp(2 * x) - 1) / (fast_math.exp(2 * x) + 1),
    "1-2/(e^2x+1) everywhere": lambda x: torch.sign(x) * (1 - 2 / (fast_math.exp(2 * x.abs()) + 1)),
}


def build(fast: bool, folder: pathlib.Path) -> pathlib.Path:
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    out = folder / f"probe_{'fast' if fast else 'plain'}.cubin"
    flags = ["--use_fast_math"] if fast else []
    subprocess.run([nvcc, "-cubin", "-arch=sm_90", "-O3", *flags, "-o", str(out), str(HERE / "probe.cu")], check=True)
    return out


def run(cubin: pathlib.Path, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    n = x.numel()
    out = torch.empty(len(ROWS) * n, device="cuda")
    kernel = Kernel(cubin, "fastprobe")
    args = [ctypes.c_uint64(t.data_ptr()) for t in (x, y, out)] + [ctypes.c_longlong(n)]
    kernel.launch((n + 255) // 256, 256, args, torch.cuda.current_stream().cuda_stream)
    torch.cuda.synchronize()
    return out.view(len(ROWS), n).double().cpu()


def errors(values: torch.Tensor, against: torch.Tensor, x: torch.Tensor) -> dict:
    finite = torch.isfinite(values) & torch.isfinite(against)
    d = (values - against).abs()[finite]
    floor_units = d / (U * (against.abs() + x.abs())[finite] + 2.0**-149)
    ulp = torch.tensor(against[finite].abs().float().numpy()).double()
    ulps = d / (torch.nextafter(ulp.float(), torch.tensor(math.inf)).double() - ulp).clamp_min(2.0**-149)
    bands = {}
    ax = x.abs()[finite]
    for lo, hi in zip(BANDS, [*BANDS[1:], math.inf], strict=True):
        inside = (ax >= lo) & (ax < hi)
        if inside.any():
            bands[f"{lo:g}-{hi:g}"] = float(floor_units[inside].max())
    return {"max_floor_units": float(floor_units.max()), "p9999_floor_units": float(floor_units.quantile(0.9999))
            if floor_units.numel() < 2**24 else None, "max_ulps": float(ulps.max()), "by_abs_x": bands}  # fmt: skip


def main(path: str, commit: str | None = None) -> None:
    generator = torch.Generator().manual_seed(0)
    dense = torch.linspace(-30.0, 30.0, 1 << 21, dtype=torch.float64)
    small = torch.logspace(-8, 1.5, 1 << 19, dtype=torch.float64)
    x = torch.cat([dense, small, -small]).float()
    y = (
        (torch.rand(x.numel(), generator=generator) * 7.5 + 0.5)
        * torch.sign(torch.randn(x.numel(), generator=generator))
    ).float()
    with tempfile.TemporaryDirectory() as folder:
        plain = run(build(False, pathlib.Path(folder)), x.cuda(), y.cuda())
        fast = run(build(True, pathlib.Path(folder)), x.cuda(), y.cuda())
    x64, y64 = x.double(), y.double()
    report = {"commit": commit, "inputs": x.numel(), "device": torch.cuda.get_device_name(), "functions": {}}
    for r, name in enumerate(ROWS):
        truth = exact(name, x64, y64)
        report["functions"][name] = {
            "plain_vs_fp64": errors(plain[r], truth, x64),
            "fast_vs_fp64": errors(fast[r], truth, x64),
            "fast_vs_recreated": errors(fast[r], recreated(name, x64, y64), x64),
            "fast_differs_fraction": float((fast[r] != plain[r]).double().mean()),
        }
        f = report["functions"][name]
        vs64, vsre = f["fast_vs_fp64"]["max_floor_units"], f["fast_vs_recreated"]["max_floor_units"]
        print(
            f"{name:13s} fast vs fp64 {vs64:10.3g} vs re-created {vsre:10.3g} differs {f['fast_differs_fraction']:.3f}"
        )
    r = ROWS.index("tanh")
    report["tanh_forms"] = {form: errors(fast[r], f(x64), x64) for form, f in TANH_FORMS.items()}
    for form, e in report["tanh_forms"].items():
        print(f"tanh form {form:32s} {e['max_floor_units']:10.3g} {json.dumps(e['by_abs_x'])}")
    pathlib.Path(path).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
