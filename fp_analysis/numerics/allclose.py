"""The smallest atol at which KernelBench's check passes: ``torch.allclose(reference, candidate, atol, rtol)`` at the
check's rtol, found once so that the check at any other atol is known without running anything again.

torch.allclose is ``all(isclose)``, and ``isclose(a, b)`` holds where ``a == b`` or where ``|a − b|`` is finite and
``|a − b| ≤ atol + |rtol · b|``, each operation rounded in the tensors' dtype, the Python floats ``atol`` and
``rtol`` rounded to it first (PyTorch's ``torch.isclose`` documentation and its ATen ``isclose``: ``allowed_error =
atol + (rtol * other).abs()``, ``actual_error = (self - other).abs()``). For float32 tensors, rounding to nearest is
monotone, so ``fl(A + t)`` never decreases as A grows: the check passes at every float32 atol from the smallest one
that passes, and at none below it. That smallest one is computed element by element (below), then confirmed by the
check itself — it passes there and fails at the float32 number below — and where the confirmation fails, searched by
bisection over float32's ordered bit patterns, the check deciding each step. The answer is the check's, not a model
of it.

Element by element, for a float32 ``d = |a − b| > t = |rtol · b|``: ``fl(A + t) ≥ d`` holds when the exact sum
``A + t`` reaches the midpoint between d and the float32 number below it (round to nearest; Goldberg, "What every
computer scientist should know about floating-point arithmetic", 1991, §1.2), so A is the smallest float32 at or
above ``midpoint − t`` (computed in float64; where that difference is not exact, or a tie rounds down, the
confirmation catches it).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

__all__ = ["AtolToPass", "atol_to_pass", "beyond_rtol"]

_F32_MAX = float(np.finfo(np.float32).max)
_CHUNK = 1 << 24  # elements per pass of the element-by-element estimate: its float64 copies stay at 128 MB each


class AtolToPass(NamedTuple):
    """(``known``, ``atol``): whether the check's outcome at every atol is known, and the smallest float32 atol at
    which it passes (None where no atol does: an output non-finite on one side, or where ``known`` is False)."""

    known: bool
    atol: float | None

    def passes(self, atol: float) -> bool:
        """Whether the check passes at ``atol`` (a finite number ≥ 0, rounded to float32 as allclose rounds it)."""
        return self.atol is not None and float(np.float32(atol)) >= self.atol


def atol_to_pass(reference: torch.Tensor, candidate: torch.Tensor, rtol: float) -> AtolToPass:
    """The smallest float32 atol at which ``torch.allclose(reference, candidate, atol, rtol)`` holds (see the module
    docstring). Unknown (``known`` False) unless both are float32 tensors of one shape on one device."""
    if not (
        isinstance(reference, torch.Tensor)
        and isinstance(candidate, torch.Tensor)
        and reference.dtype == candidate.dtype == torch.float32
        and reference.shape == candidate.shape
        and reference.device == candidate.device
    ):
        return AtolToPass(False, None)

    def passes(atol: float) -> bool:
        return bool(torch.allclose(reference, candidate, atol=atol, rtol=rtol))

    guess = _estimate(reference.reshape(-1), candidate.reshape(-1), rtol)
    if passes(guess) and (guess == 0.0 or not passes(_below(guess))):
        return AtolToPass(True, guess)
    if not passes(_F32_MAX):  # an output non-finite on one side only fails at every atol
        return AtolToPass(True, None)
    return AtolToPass(True, _bisect(passes))


def beyond_rtol(reference: torch.Tensor, candidate: torch.Tensor, rtol: float) -> int:
    """The outputs that fail the check at atol 0 — beyond what its rtol alone allows, in KernelBench's argument order
    (rtol scaling |candidate|), NaNs alike counted as equal: how wrong outputs are, whatever the atol (what the
    analysis chooses its trial and batch item by)."""
    return int((~torch.isclose(reference, candidate, atol=0.0, rtol=rtol, equal_nan=True)).sum())


def _estimate(reference: torch.Tensor, candidate: torch.Tensor, rtol: float) -> float:
    """The element-by-element smallest atol (the module docstring), its largest over the elements, in chunks: an
    estimate, which ``atol_to_pass`` confirms with the check."""
    largest = 0.0
    for start in range(0, reference.numel(), _CHUNK):
        a, b = reference[start : start + _CHUNK], candidate[start : start + _CHUNK]
        actual, allowed = (a - b).abs_(), (rtol * b).abs_()  # float32, as isclose computes them
        failing = (actual > allowed) & actual.isfinite()  # a non-finite difference fails at any atol: not estimated
        if not bool(failing.any()):
            continue
        d, t = actual[failing], allowed[failing]
        midpoint = (torch.nextafter(d, torch.zeros_like(d)).double() + d.double()) / 2
        needed = (midpoint - t.double()).clamp(min=0.0)
        atol = needed.float()
        atol = torch.where(atol.double() < needed, torch.nextafter(atol, torch.full_like(atol, torch.inf)), atol)
        largest = max(largest, float(atol.max()))
    return min(largest, _F32_MAX)


def _below(atol: float) -> float:
    """The float32 number below ``atol`` (itself at 0)."""
    return float(np.nextafter(np.float32(atol), np.float32(0.0))) if atol > 0 else 0.0


def _bisect(passes) -> float:
    """The smallest float32 ≥ 0 that ``passes``, which fails at 0 and passes at float32's largest: bisection over
    the bit patterns of non-negative float32s, whose order is their values' order (IEEE 754-2008, §5.10)."""
    low = 0  # fails
    high = int(np.float32(_F32_MAX).view(np.uint32))  # passes
    while high - low > 1:
        middle = (low + high) // 2
        if passes(float(np.uint32(middle).view(np.float32))):
            high = middle
        else:
            low = middle
    return float(np.uint32(high).view(np.float32))
