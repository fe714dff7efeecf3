"""KernelBench-format problems: load REF.py / NEW.py, find the op they compute, run the correctness check.

A problem file defines ``Model``, ``get_inputs`` and ``get_init_inputs``; a solution defines ``ModelNew``.
``run_check`` follows KernelBench's correctness protocol (``eval_kernel_against_ref``): the same seed
before each model is built, then ``trials`` trials, each seeded from a generator seeded once, with fresh
inputs from ``get_inputs()``, compared with ``torch.allclose(atol, rtol)``. Every call into the two files
goes through ``fp_analysis.usercode.UserFile.call``: each file in its own module namespace, whatever it
raises or returns wrongly a ``UserCodeError`` naming the call. These functions run inside a worker
process (``fp_analysis.worker``); ``fp_analysis.explain.explain_files`` starts it.
"""

from __future__ import annotations

import contextlib
import pathlib
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .errors import FpaError, ParameterError, UserCodeError
from .metrics import ErrorStats, error_stats
from .ops.conv import ConvSpec, conv2d_spec
from .ops.epilogue import EpilogueSpec
from .rounding import round_to
from .usercode import UserFile, check_output

__all__ = [
    "ConvOp",
    "KernelBenchError",
    "TrialResult",
    "build_models",
    "emulated_reference",
    "extract_op",
    "init_inputs",
    "load_pair",
    "mismatch_summary",
    "numpy32",
    "parameter_mismatch",
    "run_check",
    "trial_inputs",
]


class KernelBenchError(FpaError, ValueError):
    """A problem or solution file cannot be used (missing, no Model, inputs that do not fit...)."""


def load_pair(problem: str | pathlib.Path, solution: str | pathlib.Path) -> tuple[UserFile, UserFile]:
    """The problem file (Model, get_inputs, get_init_inputs) and the solution file (ModelNew), each imported
    into a namespace of its own (``fp_analysis.usercode``)."""
    reference = UserFile(problem, "problem")
    candidate = UserFile(solution, "solution")
    for side in (reference, candidate):  # both checked before either runs: a wrong path is a usage error
        if not side.path.is_file():
            raise KernelBenchError(f"{side.side} file not found: {side.path}")
    reference.load(("Model", "get_inputs", "get_init_inputs"))
    candidate.load(("ModelNew",))
    return reference, candidate


@dataclass(frozen=True)
class ConvOp:
    """The op a reference ``Model`` computes, as found in its modules: a conv, optionally × multiplier →
    LeakyReLU → GELU. Tensors are the module's own parameters (detached)."""

    spec: ConvSpec
    weight: torch.Tensor
    bias: torch.Tensor | None
    epilogue: EpilogueSpec | None = None
    multiplier: torch.Tensor | None = None


def _conv_spec(conv: nn.Module) -> ConvSpec:
    padding = conv.padding if isinstance(conv.padding, str) else tuple(conv.padding)
    if conv.padding_mode != "zeros":
        raise KernelBenchError(f"padding_mode={conv.padding_mode!r} is not supported (only 'zeros')")
    args = dict(
        in_channels=conv.in_channels,
        out_channels=conv.out_channels,
        kernel_size=tuple(conv.kernel_size),
        stride=tuple(conv.stride),
        padding=padding,
        dilation=tuple(conv.dilation),
        groups=conv.groups,
        bias=conv.bias is not None,
    )
    if isinstance(conv, nn.Conv2d):
        return conv2d_spec(**args)
    from .ops.conv import conv3d_kk1_spec

    return conv3d_kk1_spec(**args)


def extract_op(model: nn.Module) -> ConvOp:
    """Find the supported op in ``model``: exactly one Conv2d/Conv3d((k,k,1)), and for the fused op a
    parameter of shape (C_out, 1, 1), a LeakyReLU and a GELU. Raises KernelBenchError otherwise."""
    convs = [m for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Conv3d))]
    if len(convs) != 1:
        raise KernelBenchError(f"expected exactly one nn.Conv2d or nn.Conv3d in Model, found {len(convs)}")
    conv = convs[0]
    try:
        spec = _conv_spec(conv)
    except ParameterError as error:
        raise KernelBenchError(f"the Model's convolution is not a supported op: {error}") from error
    own = {id(p) for p in conv.parameters()}
    extra = [p for p in model.parameters() if id(p) not in own]
    gelus = [m for m in model.modules() if isinstance(m, nn.GELU)]
    leaky = [m for m in model.modules() if isinstance(m, nn.LeakyReLU)]
    weight = conv.weight.detach()
    bias = conv.bias.detach() if conv.bias is not None else None
    if not extra:
        return ConvOp(spec, weight, bias)
    shape = (spec.out_channels,) + (1,) * spec.spatial_dims
    if len(extra) != 1 or tuple(extra[0].shape) != shape:
        raise KernelBenchError(f"Model has parameters besides the conv that are not one multiplier of shape {shape}")
    slope = leaky[0].negative_slope if leaky else 0.01
    form = gelus[0].approximate if gelus else "none"
    return ConvOp(spec, weight, bias, EpilogueSpec(negative_slope=slope, approximate=form), extra[0].detach())


