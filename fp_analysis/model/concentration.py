"""Whether a side's departure from a re-creation is concentrated in one structural slice of the output: then it is
not arithmetic, however small.

Rounding error is the same process at every output: measured in units of σ (each output's own floor scale, which
already carries how large its sums and values are), a re-creation's residual has one distribution over the whole
output. A bug that touches one channel, one batch item, one feature, a band of rows or the edges does not: the
outputs of that slice depart by many times what the others do, even when every one of them stays inside the floor (a
wide floor — fast-math's — can hold a 1e-4 bug). So before a re-creation is accepted the residual is split by the
output's structure (each index of each dim, each batch item × channel, the ring of outputs on a spatial edge) and each
slice's upper quartile (``QUANTILE``, over the outputs that depart at all) is held against the rest's: a quantile, not
the largest value, because a few outputs near a kink (a ReLU at 0, where σ is least) have residuals in units of σ that
say nothing about the slice; the upper quartile, not the median, so that a bug in a slice that a ReLU half zeroes is
still seen.

A slice is concentrated when most of its departures pass max(``MIN_UNITS``, ``RATIO`` × the rest's upper quartile)
and that many passing is beyond chance (a binomial tail below ``CHANCE``, given how often the rest's pass), or when
its mean departure (signed) differs from the rest's by at least ``MIN_UNITS`` and by ``SHIFT_T`` standard errors
(Welch's t-test over at least 32 outputs; each departure clipped at ``_CLIP`` units, so one output near a kink does
not carry a mean). ``MIN_UNITS``: an fp32 evaluation's error at an output is at most about σ and usually a fraction
of it (σ is the worst-sign spread, ``fp_analysis.model.floor``; the tests' fp32 orders leave upper quartiles of
0.2–0.4), so departures above 2 σ over most of a slice are beyond what fp32 arithmetic does in another order.
``RATIO``: a bug moves its slice by far more than the order-to-order spread. The chance test keeps a small slice
that an approximation's occasional large error reaches (fast-math tanhf differs from tanhf at one input in three,
by up to 85 units) from being called a bug. The mean test sees what the quartile cannot: a bias smaller than an
approximation's own scatter (a 1e-4 bug in a channel moves every output of it the same way); rounding to nearest is
unbiased, and 6 standard errors is a chance of 2e-9 per slice. Slices of more than half the output are not tested
(the "rest" would be the smaller part).
"""

from __future__ import annotations

import dataclasses
import math

import torch

from .locate import dim_names

__all__ = ["CHANCE", "MIN_OUTPUTS", "MIN_UNITS", "QUANTILE", "RATIO", "SHIFT_T", "Concentration", "concentration"]

RATIO = 8.0
QUANTILE = 0.75
SHIFT_T = 6.0
CHANCE = 1e-9
_MIN_SHIFT_OUTPUTS = 32  # a mean of fewer, with an approximation's heavy-tailed scatter, is not near normal
_CLIP = 200.0  # |departure| counted in a slice's mean at most this (outputs near a kink have any)
MIN_UNITS = 2.0
MIN_OUTPUTS = 8


@dataclasses.dataclass(frozen=True)
class Concentration:
    """Slices whose residual stands out: what they are in words, the residual's upper quartile there and elsewhere
    (units of σ), and ``departing``: the outputs of those slices above the level the rest never reaches (a bool per
    output)."""

    slices: list[str]
    inside: float
    outside: float
    departing: torch.Tensor

    @property
    def words(self) -> str:
        shown = ", ".join(self.slices[:4]) + (f" and {len(self.slices) - 4} more" if len(self.slices) > 4 else "")
        return (
            f"its departure is concentrated in {shown} (upper quartile {self.inside:.3g} units of σ there, "
            f"{self.outside:.3g} elsewhere)"
        )


