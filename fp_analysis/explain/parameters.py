"""The candidate's tensors matched to the reference's parameters: evidence for the verdict, not a gate before it.

A solution may name, lay out and store its weights as it likes (a kernel keeps its weight permuted to NHWC, as a
buffer, in bf16), fold one parameter into another (a BatchNorm or a scale into the conv's weight, a column sum of W
precomputed) or not hold one at all (a norm's affine weight and bias left at 1 and 0). So the parameters are matched,
not compared: each reference parameter is looked for among the candidate's parameters and buffers of its number of
elements, in its shape or any permutation of the candidate tensor's dims that gives it, and found

* ``same``: bitwise equal (in some layout);
* ``rounded``: equal to its own rounding to bf16 or fp16 (round to nearest even, the conversion
  ``Tensor.to(torch.bfloat16)`` does): the candidate stores it in that format;
* ``differs``: a tensor of its size holds other values (the one with the same name, else the closest): its values,
  in the reference's layout, are what a re-evaluation of the reference Model with the candidate's values uses;
* ``missing``: no candidate tensor of its size, nor a run of them that stacked along the first dim gives its shape
  (a fused QKV weight held as three Linear layers' is found so; one folded away or not held is not).

``fp_analysis.explain.job`` runs the analysis first: where it re-creates the candidate the parameters do not matter;
where not, the reference Model is evaluated again with the candidate's values (``with_values``) and what is left is
explained (``fp_analysis.model.judge.parameter_analysis``).
"""

from __future__ import annotations

import copy
import dataclasses
import itertools

import torch
from torch import nn

from ..numerics.rounding import round_to

__all__ = ["ParameterMatch", "describe", "match_parameters", "with_values"]

_FORMATS = ("bf16", "fp16")  # the formats parameters are stored in (TF32 is an operand rounding, not a storage)
_MAX_PERMUTED_DIMS = 5  # at most 120 permutations of a candidate tensor's dims are tried
# A parameter with other values and no namesake is tried in every layout against this many of the candidate's tensors
# of its size, the nearest by their sums (each try sorts and compares in up to 120 layouts: a model of a hundred
# same-sized weights would take minutes to try them all).
_LAYOUT_TRIES = 4


@dataclasses.dataclass(frozen=True)
class ParameterMatch:
    """How one reference parameter was found among the candidate's tensors (module docstring)."""

    name: str
    shape: tuple[int, ...]
    status: str  # "same", "rounded", "differs", "missing"
    candidate: str | None = None  # the candidate tensor's name
    fmt: str | None = None  # the format it is stored in ("rounded")
    values: torch.Tensor | None = dataclasses.field(default=None, repr=False)  # the candidate's, reference layout
    relative: float | None = None  # max |candidate − reference| / max |reference|

    @property
    def words(self) -> str:
        where = f"reference parameter {self.name} {self.shape}"
        if self.status == "same":
            return f"{where} is held by the candidate as {self.candidate}"
        if self.status == "rounded":
            return f"{where} is held by the candidate as {self.candidate}, rounded to {self.fmt}"
        if self.status == "differs":
            return (
                f"{where} differs from the candidate's {self.candidate} (max relative difference {self.relative:.3g})"
            )
        return f"{where} has no candidate tensor of its size"


def match_parameters(
    reference: dict[str, torch.Tensor], candidate: dict[str, torch.Tensor | None]
) -> list[ParameterMatch]:
    """Each reference parameter (name → tensor, as built) matched among the candidate's parameters and buffers
    (name → tensor; None for one not initialised yet), as the module docstring says. A candidate tensor that holds
    one parameter exactly is not offered to another; one that differs may be (two layers of one shape, drawn
    differently, are matched by name first)."""
    pool = {n: q.detach().cpu() for n, q in candidate.items() if q is not None and q.is_floating_point()}
    prints = {n: _fingerprint(q) for n, q in pool.items()}
    matches: dict[str, ParameterMatch] = {}
    used: set[str] = set()
    for name, p in reference.items():  # exact and rounded first: they claim their tensor
        p = p.detach().cpu()
        wanted = [_fingerprint(p)] + [_fingerprint(round_to(p.to(torch.float32), fmt)) for fmt in _FORMATS]
        # the tensor of the same name first; only a tensor whose values could be these is compared in full
        for other in sorted(pool, key=lambda n: n != name):
            if other in used or pool[other].numel() != p.numel() or not any(_alike(prints[other], w) for w in wanted):
                continue
            found = _exactly(p, pool[other])
            if found is not None:
                matches[name] = ParameterMatch(name, tuple(p.shape), found[0], other, found[1], found[2])
                used.add(other)
                break
    for name, p in reference.items():
        if name in matches:
            continue
        p = p.detach().cpu()
        sized = {n: q for n, q in pool.items() if q.numel() == p.numel() and n not in used}
        if name in sized:  # the same name: drawn otherwise (another init, another seed), matched to its namesake
            sized = {name: sized[name]}
        elif len(sized) > _LAYOUT_TRIES:  # the few nearest by their values' sums, each tried in every layout
            mine = _fingerprint(p)
            sized = dict(sorted(sized.items(), key=lambda item: _distance(prints[item[0]], mine))[:_LAYOUT_TRIES])
        if not sized:
            sized = _concatenated(p, {n: q for n, q in pool.items() if n not in used})
        if not sized:
            matches[name] = ParameterMatch(name, tuple(p.shape), "missing")
            continue
        views = {n: _closest_layout(p, q) for n, q in sized.items()}
        other = min(views, key=lambda n: views[n][1])
        values, _ = views[other]
        scale = float(p.abs().max()) if p.numel() else 0.0
        relative = float((values.double() - p.double()).abs().max()) / scale if scale else float("inf")
        matches[name] = ParameterMatch(name, tuple(p.shape), "differs", other, None, values, relative)
    return [matches[name] for name in reference]


