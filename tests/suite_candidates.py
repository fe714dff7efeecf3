"""Candidates for the suite's problems (tests/model_suite.py): what kernel authors get right and get wrong.

Each candidate is the reference Model's output computed another way, with the verdict fp_analysis must
reach: the same arithmetic (identical); another fp32 order (products summed in fp64 and rounded once, a
more accurate kernel); TF32 or bf16 operands with fp32 accumulation (a tensor-core kernel); GELU's tanh
form; fast-math transcendentals (each op off by up to its measured residual); and bugs that hand-written kernels
have: one channel off, one channel off by 1e-4 under fast-math (inside its allowance, but in one slice), every
border output off, the last column never written, a NaN patch, a placeholder returning zeros,
output_padding ignored by a transposed conv (the last rows left zero), the groups' weights shifted by one.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

from fp_analysis.model.autocast import FP32_OPS
from fp_analysis.model.interpose import Arithmetic, Noise, evaluate

aten = torch.ops.aten


@dataclasses.dataclass(frozen=True)
class Candidate:
    name: str
    make: Callable  # (model, x, reference output) → candidate output
    verdicts: tuple[str, ...]  # any of these is right
    applies: Callable = lambda problem, ops, reference: True
    where: Callable | None = None  # (analysis.location, reference) → the location is right


def _fp32(arithmetic: dict):
    return lambda model, x, ref: evaluate(model, [x], Arithmetic(dtype=torch.float32, **arithmetic)).output


class _ConvRewrite(TorchDispatchMode):
    """Every convolution computed by ``rewrite(func, args)`` instead: a buggy kernel inside the same Model."""

    def __init__(self, rewrite):
        super().__init__()
        self.rewrite = rewrite

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is aten.convolution.default:
            return self.rewrite(func, list(args))
        return func(*args, **(kwargs or {}))


def _rewritten(rewrite):
    def make(model, x, ref):
        with torch.no_grad(), _ConvRewrite(rewrite):
            return model(x.clone())

    return make


def _without_output_padding(func, args):
    *head, transposed, output_padding, groups = args
    if not transposed or not any(output_padding):
        return func(*args)
    y = func(*head, transposed, [0] * len(output_padding), groups)
    pad = [p for op in reversed(output_padding) for p in (0, op)]
    return F.pad(y, pad)  # the positions output_padding adds are never written


def _groups_shifted(func, args):
    groups, weight = args[8], args[1]
    if groups == 1:
        return func(*args)
    args[1] = torch.roll(weight.reshape(groups, -1, *weight.shape[1:]), 1, dims=0).reshape(weight.shape)
    return func(*args)


def _channel_offset(model, x, ref):
    out = ref.clone()
    out[:, 1] += 0.05 * float(ref.abs().max())
    return out


def _last_column_zero(model, x, ref):
    out = ref.clone()
    out[..., -1] = 0.0
    return out


def _nan_patch(model, x, ref):
    out = ref.clone()
    out.view(-1)[:3] = float("nan")
    return out


def _fast_math(model, x, ref):
    """A fast-math kernel: exp and what is built on it through __expf's rounded argument, in fp32, and one output
    in three off by a random share (uniform in ±1) of every op's measured residual up to it (on the H200, fast-math
    tanhf differs from the precise one at 0.33 of inputs, by up to 85 units: experiments/fast_math/probe.py)."""
    arithmetic = Arithmetic(dtype=torch.float32, fast_math=True)
    clean = evaluate(model, [x], arithmetic).output
    noise = Noise(torch.Generator().manual_seed(7), {}, fast_math=True, sign=1)
    worst = evaluate(model, [x], dataclasses.replace(arithmetic, noise=noise)).output
    generator = torch.Generator().manual_seed(8)
    share = (torch.rand(clean.shape, generator=generator) * 2 - 1) * (
        torch.rand(clean.shape, generator=generator) < 1 / 3
    )
    return clean + share * (worst - clean)


def _fast_math_with_a_small_channel_bug(model, x, ref):
    out = _fast_math(model, x, ref)
    out[:, 1] *= 1 + 1e-4  # inside fast-math's allowance at many outputs, but in one channel only
    return out


def _edges_off(model, x, ref):
    out = ref.clone()
    ring = torch.ones(ref.shape[2:], dtype=torch.bool)
    ring[(slice(1, -1),) * (ref.dim() - 2)] = False
    out[..., ring] *= 1 + 1e-3  # the padding handled wrongly: every output on a border
    return out


def _on_the_edges(location, ref):
    return (
        location.get("edges") is True
        and location["bad"] <= ref.numel() - ref[(..., *[slice(1, -1)] * (ref.dim() - 2))].numel()
    )


def _only_dim1_index_1(location, ref):
    return set(location.get("channels" if ref.dim() > 2 else "features", {})) == {1}


def _under_cpu_autocast(model, x, ref):
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        return model(x.clone()).float()


def _as_bfloat16_model(model, x, ref):
    with torch.no_grad():
        return copy.deepcopy(model).bfloat16()(x.bfloat16()).float()


def _cpu_runs_bf16_as_cuda(problem, ops, ref):
    """The Models whose every op the CPU runs in bf16 as CUDA does (each result rounded once from an fp32
    computation): no transposed convolution (the CPU's bf16 one does not sum in fp32, as cuDNN's does: several bf16
    ulps from a once-rounded fp32 sum at 40 % of outputs), no batch norm (the CPU's returns fp32 where cuDNN's
    returns the input's format), no 3-d pooling or padding (on the CPU's own fp32 list)."""
    transposed = any(o.name == "convolution" and o.detail.startswith("transposed") for o in ops)
    return not (transposed or any("pool3d" in o.name or "pad" in o.name or "batch_norm" in o.name for o in ops))


def _autocast_alike(problem, ops, ref):
    """The Models CPU and CUDA autocast run alike: those the CPU runs in bf16 as CUDA does
    (``_cpu_runs_bf16_as_cuda``) with none of CUDA autocast's fp32 ops (softmax, norms, exp, sums...)."""
    return _cpu_runs_bf16_as_cuda(problem, ops, ref) and not any(o.name in FP32_OPS for o in ops)


