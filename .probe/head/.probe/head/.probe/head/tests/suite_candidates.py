"""Candidates for the suite's problems (tests/model_suite.py): what kernel authors get right and get wrong.

Each candidate is the reference Model's output computed another way, with the verdict fp_analysis must
reach: the same arithmetic (identical); another fp32 order (products summed in fp64 and rounded once, a
more accurate kernel); TF32 or bf16 operands with fp32 accumulation (a tensor-core kernel); GELU's tanh
form; fast-math transcendentals (100 ulp, under --use_fast_math's 133); and bugs that hand-written kernels
have: one channel off, the last column never written, a NaN patch, a placeholder returning zeros,
output_padding ignored by a transposed conv (the last rows left zero), the groups' weights shifted by one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

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
    generator = torch.Generator().manual_seed(7)
    return evaluate(model, [x], Arithmetic(dtype=torch.float32, noise=Noise(generator, {}, 100.0))).output


def _has(*names):
    return lambda problem, ops, ref: any(o.name in names for o in ops)


def _gelu_form(model, x, ref):
    ops = evaluate(model, [x], Arithmetic(dtype=torch.float32)).ops
    index = next(o.index for o in ops if o.name == "gelu")
    return _fp32({"forms": {index: "other_gelu"}})(model, x, ref)


def _location_channel_1(location, ref):
    return location.get("channels") == {1: ref[:, 1].numel()}


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
