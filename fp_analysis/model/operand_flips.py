"""Operands a kernel may round the other way: the floor of a rewrite that rounds a linear op's operands to a reduced
format (TF32, bf16, fp16).

Rounding to a format is a step function. A kernel rounds the fp32 operand it computed; the rewrite rounds the operand
it re-created, which differs from the kernel's by the fp32 rounding error of everything before it. Where that
operand lies within that error of a rounding boundary (the midpoint between two neighbours of the format), the two
round to neighbours one spacing apart, and every output the operand reaches moves by its weight times that spacing:
one TF32 flip in an MLP's hidden activation moves a whole row of the next layer's outputs by 2^-11 of the operand,
thousands of fp32 roundings. The Monte-Carlo floor cannot see this at its size: it perturbs every result by
``amplitude`` roundings and divides the spread by ``amplitude`` (a secant), so a flip, which does not grow with the
perturbation, counts 1/amplitude of its size.

So each rounded linear op is given, in the floor's runs, one more error: Σ spacing·|other operand| over its operands
that may lie on the other side of a boundary, at ``amplitude`` times its size like every other error, so the floor
holds one flip of each such operand either way, and where none lies that close it adds nothing. How close is the
operand's own error, as the floor measures it: where the run without noise recorded the operand
(``record_operands``), a run's operand moved by the noise from it says how far an fp32 kernel's may be (``amplitude``
times its error, as every output's is); else ``amplitude``·u·|operand| (u: fp32's unit roundoff, one result's own
rounding; Higham 2002, §2.1). Operands the kernel reads exactly as the rewrite does — the Model's parameters and
buffers, its inputs, and views of them — cannot flip.
"""

from __future__ import annotations

import torch

from ..numerics.formats import FORMATS
from ..numerics.rounding import round_to
from .conv64 import run_op as _run
from .graph import multiplied

__all__ = ["exact_storages", "flip_effect", "record_operands"]

_U32 = FORMATS["fp32"].unit_roundoff
# The most the recorded operands may hold: past it the rest go unrecorded and their window is one rounding's
# (a full-size network's activations in fp64 are GBs).
_RECORD_BYTES = 2 * 1024**3


def exact_storages(tensors) -> frozenset[int]:
    """The storages of ``tensors`` (a Model's parameters, buffers and inputs, as the evaluation holds them): a
    linear operand in one of them is read by a kernel as the rewrite reads it."""
    return frozenset(t.untyped_storage().data_ptr() for t in tensors if isinstance(t, torch.Tensor))


def record_operands(record: dict, index: int, args, positions, exact: frozenset[int]) -> None:
    """Into ``record``, a copy of each operand at ``positions`` of linear op ``index`` that a kernel computes (not
    exact), within ``_RECORD_BYTES`` in all."""
    held = sum(t.numel() * t.element_size() for t in record.values())
    for p in positions:
        operand = args[p]
        if _is_exact(operand, exact) or held + operand.numel() * operand.element_size() > _RECORD_BYTES:
            continue
        record[(index, p)] = operand.detach().clone()
        held += operand.numel() * operand.element_size()


def flip_effect(func, args, kwargs, fmt: str, rounding: str, exact: frozenset[int], amplitude: float,
                centres: dict | None = None):  # fmt: skip
    """The most the linear op ``func`` (its ``args``) moves where its multiplied operands that may lie across a
    rounding boundary of ``fmt`` from the kernel's round the other way (module docstring; ``centres``: position →
    the operand recorded without noise, where it was); None where none does."""
    centres, positions = centres or {}, multiplied(func)
    flips = [
        None if _is_exact(args[p], exact) else _ambiguous(args[p], centres.get(p), fmt, rounding, amplitude)
        for p in positions
    ]
    if all(f is None for f in flips):
        return None
    magnitudes = [round_to(args[p].float(), fmt, rounding).to(args[p].dtype).abs() for p in positions]
    total = None
    for i, flip in enumerate(flips):
        if flip is None:
            continue
        new = [_zeroed(value) for value in args]  # a bias or an added matrix moves nothing
        new[positions[i]] = flip
        new[positions[1 - i]] = magnitudes[1 - i]
        moved = _run(func, tuple(new), {k: abs(v) if isinstance(v, (int, float)) else v for k, v in kwargs.items()})
        total = moved if total is None else total + moved
    return total


def _is_exact(operand, exact: frozenset[int]) -> bool:
    return not isinstance(operand, torch.Tensor) or operand.untyped_storage().data_ptr() in exact


def _ambiguous(operand: torch.Tensor, centre, fmt: str, rounding: str, amplitude: float) -> torch.Tensor | None:
    """The spacing of ``fmt`` at each element of ``operand`` that may lie across a rounding boundary from a kernel's
    (module docstring: within ``amplitude``·u·|element| of one, or within how far the noise moved it from
    ``centre``); 0 elsewhere; None where none is."""
    window = amplitude * _U32 * operand.abs()
    if isinstance(centre, torch.Tensor) and centre.shape == operand.shape:
        # the noise moved it by ``amplitude`` times an error whose roundings all went one way (or at random): one
        # such error, and the kernel's own rounding of the operand
        window = (operand - centre.to(operand.dtype)).abs() / amplitude + _U32 * operand.abs()
        operand = centre.to(operand.dtype)
    values = operand.float().to(operand.dtype)  # the fp32 value, as the rewrite rounds it
    rounded = round_to(values.float(), fmt, rounding).to(operand.dtype)
    _, exponent = torch.frexp(rounded)
    form = FORMATS[fmt]
    spacing = torch.ldexp(torch.ones_like(rounded), (exponent - form.precision).clamp_min(form.quantum_exponent_min))
    distance = spacing / 2 - (values - rounded).abs()
    near = (distance <= window) & torch.isfinite(values)
    if not bool(near.any()):
        return None
    return torch.where(near, spacing, torch.zeros_like(spacing))


def _zeroed(value):
    return torch.zeros_like(value) if isinstance(value, torch.Tensor) and value.is_floating_point() else value
