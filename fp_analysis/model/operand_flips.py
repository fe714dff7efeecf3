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

So the floor of such a rewrite has more runs (``floor.floor_of``): each rounded linear op's output moved by the
flips its operands may take and by nothing else, at their full size, carried through the Model, in one run all one
way and in three each output's in a random direction; σ is at least how far they move each output. Which operands
may flip: those of the run without noise (``record_operands``) within a
window of a boundary, the window being ``_WINDOW_ERRORS`` times how far the noise runs moved the operand, over their
amplitude (``record_deviation``: the operand's own fp32 error, as the floor measures every result's), plus how far the
flips upstream moved it in this run (a kernel's flip there moves its operands here), plus one rounding of it
(u·|operand|, u fp32's unit roundoff; Higham 2002, §2.1). The noise runs add no flips: flips upstream widen a window
downstream at their own size, not at the noise's amplitude (they did, and a deep TF32 network's floor then held a
0.1 % bug). An op's flips combine as independent errors, the root of the sum of their squares (Higham & Mary
2019). Operands the kernel reads exactly as
the rewrite does — the Model's parameters and buffers, its inputs, and views of them — are not recorded and cannot
flip; nor can a computed operand past ``_RECORD_BYTES`` of recorded ones.
"""

from __future__ import annotations

import torch

from ..numerics.formats import FORMATS
from ..numerics.rounding import round_to
from .conv64 import run_op as _run
from .graph import multiplied

__all__ = ["exact_storages", "flip_effect", "record_deviation", "record_operands"]

_U32 = FORMATS["fp32"].unit_roundoff
# How many of the operand's own fp32 errors (as the noise runs measure it) its window holds: a kernel's operand comes
# from sums in another order, which differ from the re-creation's by a few of them (the floor's 8 at an output,
# ``floor.FLOOR_MULTIPLIER``, leaves a margin over that). With 1 a 3-layer TF32 MLP was a bug on one seed of four
# (a flip just outside); 4, half the floor's multiple, held it, and every planted bug of the tests is still a bug.
_WINDOW_ERRORS = 4.0
# The most the recorded operands may hold: past it the rest go unrecorded and are given no flips (a full-size
# network's activations in fp64 are GBs).
_RECORD_BYTES = 2 * 1024**3


def exact_storages(tensors) -> dict[int, int]:
    """The storages of ``tensors`` (a Model's parameters, buffers and inputs, as the evaluation holds them), each with
    its version (how many times it was written in place so far): a linear operand in one of them, not written since,
    is read by a kernel as the rewrite reads it; one the forward wrote into (``x += b``) it computed."""
    return {t.untyped_storage().data_ptr(): t._version for t in tensors if isinstance(t, torch.Tensor)}


def record_operands(record: dict, index: int, args, positions, exact: dict[int, int]) -> None:
    """Into ``record``, a copy of each operand at ``positions`` of linear op ``index`` that a kernel computes (not
    exact), within ``_RECORD_BYTES`` in all."""
    held = sum(t.numel() * t.element_size() for t in record.values())
    for p in positions:
        operand = args[p]
        if _is_exact(operand, exact) or held + operand.numel() * operand.element_size() > _RECORD_BYTES:
            continue
        record[(index, p)] = operand.detach().clone()
        held += operand.numel() * operand.element_size()


def record_deviation(noise, index: int, args, positions) -> None:
    """In a noise run, how far the noise moved each recorded operand of linear op ``index`` from where the run without
    noise had it, over the noise's amplitude (one error's size), the most over the runs so far: into
    ``noise.deviations``. The noise runs add no flips, so a flip upstream never widens a window downstream."""
    for p in positions:
        centre = noise.operands.get((index, p))
        if centre is None or centre.shape != args[p].shape:
            continue
        moved = (args[p] - centre.to(args[p].dtype)).abs() / noise.amplitude
        seen = noise.deviations.get((index, p))
        noise.deviations[(index, p)] = moved if seen is None else torch.maximum(seen, moved)


def flip_effect(func, args, kwargs, fmt: str, rounding: str, index: int, noise):
    """What linear op ``index`` (``func`` with ``args``) moves by where its recorded operands that may lie across a
    rounding boundary of ``fmt`` from a kernel's round the other way (module docstring): each such operand's spacing
    times the other operand's magnitude, flips apart combined as independent errors (the root of the sum of their
    squares); None where none may flip."""
    positions = multiplied(func)
    magnitudes = [round_to(args[p].float(), fmt, rounding).to(args[p].dtype).abs() for p in positions]
    total = None
    for i, p in enumerate(positions):
        centre = noise.operands.get((index, p))
        if centre is None or centre.shape != args[p].shape:  # exact (a parameter, an input), or not recorded
            continue
        # its fp32 error, the flips upstream (this run carries them: how far it moved the operand), one rounding
        shifted = (args[p] - centre.to(args[p].dtype)).abs()
        window = _WINDOW_ERRORS * noise.deviations.get((index, p), 0.0) + shifted + _U32 * centre.abs()
        flip = _ambiguous(centre.to(args[p].dtype), window, fmt, rounding)
        if flip is None:
            continue
        new = [_zeroed(value) for value in args]  # a bias or an added matrix moves nothing
        new[p], new[positions[1 - i]] = flip * flip, magnitudes[1 - i] * magnitudes[1 - i]
        squares = _run(func, tuple(new), {k: v * v if isinstance(v, (int, float)) else v for k, v in kwargs.items()})
        total = squares if total is None else total + squares
    return None if total is None else total.sqrt()


def _ambiguous(operand: torch.Tensor, window, fmt: str, rounding: str) -> torch.Tensor | None:
    """The spacing of ``fmt`` at each element of ``operand`` within ``window`` of a rounding boundary (0 elsewhere);
    None where none is. The boundaries of rounding to nearest are the midpoints between neighbours; of truncation
    (``rounding`` "rz"), the neighbours themselves. The spacing is that of the binade the element lies in (``frexp``
    of the element, not of its rounding: one just below a power of two rounds up to it, where the spacing above is
    twice its own)."""
    values = operand.float().to(operand.dtype)  # the fp32 value, as the rewrite rounds it
    rounded = round_to(values.float(), fmt, rounding).to(operand.dtype)
    _, exponent = torch.frexp(values)
    form = FORMATS[fmt]
    spacing = torch.ldexp(torch.ones_like(values), (exponent - form.precision).clamp_min(form.quantum_exponent_min))
    off = (values - rounded).abs()
    distance = torch.minimum(off, spacing - off) if rounding == "rz" else spacing / 2 - off
    near = (distance <= window) & torch.isfinite(values) & (values != 0)
    if not bool(near.any()):
        return None
    return torch.where(near, spacing, torch.zeros_like(spacing))


def _is_exact(operand, exact: dict[int, int]) -> bool:
    """Whether ``operand`` is in one of the ``exact`` storages, unwritten since (a view shares its base's version)."""
    if not isinstance(operand, torch.Tensor):
        return True
    return exact.get(operand.untyped_storage().data_ptr()) == operand._version


def _zeroed(value):
    return torch.zeros_like(value) if isinstance(value, torch.Tensor) and value.is_floating_point() else value
