"""A drift: a departure that moves the whole output one way — scaled or shifted — which rounding does not do.

The floor allows each output ``FLOOR_MULTIPLIER`` σ on its own. Where σ is wide (any order of a long sum errs as a
sequential sum does, u·√(Σ_k s_k²)), a bug that moves every output by a few σ in the same direction fits it at every
output: a sum of 65536 values near 11 that drops one, a LayerNorm whose ε is ten times too large at a mean of 100
(a held-out set of ours had eight such bugs explained as ``accumulation_order``). Rounding errs in random directions
(the probabilistic model of Higham & Mary 2019, SIAM J. Sci. Comput. 41(5), the one the floor's random-sign runs
draw from): over many outputs its errors cancel in any one direction, a bug's add up.

Two directions are measured, as fractions of the outputs' size: the **scale**, Σ d·y / Σ y² (the least-squares
factor by which the departure d scales the re-creation y: a wrong ε, n − 1 for n), and the **shift**, mean(d) /
rms(y) (a dropped or doubled term, a constant added). What rounding does in each is measured, not assumed: the
floor's random-sign Monte-Carlo runs of the same re-creation (``floor.floor_of(..., run_drifts=...)``), which carry
the Model's own correlations (a row's mean errs once for every output of the row), give its spread. The candidate
drifts where it departs by more than ``DRIFT_Z`` spreads beyond the systematic part legitimate arithmetic has, which
no random-sign run shows: ``DRIFT_ULPS`` fp32 units of the outputs' size (a constant 1/n, ε or scale rounded once
moves every output by u/2, and a few of them compound), or ``floor.FLOOR_MULTIPLIER`` times what the floor's
one-sign runs (every rounding one way) or the fp32 Model itself drift by where that is more, as the floor takes
``FLOOR_MULTIPLIER`` times its runs at each output: a scale rounded to fp32 and applied 24 times drifts 12 u, a
rounded constant inside exp() is multiplied by |x|, and x − mean(x) at a mean of 100 magnifies the mean's one
rounding (1/n rounded, shared by the row) a hundredfold.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import torch

from ..numerics.formats import FORMATS
from .compare import CHUNK, chunks

__all__ = ["DRIFT_ULPS", "DRIFT_Z", "LEAST_RUNS", "Drift", "drift_of", "drifting", "drifting_outputs"]

# beyond the legitimate drift, this many spreads of rounding's. The runs draw every rounding error at its bound (±u
# of the result), fp32's are uniform within it: real rounding drifts by at most 1/√3 of the spread measured, so a
# correct kernel gets past 4 spreads measured over 8 runs with probability about 1.2e-4 per direction (Student's t
# with 8 degrees of freedom beyond 4·√3); a sum of 65536 values near 11 that drops one drifts by 5 spreads
DRIFT_Z = 4.0
DRIFT_ULPS = 8.0  # the drift legitimate arithmetic may have, in fp32 unit roundoffs of the outputs' size
# fewer random-sign runs than this measure the spread too loosely for DRIFT_Z (``Effort.recheck`` draws 2, fuzzing 4):
# the drift is not judged
LEAST_RUNS = 8
_U32 = FORMATS["fp32"].unit_roundoff
_DIRECTIONS = ("scale", "shift")


def _finite(values: torch.Tensor, centre: torch.Tensor):
    """(departure, centre) in fp64, ``compare.CHUNK`` outputs at a time, each 0 where either is not finite."""
    for v, y in chunks(values, centre):
        finite = torch.isfinite(v) & torch.isfinite(y)
        yield torch.where(finite, v - y, 0.0), torch.where(finite, y, 0.0), finite


def drift_of(values: torch.Tensor, centre: torch.Tensor) -> torch.Tensor:
    """(scale, shift) of ``values`` from ``centre`` (module docstring), in float64 on the CPU, over the outputs where
    both are finite; NaN where the centre is zero there (no size to measure a fraction of)."""
    along, total, squares, count = 0.0, 0.0, 0.0, 0
    for d, y, finite in _finite(values, centre):
        along += float(torch.dot(d, y))
        total += float(d.sum())
        squares += float(torch.dot(y, y))
        count += int(finite.sum())
    if count == 0 or squares == 0.0:
        return torch.full((2,), math.nan, dtype=torch.float64)
    return torch.tensor([along / squares, total / count / math.sqrt(squares / count)], dtype=torch.float64)


@dataclasses.dataclass(frozen=True)
class Drift:
    """The candidate's drift from a re-creation beyond what rounding does: in which direction, by how much (a fraction
    of the outputs' size), rounding's spread there and what legitimate arithmetic is allowed."""

    direction: str  # "scale" or "shift"
    size: float
    spread: float
    allowed: float  # the legitimate drift (module docstring), before the spreads

    @property
    def words(self) -> str:
        what = (
            f"scales the outputs by 1 {'+' if self.size > 0 else '−'} {abs(self.size):.3g}"
            if self.direction == "scale"
            else f"shifts the outputs by {self.size:+.3g} of their root mean square"
        )
        return (
            f"it {what} ({abs(self.size) / _U32:.3g} fp32 unit roundoffs) where rounding in random directions, as the "
            f"Monte-Carlo runs draw it over these outputs, moves them by {self.spread / _U32:.3g} (allowed: "
            f"{self.allowed / _U32:.3g} + {DRIFT_Z:g} × that)"
        )


def drifting(values, centre, runs: Sequence[torch.Tensor], legitimate: torch.Tensor) -> Drift | None:
    """The drift of ``values`` (the candidate) from ``centre`` (its re-creation) beyond what the random-sign ``runs``
    (``drift_of`` of each run, over its amplitude) say rounding does and what legitimate arithmetic may have
    (``legitimate``: per direction, the floor's multiple of the fp32 Model's own drift and of the one-sign runs', at
    least ``DRIFT_ULPS``; module docstring); None where there is none, or too few runs to say."""
    if len(runs) < LEAST_RUNS:
        return None
    spread = torch.stack(list(runs)).pow(2).mean(0).sqrt()
    size = drift_of(values, centre)
    for k, direction in enumerate(_DIRECTIONS):
        value, rms, own = float(size[k]), float(spread[k]), float(legitimate[k])
        allowed = max(DRIFT_ULPS * _U32, own if math.isfinite(own) else 0.0)
        if math.isfinite(value) and math.isfinite(rms) and abs(value) > allowed + DRIFT_Z * rms:
            return Drift(direction, value, rms, allowed)
    return None


def drifting_outputs(values: torch.Tensor, centre: torch.Tensor, drift: Drift, scale: torch.Tensor) -> torch.Tensor:
    """Where the drift shows: the outputs that depart in its direction by more than one ``scale`` (σ: the resolution
    at which only the same arithmetic agrees); all that depart in its direction where none does by that much."""
    along = torch.empty(centre.numel(), dtype=torch.bool, device=centre.device)
    beyond = torch.empty_like(along)
    flat_scale = scale.reshape(-1)
    for start, (d, y, _) in zip(range(0, centre.numel(), CHUNK), _finite(values, centre), strict=True):
        way = y.sign() if drift.direction == "scale" else torch.ones_like(y)
        moved = d * way * math.copysign(1.0, drift.size) > 0
        along[start : start + CHUNK] = moved
        beyond[start : start + CHUNK] = moved & (d.abs() > flat_scale[start : start + CHUNK])
    chosen = beyond if bool(beyond.any()) else along
    return chosen.reshape(centre.shape)
