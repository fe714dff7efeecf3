"""One side against a re-creation of it, output by output: departures in units of σ, how many outputs pass a limit,
the largest absolute difference, and the tolerance between two re-created arithmetics.

Every comparison runs ``CHUNK`` outputs at a time in fp64, so a full-size output (a GB in fp64) needs no full-size
temporaries; NaN equals NaN and the same infinity equals itself, and a value finite on one side only is infinitely
far.
"""

from __future__ import annotations

import math

import torch

from .judge import TOLERANCE_MARGIN, Fit

__all__ = [
    "CHUNK",
    "TOLERANCE_MARGIN",
    "chunks",
    "departure_spreads",
    "departures",
    "differing",
    "fit",
    "max_abs",
    "outside",
    "same_values",
    "tolerance",
]

CHUNK = 1 << 22  # outputs compared at a time: the temporaries of a comparison stay ~100 MB


def _difference(values: torch.Tensor, recreation: torch.Tensor) -> torch.Tensor:
    """|values − recreation|: 0 where both are equal (the same ±inf, NaN on both), inf where only one is finite."""
    same = (values == recreation) | (torch.isnan(values) & torch.isnan(recreation))
    difference = (values - recreation).abs()
    return torch.where(same, torch.zeros_like(difference), difference.nan_to_num(math.inf, math.inf, math.inf))


def chunks(*tensors):
    """The tensors flattened, ``CHUNK`` outputs at a time, in fp64."""
    flat = [t.reshape(-1) for t in tensors]
    for start in range(0, flat[0].numel(), CHUNK):
        yield tuple(t[start : start + CHUNK].to(torch.float64) for t in flat)


def outside(values, recreation, scale, limit) -> torch.Tensor:
    """Where ``values`` departs from ``recreation`` by more than ``limit`` units of ``scale`` (a bool per output)."""
    parts = [_difference(v, r) > limit * s for v, r, s in chunks(values, recreation, scale)]
    return torch.cat(parts).reshape(values.shape)


def fit(values, recreation, scale, limit, fp32=None) -> Fit:
    """The largest departure of ``values`` from ``recreation`` in units of ``scale``, and how many outputs pass
    ``limit``: compared ``CHUNK`` outputs at a time, so a full-size output needs no full-size temporaries.
    ``fp32``: (σ, limit) of the plain fp32 floor, where the fit also counts the outputs that pass it (how far the
    side is from the re-creation at fp32's resolution, whatever the re-creation's own floor)."""
    worst, outside, disagree = 0.0, 0, 0
    tight = () if fp32 is None else (fp32[0],)
    for v, r, s, *sigma in chunks(values, recreation, scale, *tight):
        difference = _difference(v, r)
        units = difference / s
        worst = max(worst, float(units.max()))
        outside += int((units > limit).sum())
        if sigma:
            disagree += int((difference > fp32[1] * sigma[0]).sum())
    return Fit(worst, outside, limit, disagree=disagree if fp32 is not None else outside)


def departures(values, recreation, scale) -> torch.Tensor:
    """(values − recreation) in units of ``scale``, signed, one float32 per output, in the output's shape (for
    ``fp_analysis.model.concentration``): 0 where both are equal, +inf where only one is finite."""
    parts = []
    for v, r, s in chunks(values, recreation, scale):
        signed = torch.where(_difference(v, r) == 0, torch.zeros_like(v), v - r)
        parts.append((signed.nan_to_num(math.inf, math.inf, -math.inf) / s).to(torch.float32))
    return torch.cat(parts).reshape(values.shape)


# Outputs ``departure_spreads`` reads at most: evenly strided, so a full-size output (16 M) costs a median of 1 M.
_SPREAD_SAMPLE = 1 << 20


def departure_spreads(values: torch.Tensor, recreation: torch.Tensor, truth: torch.Tensor) -> tuple[float, float, int]:
    """How much ``values`` and ``recreation`` each depart from ``truth`` output by output, as (values' spread,
    recreation's spread, outputs): the median absolute deviation of each departure (median |d − median d|) over the
    outputs where the re-creation departs at all and all three are finite, at most ``_SPREAD_SAMPLE`` of them evenly
    strided (``judge.unlike_size``). The median's: what every output shares is left out, and a side that copies a few
    outputs from the re-creation does not move it (its breakdown point is one half: Rousseeuw & Croux 1993, J. Am.
    Stat. Assoc. 88(424), "Alternatives to the median absolute deviation")."""
    stride = max(1, -(-truth.numel() // _SPREAD_SAMPLE))
    v, r, t = (x.reshape(-1)[::stride].to(torch.float64) for x in (values, recreation, truth))
    kept = torch.isfinite(v) & torch.isfinite(r) & torch.isfinite(t) & (r != t)
    if not bool(kept.any()):
        return 0.0, 0.0, 0

    def spread(d: torch.Tensor) -> float:
        return float((d - d.median()).abs().median())

    return spread(v[kept] - t[kept]), spread(r[kept] - t[kept]), int(kept.sum())


def max_abs(a: torch.Tensor, b: torch.Tensor) -> float | None:
    """The largest finite |a − b| (None where no pair is finite on both sides)."""
    worst = None
    for x, y in chunks(a, b):
        difference = _difference(x, y)
        finite = difference[torch.isfinite(difference)]
        if finite.numel():
            worst = max(worst or 0.0, float(finite.max()))
    return worst


def tolerance(a, b, sigma_a, sigma_b, limit_a, limit_b, labels) -> dict:
    """The atol under which the two explained arithmetics pass on inputs like these: the largest |a − b| plus
    both sides' floors (each in its own σ), times ``TOLERANCE_MARGIN`` for the trials and inputs not analysed."""
    reach = 0.0
    for x, y, sa, sb in chunks(a, b, sigma_a, sigma_b):
        reach = max(reach, float((_difference(x, y) + limit_a * sa + limit_b * sb).nan_to_num(0.0, 0.0, 0.0).max()))
    atol = TOLERANCE_MARGIN * reach
    return {
        "atol": atol,
        "rtol": 0.0,
        "basis": (
            f"{TOLERANCE_MARGIN:g} × the largest |re-creation of the reference ({labels[0]}) − re-creation of the "
            f"candidate ({labels[1]})| plus both sides' floors ({limit_a:.1f} and {limit_b:.1f} units of σ), over "
            f"all {a.numel()} outputs of the trial analysed; rtol 0 because rounding error scales with Σ|w·x|, "
            "not |y|"
        ),
    }


def differing(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """The outputs where two same-shaped sides differ, a NaN equal to a NaN (``torch.equal`` calls two NaNs
    different, and two sides that give NaN at the same outputs are not in another order: the reference's own NaN
    fails the check)."""
    return ~((a == b) | (torch.isnan(a) & torch.isnan(b)))


def same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal values at every output (``differing`` nowhere), in the same shape and dtype."""
    return a.shape == b.shape and a.dtype == b.dtype and not bool(differing(a, b).any())