def _has(*names):
    return lambda problem, ops, ref: any(o.name in names for o in ops)


def _gelu_form(model, x, ref):
    ops = evaluate(model, [x], Arithmetic(dtype=torch.float32)).ops
    index = next(o.index for o in ops if o.name == "gelu")
    return _fp32({"forms": {index: "other_gelu"}})(model, x, ref)


def _location_channel_1(location, ref):
    """Dim 1 holds all the bad outputs: channel 1, or feature 1 of a 2-d output (a Linear's)."""
    return location.get("channels" if ref.dim() > 2 else "features") == {1: ref[:, 1].numel()}


def _location_last_column(location, ref):
    return "last 1 " in location["summary"] and location["bad"] <= ref[..., -1].numel()


CANDIDATES = [
    Candidate("identical", lambda model, x, ref: ref.clone(), ("identical",)),
    Candidate(
        "fp64_accumulated",
        lambda model, x, ref: evaluate(model, [x], Arithmetic()).output.float(),
        ("accumulation_order", "identical"),
    ),
    Candidate("tf32_operands", _fp32({"linear_format": "tf32", "accumulate": "fp32"}), ("candidate_tf32",)),
    Candidate("bf16_operands", _fp32({"linear_format": "bf16", "accumulate": "fp32"}), ("candidate_bf16",)),
    Candidate("tanh_gelu", _gelu_form, ("gelu_approximation",), _has("gelu")),
    Candidate("autocast_bf16", _under_cpu_autocast, ("candidate_bf16",), _autocast_alike),
    Candidate("bfloat16_model", _as_bfloat16_model, ("candidate_bf16",), _cpu_runs_bf16_as_cuda),
    Candidate(
        "fast_math",
        _fast_math,
        ("approximation", "accumulation_order"),  # within the plain floor where the conv's rounding dominates
        lambda problem, ops, ref: any(o.kind.value == "transcendental" for o in ops),
    ),
    Candidate(
        "channel_offset", _channel_offset, ("bug",), lambda p, ops, ref: ref.dim() >= 2 and ref.shape[1] >= 4,
        _location_channel_1,
    ),
    Candidate(
        "last_column_zero", _last_column_zero, ("bug",),
        lambda p, ops, ref: ref.dim() >= 3 and ref.shape[-1] >= 4 and bool((ref[..., -1] != 0).all()),
        _location_last_column,
    ),
    Candidate(
        "fast_math_channel_bug", _fast_math_with_a_small_channel_bug, ("bug",),
        lambda problem, ops, ref: any(o.kind.value == "transcendental" for o in ops) and ref.dim() >= 2
        and ref.shape[1] >= 4 and bool((ref[:, 1] != 0).float().mean() > 0.5),
        _only_dim1_index_1,
    ),
    Candidate(
        "edges_off", _edges_off, ("bug",),
        lambda problem, ops, ref: ref.dim() >= 4 and min(ref.shape[2:]) >= 5 and bool((ref != 0).float().mean() > 0.9),
        _on_the_edges,
    ),
    Candidate("nan_patch", _nan_patch, ("nonfinite",)),
    Candidate(
        "zeros", lambda model, x, ref: torch.zeros_like(ref), ("bug",), lambda p, ops, ref: bool(ref.abs().max() > 0)
    ),
    Candidate(
        "output_padding_ignored", _rewritten(_without_output_padding), ("bug",),
        lambda problem, ops, ref: problem.transposed_output_padding,
    ),
    Candidate("group_offset", _rewritten(_groups_shifted), ("bug",), lambda problem, ops, ref: problem.grouped),
]  # fmt: skip
