"""Sweeps behind the experiments and notebooks: error against K, against split-K partial sums, the TF32
dilated-conv mismatch on sampled outputs, and GELU's forms through the epilogue. Each returns plain rows
(list of dicts) so a script can store them and a notebook can plot them (``pandas.DataFrame(rows)``).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..numerics import backends
from ..numerics.bounds import bound_from_sums, term_sums
from ..numerics.formats import FORMATS
from ..numerics.gelu32 import GeluForm, epilogue32, gelu32
from ..numerics.metrics import ulp
from ..numerics.orders import AccumulationSpec, Combine, Contraction, OperandRounding, Order, accumulate
from ..ops.presets import make_problem
from ..ops.reference import fp64_at
from ..ops.terms import Terms, gather_terms, sample_output_indices

__all__ = [
    "SWEEP_ORDERS",
    "cuda_gelu_forms",
    "error_vs_k",
    "error_vs_splits",
    "gelu_forms",
    "seed_mismatch",
    "seed_mismatch_full",
    "synthetic_terms",
]

_U = FORMATS["fp32"].unit_roundoff

SWEEP_ORDERS = {
    "sequential fma": AccumulationSpec(),
    "sequential separate": AccumulationSpec(contraction=Contraction.SEPARATE),
    "reverse": AccumulationSpec(Order.REVERSE),
    "tree (leaf 32)": AccumulationSpec(Order.TREE, block=32),
    "split-K 8, tree": AccumulationSpec(Order.SPLIT_K, splits=8, combine=Combine.TREE),
    "Kahan": AccumulationSpec(Order.KAHAN),
    "fp64 accumulate": AccumulationSpec(Order.FP64),
    "sequential, TF32 operands": AccumulationSpec(operand_rounding=OperandRounding.TF32),
}


def synthetic_terms(k: int, outputs: int, data: str, seed: int) -> Terms:
    """K terms for ``outputs`` dot products: ``kernelbench`` (x ~ U[0,1) as torch.rand, w ~ U(±1/√K) as
    PyTorch's default conv init) or ``zero_mean`` (both normal, w scaled by 1/√K)."""
    rng = np.random.default_rng([seed, k])
    if data == "kernelbench":
        x = rng.random((outputs, k))
        w = rng.uniform(-1, 1, (outputs, k)) / math.sqrt(k)
    elif data == "zero_mean":
        x = rng.standard_normal((outputs, k))
        w = rng.standard_normal((outputs, k)) / math.sqrt(k)
    else:
        raise ValueError(f"Got data={data!r}, but the only valid values are 'kernelbench', 'zero_mean'.")
    index = np.zeros((outputs, 4), np.int64)
    return Terms(w.astype(np.float32), x.astype(np.float32), None, index)


def _row(terms: Terms, exact: np.ndarray, label: str, spec: AccumulationSpec, **extra) -> dict:
    got = accumulate(terms.w, terms.x, spec).astype(np.float64)
    err = np.abs(got - exact)
    bound = bound_from_sums(term_sums(terms.w, terms.x), spec)
    s1 = term_sums(terms.w, terms.x).s1
    return {
        **extra,
        "order": label,
        "max_abs": float(err.max()),
        "mean_abs": float(err.mean()),
        "mean_units": float(np.mean(err / (_U * s1))),
        "deterministic_bound": float(bound.deterministic.mean()),
        "probabilistic_bound": float(bound.probabilistic.mean()),
        "mean_scale": float(s1.mean()),
    }


def error_vs_k(
    ks=(16, 64, 256, 1024, 4096, 16384),
    outputs: int = 256,
    data=("kernelbench", "zero_mean"),
    orders: dict | None = None,
    seed: int = 0,
) -> list[dict]:
    """Max/mean error against the exact dot product, per K, order and data kind, with the mean bounds."""
    rows = []
    for kind in data:
        for k in ks:
            terms = synthetic_terms(k, outputs, kind, seed)
            exact = fp64_at(terms)
            for label, spec in (orders or SWEEP_ORDERS).items():
                rows.append(_row(terms, exact, label, spec, K=k, data=kind))
    return rows


def error_vs_splits(
    k: int = 4096,
    splits=(1, 2, 4, 8, 16, 32, 64, 128, 256),
    outputs: int = 256,
    data: str = "kernelbench",
    seed: int = 0,
) -> list[dict]:
    """Error of split-K with S partial sums (tree and sequential combine) against S."""
    terms = synthetic_terms(k, outputs, data, seed)
    exact = fp64_at(terms)
    rows = []
    for s in splits:
        for combine in Combine:
            spec = AccumulationSpec(Order.SPLIT_K, splits=s, combine=combine)
            rows.append(_row(terms, exact, f"split-K, {combine.value} combine", spec, S=s, K=k, data=data))
    return rows


def seed_mismatch(samples: int = 4000, seed: int = 0, batch: int | None = 1) -> list[dict]:
    """Per sampled output of the dilated seed: where it is, and the error of fp32 (cuDNN's fmaf chain), TF32
    nearest and TF32 truncation (operands rounded, fp64 sum) against fp64, and the fp32-vs-TF32 mismatch."""
    problem = make_problem("dilated_conv2d", seed=seed, batch=batch)
    spec = problem.spec
    index = sample_output_indices(spec.output_shape(tuple(problem.x.shape)), samples, seed)
    terms = gather_terms(spec, problem.x, problem.weight, None, index)
    exact = fp64_at(terms)
    fp32 = accumulate(terms.w, terms.x, AccumulationSpec()).astype(np.float64)
    nearest, truncated = (
        accumulate(terms.w, terms.x, AccumulationSpec.reduced_precision_reference(rounding)).astype(np.float64)
        for rounding in (OperandRounding.TF32, OperandRounding.TF32_RZ)
    )
    s1 = term_sums(terms.w, terms.x).s1
    return [
        {
            "n": int(i[0]),
            "channel": int(i[1]),
            "row": int(i[2]),
            "col": int(i[3]),
            "exact": float(e),
            "err_fp32": float(abs(a - e)),
            "err_tf32_nearest": float(abs(b - e)),
            "err_tf32_truncate": float(abs(c - e)),
            "mismatch_fp32_vs_tf32": float(abs(a - b)),
            "scale": float(s),
        }
        for i, e, a, b, c, s in zip(index, exact, fp32, nearest, truncated, s1, strict=True)
    ]


def gelu_forms(lo: float = -8.0, hi: float = 8.0, n: int = 16001, seed: int = 0) -> list[dict]:
    """Error in fp32 ulps of max(|GELU(x)|, |x|) per form, against fp64 of the same form: the project's erf and
    tanh polynomials, PyTorch's fp32 erf and tanh GELU, the tanh-vs-erf model difference, and (through ×m and
    LeakyReLU) the full fp32 epilogue."""
    x = np.linspace(lo, hi, n).astype(np.float32)
    x64 = torch.from_numpy(x.astype(np.float64))
    exact_erf = torch.nn.functional.gelu(x64).numpy()
    exact_tanh = torch.nn.functional.gelu(x64, approximate="tanh").numpy()
    # Units: fp32 ulps of max(|GELU(x)|, |x|). For x ≪ 0 GELU(x) is tiny but is computed from terms of size |x|
    # (0.5·x·(1 + erf) cancels), so its error is naturally measured against |x|, not against the tiny result.
    scale = ulp(np.maximum(np.abs(exact_erf), np.abs(x.astype(np.float64))))
    forms = {
        "fp_analysis erf GELU": gelu32(x, GeluForm.NONE),
        "fp_analysis tanh GELU": gelu32(x, "tanh"),
        "torch fp32 erf GELU": torch.nn.functional.gelu(torch.from_numpy(x)).numpy(),
        "torch fp32 tanh GELU": torch.nn.functional.gelu(torch.from_numpy(x), approximate="tanh").numpy(),
    }
    rng = np.random.default_rng(seed)
    m = rng.standard_normal(n).astype(np.float32)
    y = (x / np.where(m == 0, 1, m)).astype(np.float32)  # so that y·m ≈ x: the epilogue sees the same range
    v64 = torch.nn.functional.leaky_relu(torch.from_numpy(y.astype(np.float64) * m.astype(np.float64)), 0.01)
    through = torch.nn.functional.gelu(v64).numpy()
    rows = []
    for name, values in forms.items():
        reference = exact_tanh if "tanh" in name else exact_erf
        err = np.abs(values.astype(np.float64) - reference) / scale
        rows += [{"x": float(a), "form": name, "ulps": float(e)} for a, e in zip(x, err, strict=True)]
    model = np.abs(exact_tanh - exact_erf) / scale
    rows += [
        {"x": float(a), "form": "tanh vs erf (model difference)", "ulps": float(e)}
        for a, e in zip(x, model, strict=True)
    ]
    pipeline = epilogue32(y, m, 0.01, GeluForm.NONE).astype(np.float64)
    err = np.abs(pipeline - through) / ulp(np.maximum(np.abs(through), np.abs(v64.numpy())))
    rows += [
        {"x": float(a), "form": "×m → LeakyReLU → erf GELU (fp32)", "ulps": float(e)}
        for a, e in zip(x, err, strict=True)
    ]
    return rows


def cuda_gelu_forms(lo: float = -8.0, hi: float = 8.0, n: int = 16001) -> list[dict]:
    """GELU evaluated by CUDA's erff / tanhf, precise and ``--use_fast_math`` (needs a GPU and nvcc), in the
    units of ``gelu_forms``: what fast-math does to each form."""
    from fpa_kernels.mathprobe import cuda_math_probe

    x = torch.linspace(lo, hi, n, dtype=torch.float32, device="cuda")
    x64 = x.double().cpu()
    exact = {
        "erf": torch.nn.functional.gelu(x64).numpy(),
        "tanh": torch.nn.functional.gelu(x64, approximate="tanh").numpy(),
    }
    scale = ulp(np.maximum(np.abs(exact["erf"]), np.abs(x64.numpy())))
    rows = []
    for fast in (False, True):
        values = cuda_math_probe(x, fast)
        for form, row in (("erf", 4), ("tanh", 5)):
            err = np.abs(values[row].astype(np.float64) - exact[form]) / scale
            label = f"CUDA {form} GELU{' (fast-math)' if fast else ''}"
            rows += [{"x": float(a), "form": label, "ulps": float(e)} for a, e in zip(x64.numpy(), err, strict=True)]
    return rows


def seed_mismatch_full(seed: int = 0) -> tuple[list[dict], np.ndarray]:
    """The dilated seed at full size on a GPU: cuDNN fp32 and TF32 against fp64 (summary rows) and the map of
    |fp32 − TF32| averaged over batch and channels (rows × columns)."""
    problem = make_problem("dilated_conv2d", seed=seed)
    spec = problem.spec
    x, w = problem.x.cuda(), problem.weight.cuda()
    conv = lambda a, b: torch.nn.functional.conv2d(a, b, None, spec.stride, (2, 4), spec.dilation)  # noqa: E731
    with backends.tf32(conv=False):
        fp32 = conv(x, w)
    with backends.tf32(conv=True):
        tf32 = conv(x, w)
    fp64 = conv(x.double(), w.double())
    rows = []
    for name, y in (("cudnn_fp32", fp32), ("cudnn_tf32", tf32)):
        err = (y.double() - fp64).abs()
        q = torch.quantile(
            err.flatten()[:: max(1, err.numel() // 10_000_000)],
            torch.tensor([0.5, 0.99], device="cuda", dtype=torch.float64),
        )
        rows.append(
            {
                "arithmetic": name,
                "max_abs": float(err.max()),
                "mean_abs": float(err.mean()),
                "p50": float(q[0]),
                "p99": float(q[1]),
                "allclose_fail_fraction_vs_fp64": float((err > 1e-4 + 1e-4 * fp64.abs()).double().mean()),
            }
        )
    mismatch = (fp32 - tf32).abs().mean(dim=(0, 1)).cpu().numpy()
    return rows, mismatch
