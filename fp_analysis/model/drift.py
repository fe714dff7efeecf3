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
floor's random-sign Monte-Carlo runs of the same re-creation (``floor.floor_of(..., drifts=...)``), which carry the
Model's own correlations (a row's mean errs once for every output of the row), give its spread; a side drifts where
it departs by more than ``DRIFT_Z`` spreads beyond ``DRIFT_ULPS`` fp32 units of its size — the systematic part
that legitimate arithmetic has (a constant 1/n, ε or scale rounded once, each u/2 of every output, and a few of them
compounding), which no random-sign run shows.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import torch

from ..numerics.formats import FORMATS

__all__ = ["DRIFT_ULPS", "DRIFT_Z", "Drift", "drift_of", "drifting", "drifting_outputs"]

# beyond the legitimate drift, this many spreads of rounding's. The runs draw every rounding error at its bound (±u
# of the result), fp32's are uniform within it: real rounding drifts by at most 1/√3 of the spread measured, so a
# correct kernel gets past 4 spreads measured over 8 runs with probability about 1e-4 (Student's t with 8 degrees of
# freedom beyond 4·√3); a sum of 65536 values near 11 that drops one drifts by 5 spreads
DRIFT_Z = 4.0
DRIFT_ULPS = 8.0  # the drift legitimate arithmetic may have, in fp32 unit roundoffs of the outputs' size
# fewer random-sign runs than this measure no spread (``Effort.recheck`` draws 2): the drift is not judged
_LEAST_RUNS = 4
_U32 = FORMATS["fp32"].unit_roundoff
_DIRECTIONS = ("scale", "shift")


def drift_of(departure: torch.Tensor, centre: torch.Tensor) -> torch.Tensor:
    """(scale, shift) of ``departure`` from ``centre`` (module docstring), in float64 on the CPU, over the outputs
    where both are finite; NaN where the centre is zero there (no size to measure a fraction of)."""
    finite = torch.isfinite(departure) & torch.isfinite(centre)
    d = torch.where(finite, departure, 0).double().flatten()
    y = torch.where(finite, centre, 0).double().flatten()
    count, squares = int(finite.sum()), float(torch.dot(y, y))
    if count == 0 or squares == 0.0:
        return torch.full((2,), math.nan, dtype=torch.float64)
    return torch.tensor([float(torch.dot(d, y)) / squares, float(d.sum()) / count / math.sqrt(squares / count)],
                        dtype=torch.float64)  # fmt: skip


@dataclasses.dataclass(frozen=True)
class Drift:
    """A side's drift from a re-creation beyond what rounding does: in which direction, by how much (a fraction of
    the outputs' size), and rounding's spread there."""

    direction: str  # "scale" or "shift"
    size: float
    spread: float
    outputs: int

    @property
    def words(self) -> str:
        what = (
            f"scales the outputs by 1 {'+' if self.size > 0 else '−'} {abs(self.size):.3g}"
            if self.direction == "scale"
            else f"shifts the outputs by {self.size:+.3g} of their root mean square"
        )
        return (
            f"it {what} ({abs(self.size) / _U32:.3g} fp32 unit roundoffs) where rounding in random directions, as the "
            f"Monte-Carlo runs draw it over these {self.outputs} outputs, moves them by {self.spread / _U32:.3g} "
            f"(allowed: {DRIFT_ULPS:g} + {DRIFT_Z:g} × that)"
        )


def drifting(departure: torch.Tensor, centre: torch.Tensor, runs: Sequence[torch.Tensor]) -> Drift | None:
    """The drift of ``departure`` (a side minus its re-creation ``centre``) beyond what the random-sign ``runs``
    (``drift_of`` of each run's deviation) say rounding does; None where there is none, or too few runs to say."""
    if len(runs) < _LEAST_RUNS:
        return None
    spread = torch.stack(list(runs)).pow(2).mean(0).sqrt()
    size = drift_of(departure, centre)
    for k, direction in enumerate(_DIRECTIONS):
        value, rms = float(size[k]), float(spread[k])
        if math.isfinite(value) and math.isfinite(rms) and abs(value) > DRIFT_ULPS * _U32 + DRIFT_Z * rms:
            return Drift(direction, value, rms, int(centre.numel()))
    return None


def drifting_outputs(departure: torch.Tensor, centre: torch.Tensor, drift: Drift, scale: torch.Tensor) -> torch.Tensor:
    """Where the drift shows: the outputs that depart in its direction by more than one ``scale`` (σ: the resolution
    at which only the same arithmetic agrees); all that depart in its direction where none does by that much."""
    way = centre.sign() if drift.direction == "scale" else torch.ones_like(centre)
    along = (departure * way * math.copysign(1.0, drift.size)).nan_to_num(0.0, 0.0, 0.0) > 0
    beyond = along & (departure.abs() > scale)
    return beyond if bool(beyond.any()) else along