def concentration(
    units: torch.Tensor, least: float = MIN_UNITS, baseline: torch.Tensor | None = None, shared_least: float = 0.0
) -> Concentration | None:
    """The slices of the output in which ``units`` (a side's departure from a re-creation in units of σ, signed,
    one per output, in the output's shape) is concentrated (module docstring), or None where no slice stands out.
    ``least``: the departure a slice must pass, at least ``MIN_UNITS``; the engine passes the fp32 Model's own worst
    error in units of σ where that is more (a norm's statistics err alike over a group: a shift of up to that size
    along a slice is the fp32 arithmetic's own). ``baseline``: the fp32 Model's own departure from the truth, in the
    same units, where given: a slice whose outputs share one computed value (a row's mean in x − mean(x), a row's
    softmax denominator) moves as that value errs, and in another order of its sum that value errs as far as the
    floor lets any output, many times what the fp32 Model's pairwise sums do. So along a slicing where the fp32
    Model's own slices are shifted (by ``SHIFT_T`` standard errors: outputs that share nothing are not), a slice's
    shift counts past ``shared_least`` (the engine's floor; at a mean of 100, rows of x − mean(x) shifted by 2 σ
    through 1/n rounded, and softmax rows through a sequential denominator, were called a bug); along any other
    slicing, past ``least`` (a sum's one feature scaled by 1e-6 departs by 14 σ there, while every output's floor
    is 20)."""
    least = max(MIN_UNITS, least)
    signed = units.detach().to(torch.float32)  # where it is: on a GPU, a full-size output's sorts take milliseconds
    signed = torch.where(torch.isnan(signed), torch.full_like(signed, float("inf")), signed)
    u = signed.abs()
    if u.dim() == 0 or u.numel() < 2 * MIN_OUTPUTS:
        return None
    total = _totals(signed.clamp(-_CLIP, _CLIP))
    overall = _quantile(u.reshape(1, -1))[0].item()
    departing = int((u != 0).sum())
    flagged: list[tuple[str, torch.Tensor, float, float]] = []
    own = (
        None if baseline is None else baseline.detach().to(torch.float32).nan_to_num(0.0, 0.0, 0.0).clamp(-_CLIP, _CLIP)
    )
    own_slicings = _slicings(own, dim_names(u.dim())) if own is not None else None
    own_total = None if own is None else _totals(own)
    for label, rows, mask_of in _slicings(signed, dim_names(u.dim())):
        shares = own_slicings is not None and float(_gaps(next(own_slicings)[1], own_total)[1].max()) >= SHIFT_T
        size = rows.shape[1]  # every slice of a slicing has as many outputs
        if 2 * size > u.numel():
            continue
        magnitudes = rows.abs()
        levels = _quantile(magnitudes)
        shifted = _shift_t(rows.clamp(-_CLIP, _CLIP), total, max(least, shared_least) if shares else least)
        # most of a slice above ``least`` needs its upper quartile above it: only those slices are looked at closer
        by_level, by_shift = (torch.nonzero(m).flatten().tolist() for m in (levels >= least, shifted))
        order = list(dict.fromkeys(by_level + by_shift))
        if not order:
            continue
        looked = torch.tensor(order, device=rows.device)
        # the rest's quartile: the whole output's where a slice is a twentieth of it or less (it moves the quartile by
        # at most that share of outputs), else counted without the slice
        alone = 20 * size > u.numel()
        outsides = [_quantile(u[~mask_of(g)].reshape(1, -1))[0].item() for g in order] if alone else None
        level_of = [max(least, RATIO * o) for o in outsides] if alone else [max(least, RATIO * overall)] * len(order)
        picked = magnitudes[looked]  # over the outputs that depart at all, as the quartiles are: zeros say nothing
        limits = torch.tensor(level_of, dtype=picked.dtype, device=picked.device).unsqueeze(1)
        counts = torch.stack([(picked != 0).sum(1), (picked > limits).sum(1)]).tolist()  # one transfer a slicing
        inside, shift = levels[looked].tolist(), shifted[looked].tolist()
        above = {level: int((u > level).sum()) for level in set(level_of)}
        for i, (g, n, k) in enumerate(zip(order, *counts, strict=True)):
            p = (above[level_of[i]] - k) / max(1, departing - n)  # how often the rest's departures pass the level
            if shift[i] or _mostly_above(n, k, p):
                flagged.append((label(g), mask_of(g), inside[i], outsides[i] if alone else overall))
    if not flagged:
        return None
    # what the rest leaves, where it is cleanest: a slice that overlaps the bad one has the bad outputs in its rest
    level = max(least, min(outside for *_, outside in flagged))
    high = u > level
    # the slices named: those mostly departing (a channel with one bad batch item is not "the channel"), and of
    # those, the largest (not each batch item of a bad channel again)
    named = sorted(
        (f for f in flagged if 2 * int((high & f[1]).sum()) >= int((f[1] & (u != 0)).sum())),
        key=lambda f: -int(f[1].sum()),
    )
    kept: list[tuple[str, torch.Tensor, float, float]] = []
    for f in named:
        if not any(bool((f[1] <= k[1]).all()) for k in kept):
            kept.append(f)
    kept = kept or flagged[:1]
    union = torch.zeros_like(high)  # a slice that only overlaps a bad one (a row through a bad channel) adds nothing
    for _, mask, _, _ in kept:
        union |= mask
    _, _, inside, outside = max(kept, key=lambda f: f[2] / max(f[3], 1e-30))
    return Concentration([words for words, *_ in kept], inside, outside, union & high)


def _mostly_above(n: int, k: int, p: float) -> bool:
    """Whether most of a slice's ``n`` departures pass the level (``k`` of them do) and that many passing is beyond
    chance given how often the rest's do (``p``, their share above it): the binomial tail P(X ≥ k) for
    X ~ Binomial(n, p), bounded by Chernoff's exp(−n·KL(k/n ‖ p)) (Hoeffding 1963, Theorem 1), below ``CHANCE``. A
    slice of a few outputs that an approximation's occasional large error reaches (fast-math tanhf's, at one input in
    three) is within chance."""
    if n < MIN_OUTPUTS or 2 * k < n:
        return False
    q = k / n
    if p >= q:
        return False
    divergence = q * math.log(q / p) if p > 0 else math.inf
    if q < 1:
        divergence += (1 - q) * math.log((1 - q) / (1 - p))
    return n * divergence > -math.log(CHANCE)


