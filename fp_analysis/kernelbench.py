"""KernelBench-format problems: load REF.py / NEW.py, find the op they compute, run the correctness check.

A problem file defines ``Model``, ``get_inputs`` and ``get_init_inputs``; a solution defines ``ModelNew``.
``run_check`` follows KernelBench's correctness protocol (``eval_kernel_against_ref``): the same seed
before each model is built, then ``trials`` trials, each seeded from a generator seeded once, with fresh
inputs from ``get_inputs()``, compared with ``torch.allclose(atol, rtol)``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import pathlib
import sys
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .errors import FpaError, ParameterError
from .metrics import error_stats
from .ops.conv import ConvSpec, conv2d_spec
from .ops.epilogue import EpilogueSpec
from .rounding import round_to

__all__ = [
    "ConvOp",
    "KernelBenchError",
    "TrialResult",
    "build_models",
    "emulated_reference",
    "extract_op",
    "load_module",
    "load_pair",
    "numpy32",
    "parameter_mismatch",
    "run_check",
]


class KernelBenchError(FpaError, ValueError):
    """A problem or solution file cannot be used (missing, no Model, inputs that do not fit...)."""


def load_module(path: str | pathlib.Path, names: tuple[str, ...]):
    """Import the Python file at ``path`` and check that it defines ``names``."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise KernelBenchError(f"file not found: {path}")
    spec = importlib.util.spec_from_file_location(f"fpa_user_{path.stem}_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))  # KernelBench files may import helpers beside them
    try:
        spec.loader.exec_module(module)
    except Exception as error:  # the user's file: report whatever it raised, as a usage error
        raise KernelBenchError(f"{path} failed to import: {type(error).__name__}: {error}") from error
    finally:
        sys.path.remove(str(path.parent))
    missing = [n for n in names if not hasattr(module, n)]
    if missing:
        raise KernelBenchError(
            f"{path} does not define {', '.join(missing)} (a KernelBench "
            f"{'problem' if 'Model' in names else 'solution'} must)"
        )
    return module


def load_pair(problem: str | pathlib.Path, solution: str | pathlib.Path):
    """The problem module (Model, get_inputs, get_init_inputs) and the solution module (ModelNew)."""
    return (load_module(problem, ("Model", "get_inputs", "get_init_inputs")), load_module(solution, ("ModelNew",)))


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
    """One KernelBench trial: what its allclose check saw."""

    trial: int
    seed: int
    passed: bool
    max_abs: float
    mean_abs: float
    allclose_fail_fraction: float
    inputs: list = field(default_factory=list, repr=False)
    reference: torch.Tensor | None = field(default=None, repr=False)
    candidate: torch.Tensor | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        return {
            "trial": self.trial,
            "seed": self.seed,
            "passed": self.passed,
            "max_abs": self.max_abs,
            "mean_abs": self.mean_abs,
            "allclose_fail_fraction": self.allclose_fail_fraction,
        }


def _set_seed(seed: int) -> None:
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


def build_models(problem, solution, device: torch.device, seed: int):
    """Model and ModelNew built as KernelBench builds them (same seed before each), on ``device``."""
    init = problem.get_init_inputs()
    _set_seed(seed)
    try:
        reference = problem.Model(*init).to(device)
    except Exception as error:
        raise KernelBenchError(f"Model(*get_init_inputs()) failed: {type(error).__name__}: {error}") from error
    _set_seed(seed)
    try:
        candidate = solution.ModelNew(*init).to(device)
    except Exception as error:
        raise KernelBenchError(f"ModelNew(*get_init_inputs()) failed: {type(error).__name__}: {error}") from error
    return reference, candidate


def run_check(
    problem,
    solution,
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
    the reference's operand precision on a CPU (``emulated_reference``).
    """
    reference, candidate = build_models(problem, solution, device, seed)
    generator = torch.Generator().manual_seed(seed)
    results = []
    with torch.no_grad():
        for trial in range(trials):
            trial_seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator).item())
            _set_seed(trial_seed)
            inputs = [t.to(device) if isinstance(t, torch.Tensor) else t for t in problem.get_inputs()]
            with emulated_reference(reference_mode):
                ref_out = reference(*inputs)
            try:
                cand_out = candidate(*inputs)
            except Exception as error:
                raise KernelBenchError(f"ModelNew.forward failed: {type(error).__name__}: {error}") from error
            if not isinstance(cand_out, torch.Tensor) or cand_out.shape != ref_out.shape:
                got = tuple(cand_out.shape) if isinstance(cand_out, torch.Tensor) else type(cand_out).__name__
                raise KernelBenchError(f"output shapes differ: Model gives {tuple(ref_out.shape)}, ModelNew {got}")
            stats = error_stats(cand_out, ref_out, atol=atol, rtol=rtol)
            results.append(
                TrialResult(
                    trial,
                    trial_seed,
                    bool(torch.allclose(cand_out, ref_out, atol=atol, rtol=rtol)),
                    stats.max_abs or 0.0,
                    stats.mean_abs or 0.0,
                    stats.allclose_fail_fraction,
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