def _fingerprint(t: torch.Tensor) -> tuple[float, float]:
    """(Σ values, Σ |values|) in fp64: the same in every layout, to within the order of the sum."""
    values = t.detach().to(torch.float64)
    return float(values.sum()), float(values.abs().sum())


def _alike(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two fingerprints may be of the same values (their sums agree to 1e-9 of the values' size)."""
    return abs(a[0] - b[0]) <= 1e-9 * max(a[1], b[1]) and abs(a[1] - b[1]) <= 1e-9 * max(a[1], b[1])


def _distance(a: tuple[float, float], b: tuple[float, float]) -> float:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _concatenated(p: torch.Tensor, pool: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Candidate tensors that, stacked along their first dim in the order the candidate holds them, have ``p``'s
    shape — a fused parameter held in parts (a QKV projection as three Linear layers): {"q.weight+k.weight+…":
    their concatenation}, or {} where no consecutive run of same-shaped parts sums to it."""
    if p.dim() == 0:
        return {}
    parts = [(n, q) for n, q in pool.items() if q.dim() == p.dim() and q.shape[1:] == p.shape[1:] and q.numel()]
    for start in range(len(parts)):
        rows = 0
        for end in range(start, len(parts)):
            rows += parts[end][1].shape[0]
            if rows == p.shape[0] and end > start:
                run = parts[start : end + 1]
                return {"+".join(n for n, _ in run): torch.cat([q.to(p.dtype) for _, q in run])}
            if rows >= p.shape[0]:
                break
    return {}


def describe(matches: list[ParameterMatch]) -> list[str]:
    """The matches that are not ``same``, in words."""
    return [m.words for m in matches if m.status != "same"]


def with_values(model: nn.Module, matches: list[ParameterMatch]) -> nn.Module:
    """A copy of ``model`` whose parameters hold the candidate's values where they differ or are rounded (the others
    as they are; a parameter the candidate does not hold keeps the reference's value)."""
    copied = copy.deepcopy(model)
    named = dict(copied.named_parameters())
    with torch.no_grad():
        for m in matches:
            if m.values is not None and m.status in ("differs", "rounded") and m.name in named:
                target = named[m.name]
                target.copy_(m.values.to(target.device, target.dtype).reshape(target.shape))
    return copied


def _layouts(p: torch.Tensor, q: torch.Tensor):
    """``q`` in every layout that gives ``p``'s shape: as it is, each permutation of its dims, or reshaped."""
    q = q.to(torch.float32) if q.dtype != p.dtype else q
    if q.shape == p.shape:
        yield q
    if 1 < q.dim() <= _MAX_PERMUTED_DIMS:
        for order in itertools.permutations(range(q.dim())):
            permuted = q.permute(order)
            if permuted.shape == p.shape and list(order) != list(range(q.dim())):
                yield permuted
    if q.shape != p.shape:
        yield q.reshape(p.shape)


def _exactly(p: torch.Tensor, q: torch.Tensor):
    """("same" or "rounded", format, values) where some layout of ``q`` holds ``p`` bitwise or its rounding to a
    format; None otherwise."""
    for view in _layouts(p, q):
        if torch.equal(view, p):
            return "same", None, None
    rounded = {fmt: round_to(p.to(torch.float32), fmt).to(p.dtype) for fmt in _FORMATS}
    for view in _layouts(p, q):
        for fmt, r in rounded.items():
            if torch.equal(view, r) and not torch.equal(r, p):
                return "rounded", fmt, view.clone()
    if torch.equal(p.reshape(-1).sort().values, q.to(p.dtype).reshape(-1).sort().values):
        return "same", None, None  # the same values in a layout that is no permutation of dims (a blocked one)
    return None


def _closest_layout(p: torch.Tensor, q: torch.Tensor) -> tuple[torch.Tensor, float]:
    """The layout of ``q`` closest to ``p`` (largest |difference|) and that difference."""
    best = None
    for view in _layouts(p, q):
        distance = float((view.double() - p.double()).abs().max()) if p.numel() else 0.0
        if best is None or distance < best[1]:
            best = (view.clone(), distance)
    return best