def _totals(clipped: torch.Tensor) -> tuple[int, float, float]:
    """(outputs that depart at all, their sum, their sum of squares): what ``_gaps`` takes each slice's rest from."""
    return int((clipped != 0).sum()), float(clipped.double().sum()), float(clipped.double().square().sum())


def _gaps(rows: torch.Tensor, total: tuple[int, float, float]):
    """For each row (slice): how far its mean departure is from the rest's, that gap in standard errors (Welch's
    t), and the outputs that depart in it and in the rest."""
    n, s, ss = total
    rows = rows.double()
    n_in = (rows != 0).sum(dim=1).to(torch.float64)  # over the outputs that depart at all (zeros add to no sum)
    s_in, ss_in = rows.sum(dim=1), rows.square().sum(dim=1)
    n_out, s_out, ss_out = n - n_in, s - s_in, ss - ss_in
    mean_in, mean_out = s_in / n_in.clamp_min(1), s_out / n_out.clamp_min(1)
    var_in = (ss_in / n_in.clamp_min(1) - mean_in.square()).clamp_min(0) / n_in.clamp_min(1)
    var_out = (ss_out / n_out.clamp_min(1) - mean_out.square()).clamp_min(0) / n_out.clamp_min(1)
    gap = (mean_in - mean_out).abs()
    return gap, gap / (var_in + var_out).sqrt().clamp_min(1e-300), n_in, n_out


def _shift_t(rows: torch.Tensor, total: tuple[int, float, float], least: float) -> torch.Tensor:
    """Which rows' mean departure differs from the rest's by at least ``least`` and by ``SHIFT_T`` standard
    errors (Welch's t): a bias along one slice, which rounding (unbiased, to nearest) does not make."""
    gap, t, n_in, n_out = _gaps(rows, total)
    return (gap >= least) & (t >= SHIFT_T) & (n_in >= _MIN_SHIFT_OUTPUTS) & (n_out >= n_in)


def _slicings(u: torch.Tensor, names: list[str]):
    """Each way the output is sliced: (slice number → words, the slices' values as rows (one row a slice, of equal
    length), slice number → its mask)."""
    shape, rank = u.shape, u.dim()

    def along(d: int):
        def mask_of(g: int) -> torch.Tensor:
            mask = torch.zeros(shape, dtype=torch.bool, device=u.device)
            mask.select(d, g).fill_(True)
            return mask

        return mask_of

    for d, name in enumerate(names):
        if shape[d] >= 2:
            rows = u.movedim(d, 0).reshape(shape[d], -1)
            yield (lambda g, name=name, n=shape[d]: f"{name} {g} (of 0…{n - 1})"), rows, along(d)
    if rank >= 3 and shape[0] > 1 and shape[1] > 1:
        channels = shape[1]

        def item_channel(g: int) -> torch.Tensor:
            mask = torch.zeros(shape, dtype=torch.bool, device=u.device)
            mask[g // channels, g % channels] = True
            return mask

        yield (
            (lambda g: f"channel {g % channels} of batch item {g // channels}"),
            u.reshape(shape[0] * channels, -1),
            (item_channel),
        )
    spatial = range(2, rank)
    if rank >= 3 and all(shape[d] >= 3 for d in spatial):
        edge = torch.zeros(shape, dtype=torch.bool, device=u.device)
        for d in spatial:
            at = torch.arange(shape[d], device=u.device).reshape([-1 if k == d else 1 for k in range(rank)])
            edge |= ((at == 0) | (at == shape[d] - 1)).expand(shape)
        axes = " and ".join(f"{n}s" for n in names[2:])
        words = f"the outputs on the edges (the first and last {axes})"
        yield (lambda g: words), u[edge].reshape(1, -1), (lambda g: edge)


def _quantile(rows: torch.Tensor) -> torch.Tensor:
    """Each row's ``QUANTILE`` over its departures that are not 0 (0 where fewer than ``MIN_OUTPUTS`` are). Outputs
    equal on both sides are left out: a clamp or a ReLU makes both sides exactly equal over regions whose share
    differs from slice to slice, which says nothing about the rest."""
    ordered = rows.sort(dim=1).values
    zeros = (ordered == 0).sum(dim=1)
    departing = rows.shape[1] - zeros
    k = zeros + (QUANTILE * departing).round().long().clamp_min(1) - 1
    levels = ordered.gather(1, k.clamp(0, rows.shape[1] - 1).unsqueeze(1)).squeeze(1)
    return torch.where(departing >= MIN_OUTPUTS, levels, torch.zeros_like(levels))