@contextlib.contextmanager
def emulated_reference(mode: str):
    """Within the block, F.conv2d/conv3d on CPU float32 tensors round input and weight to ``mode`` (nearest even),
    sum in fp64 and round the result to fp32: what a TF32 / bf16 / fp16 reference computes, to within fp32
    accumulation error (shared/facts: cuDNN TF32 vs this emulation, 6.3e-6 on seed 000). ``fp32`` changes nothing."""
    if mode == "fp32":
        yield
        return
    if mode not in ("tf32", "bf16", "fp16"):
        raise ParameterError(
            f"Got reference_mode={mode!r}, but the only valid values are 'fp32', 'tf32', 'bf16', 'fp16'."
        )
    originals = {name: getattr(F, name) for name in ("conv2d", "conv3d")}

    def wrap(original):
        def conv(input, weight, bias=None, *args, **kwargs):
            if input.dtype != torch.float32:
                return original(input, weight, bias, *args, **kwargs)
            x64, w64 = round_to(input, mode).double(), round_to(weight, mode).double()
            b64 = bias.double() if bias is not None else None
            return original(x64, w64, b64, *args, **kwargs).float()

        return conv

    try:
        for name, original in originals.items():
            setattr(F, name, wrap(original))
        yield
    finally:
        for name, original in originals.items():
            setattr(F, name, original)


@dataclass
class TrialResult:
    """One KernelBench trial: what its allclose check saw (``stats``: candidate against reference)."""

    trial: int
    seed: int
    passed: bool
    stats: ErrorStats
    inputs: list = field(default_factory=list, repr=False)
    reference: torch.Tensor | None = field(default=None, repr=False)
    candidate: torch.Tensor | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        s = self.stats
        return {
            "trial": self.trial,
            "seed": self.seed,
            "passed": self.passed,
            "max_abs": s.max_abs,  # over pairs where both are finite; None if there is none
            "mean_abs": s.mean_abs,
            "allclose_fail_fraction": s.allclose_fail_fraction,
            "nonfinite": s.nonfinite.to_dict(),
        }


def mismatch_summary(results: list[TrialResult], atol: float, rtol: float) -> dict:
    """What the check saw over all trials: the largest finite difference, failures, and NaN/Inf counted apart.

    ``max_abs`` is over the outputs where both sides are finite (None where no trial has one); the
    ``nonfinite`` block counts NaN and ±inf on each side and the outputs where only one side is finite,
    so an all-NaN candidate never reads as "max |difference| 0".
    """
    finite = [r.stats for r in results if r.stats.max_abs is not None]
    worst = max(results, key=lambda r: r.stats.nonfinite.mismatched_nonfinite)
    nonfinite = worst.stats.nonfinite
    return {
        "max_abs": max((s.max_abs for s in finite), default=None),
        "mean_abs": float(np.mean([s.mean_abs for s in finite])) if finite else None,
        "allclose_fail_fraction": max(r.stats.allclose_fail_fraction for r in results),
        "failed_trials": sum(not r.passed for r in results),
        "outputs": results[0].stats.count,
        "finite_pairs": min(r.stats.finite_count for r in results),
        "nonfinite": {**nonfinite.to_dict(), "trial": worst.trial},
        "atol": atol,
        "rtol": rtol,
    }


def _set_seed(seed: int) -> None:
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


def init_inputs(problem: UserFile) -> list:
    """``get_init_inputs()`` of the problem, checked to be a list or tuple."""
    init = problem.call("get_init_inputs()", problem.module.get_init_inputs)
    if not isinstance(init, (list, tuple)):
        raise UserCodeError(
            f"get_init_inputs() returned a {type(init).__name__}, not a list",
            side="problem",
            where="get_init_inputs()",
            fate="bad_output",
        )
    return list(init)


def build_models(problem: UserFile, solution: UserFile, device: torch.device, seed: int):
    """Model and ModelNew built as KernelBench builds them (same seed before each), on ``device``."""
    init = init_inputs(problem)
    _set_seed(seed)
    reference = problem.call("Model(*get_init_inputs())", lambda: problem.module.Model(*init).to(device))
    _set_seed(seed)
    candidate = solution.call("ModelNew(*get_init_inputs())", lambda: solution.module.ModelNew(*init).to(device))
    return reference, candidate


def trial_inputs(problem: UserFile, device: torch.device, detail: str | None = None) -> list:
    """``get_inputs()`` of the problem, checked to be a list, its tensors moved to ``device``."""
    inputs = problem.call("get_inputs()", problem.module.get_inputs, detail=detail)
    if not isinstance(inputs, (list, tuple)):
        raise UserCodeError(
            f"get_inputs() returned a {type(inputs).__name__}, not a list",
            side="problem",
            where="get_inputs()",
            fate="bad_output",
            details={"detail": detail} if detail else None,
        )
    return [t.to(device) if isinstance(t, torch.Tensor) else t for t in inputs]


def run_check(
    problem: UserFile,
    solution: UserFile,
    device: torch.device,
    *,
    trials: int = 5,
    seed: int = 42,
    atol: float = 1e-4,
    rtol: float = 1e-4,
    reference_mode: str = "fp32",
    keep: int = 1,
):
    """Run KernelBench's correctness check; returns (reference model, candidate model, [TrialResult]).

    The first ``keep`` trials keep their inputs and outputs for the analysis. ``reference_mode`` emulates
    the reference's operand precision on a CPU (``emulated_reference``). The candidate gets its own copy
    of each trial's inputs, so a kernel that writes into its input cannot change what is analysed.
    """
    reference, candidate = build_models(problem, solution, device, seed)
    generator = torch.Generator().manual_seed(seed)
    results = []
    with torch.no_grad():
        for trial in range(trials):
            detail = f"trial {trial + 1} of {trials}"
            trial_seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator).item())
            _set_seed(trial_seed)
            inputs = trial_inputs(problem, device, detail)
            with emulated_reference(reference_mode):
                ref_out = problem.call("Model.forward", reference, *inputs, detail=detail)
            check_output(ref_out, "Model.forward", "problem", detail=detail)
            own = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
            cand_out = solution.call("ModelNew.forward", candidate, *own, detail=detail)
            check_output(cand_out, "ModelNew.forward", "solution", like=ref_out, detail=detail)
            stats = error_stats(cand_out, ref_out, atol=atol, rtol=rtol)
            results.append(
                TrialResult(
                    trial,
                    trial_seed,
                    bool(torch.allclose(cand_out, ref_out, atol=atol, rtol=rtol)),
                    stats,
                    inputs if trial < keep else [],
                    ref_out if trial < keep else None,
                    cand_out if trial < keep else None,
                )
            )
    return reference, candidate, results


def parameter_mismatch(reference: nn.Module, candidate: nn.Module) -> list[str]:
    """Evidence lines for parameters that cannot be matched by shape and value (empty: all match).

    Parameters are compared by shape, as the two models may name them differently: each reference
    parameter must equal (bitwise) some candidate parameter of the same shape.
    """
    cand = [(n, p.detach()) for n, p in candidate.named_parameters()]
    problems = []
    for name, p in reference.named_parameters():
        same_shape = [(n, q) for n, q in cand if q.shape == p.shape]
        if not same_shape:
            problems.append(f"reference parameter {name} {tuple(p.shape)} has no candidate parameter of that shape")
        elif not any(torch.equal(p.detach().to(q.device), q) for _, q in same_shape):
            diff = min(float((p.detach().to(q.device) - q).abs().max()) for _, q in same_shape)
            names = ", ".join(n for n, _ in same_shape)
            problems.append(
                f"reference parameter {name} {tuple(p.shape)} differs from candidate {names} "
                f"(max |difference| {diff:.3g})"
            )
    return problems


def numpy32(t: torch.Tensor) -> np.ndarray:
    """A detached float32 CPU copy as numpy."""
    return t.detach().to("cpu", torch.float32).numpy()
