"""Integer outputs: the indices an argmax or argmin picks, compared exactly, with ties explained.

An index output has no rounding of its own, so the two sides are compared exactly. Where they differ, the question
is whether the values the index was chosen among tie within the fp32 floor: then rounding (another order of the sums
that made the values, or another tie-break among equal values) picks either, and the difference is explained; if the
candidate's pick is beyond the floor from the best value, no arithmetic explains it and it is a ``bug``.

The values are what the Model's last argmax/argmin (or max/min over a dim, where the Model returns their indices)
receives: the Model is evaluated with that op's input as its output (``_ValuesOf``), so the truth and the floor of
the values are measured by the same engine as any floating output (``floor.floor_of``). The reference is held to the
same rule: a reference index beyond the floor from the best value is out of scope, never a verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ..errors import OutOfScopeError
from ..numerics.metrics import error_stats
from . import compare
from .dynamo_guards import EagerDispatchMode
from .floor import FLOOR_MULTIPLIER, floor_of
from .graph import describe_op
from .interpose import Arithmetic, evaluate
from .locate import locate
from .state import kept
from .verdict import Analysis, Cause, CauseKind, verdict_name

__all__ = ["analyse_selection"]

aten = torch.ops.aten
# The selections whose input values decide an index: name → True where the largest wins.
_SELECTIONS = {"argmax": True, "argmin": False, "max": True, "min": False}


_RUNS = 4  # Monte-Carlo runs with random signs for the values' floor (besides the two one-sign runs)


class _Captured(Exception):
    pass


def _floor_record(runs: int, base: float, floor: float, outputs: int) -> dict:
    """The analysis's ``floor`` record (``engine``'s fields), for the values the selection chooses among."""
    return {
        "method": "monte_carlo" if runs else "exact",
        "runs": runs,
        "unit": "σ of the values the argmax or argmin chooses among (fp32-sized rounding carried through the Model)",
        "baseline_units": base,
        "floor_units": floor,
        "tensor_core_units": 0.0,
        "outputs": outputs,
    }


class _CaptureSelection(EagerDispatchMode):
    """Records the input, dim and keepdim of every argmax/argmin (and max/min over a dim) the forward calls."""

    def __init__(self):
        super().__init__()
        self.calls: list[tuple[str, torch.Tensor, int | None, bool]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = func.overloadpacket.__name__
        dims = args[1] if len(args) > 1 else kwargs.get("dim")
        if name in _SELECTIONS and (name.startswith("arg") or func in (aten.max.dim, aten.min.dim)):
            keepdim = bool(args[2]) if len(args) > 2 else bool(kwargs.get("keepdim", False))
            self.calls.append((name, args[0], dims, keepdim))
        return func(*args, **kwargs)


class _ValuesOf(torch.nn.Module):
    """The Model with the input of its last selection as its output (evaluated by the engine like any Model)."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, *inputs):
        with _CaptureSelection() as capture:
            self.model(*inputs)
        if not capture.calls:
            raise _Captured("no selection")
        return capture.calls[-1][1].clone()


def _selection(model: torch.nn.Module, inputs: Sequence) -> tuple[str, int | None, bool] | None:
    """(op name, dim, keepdim) of the Model's last argmax/argmin, None where it has none."""
    with torch.no_grad(), kept(model), _CaptureSelection() as capture:  # the Model's state as the trial left it
        model(*[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs])
    if not capture.calls:
        return None
    name, _, dim, keepdim = capture.calls[-1]
    return name, dim, keepdim


def _values_at(values: torch.Tensor, index: torch.Tensor, dim: int | None, keepdim: bool) -> torch.Tensor:
    """The entries of ``values`` an index output ``index`` points at (along ``dim``; None: the flattened tensor)."""
    if dim is None:
        return values.reshape(-1)[index.reshape(-1).clamp(0, values.numel() - 1)].reshape(index.shape)
    picked = index if keepdim else index.unsqueeze(dim)
    picked = picked.clamp(0, values.shape[dim] - 1)
    out = torch.gather(values, dim, picked)
    return out if keepdim else out.squeeze(dim)


def analyse_selection(
    model: torch.nn.Module, inputs: Sequence, reference: torch.Tensor, candidate: torch.Tensor, *, seed: int = 0
) -> Analysis:
    """The verdict on an integer output (module docstring)."""
    shape = tuple(reference.shape)
    if tuple(candidate.shape) != shape:
        raise OutOfScopeError(f"the outputs compared have shapes {shape} and {tuple(candidate.shape)}")
    exact = {"atol": 0.0, "rtol": 0.0, "basis": "integer outputs: compared exactly"}
    common = {"recommended_tolerance": exact, "hypotheses": [], "candidate_vs_fp64": {}, "reference_vs_fp64": {},
              "floor": _floor_record(0, 0.0, 0.0, reference.numel())}  # fmt: skip
    if torch.equal(reference, candidate):
        return Analysis(explained=True, verdict=verdict_name([], True), causes=[], location={}, **common)
    found = _selection(model, inputs)
    if found is None:
        raise OutOfScopeError(
            f"the Model returns {reference.dtype} values that no argmax or argmin chose, and the two sides differ at "
            f"{int((reference != candidate).sum())} of {reference.numel()} outputs: fp_analysis compares them exactly "
            "but cannot say whether rounding flips them"
        )
    name, dim, keepdim = found
    truth, sigma = floor_of(_ValuesOf(model), inputs, runs=_RUNS, seed=seed)
    values = truth.output
    in_fp32 = evaluate(_ValuesOf(model), inputs, Arithmetic(dtype=torch.float32)).output.to(values.dtype)
    base = compare.fit(in_fp32, values, sigma, math.inf).units
    floor = FLOOR_MULTIPLIER * max(1.0, base if math.isfinite(base) else 1.0)
    chosen = values.argmax(dim, keepdim) if _SELECTIONS[name] else values.argmin(dim, keepdim)
    best, best_sigma = _values_at(values, chosen, dim, keepdim), _values_at(sigma, chosen, dim, keepdim)

    def beyond(index: torch.Tensor) -> torch.Tensor:
        """Where ``index`` points at a value beyond the floor from the best one (or outside the range)."""
        size = values.numel() if dim is None else values.shape[dim]
        outside = (index < 0) | (index >= size)
        gap = (best - _values_at(values, index, dim, keepdim)).abs()
        allowed = floor * (best_sigma + _values_at(sigma, index, dim, keepdim))
        return outside | (gap > allowed)

    differ = reference != candidate
    if bool((beyond(reference) & differ).any()):
        raise OutOfScopeError(
            f"the reference's {name} picks values beyond the fp32 floor from the best at "
            f"{int((beyond(reference) & differ).sum())} outputs: fp_analysis cannot re-create it"
        )
    bad = beyond(candidate) & differ
    ops = evaluate(model, inputs, Arithmetic(dtype=torch.float32)).ops
    selection = next((o.index for o in reversed(ops) if o.name in _SELECTIONS), None)
    where = describe_op(ops, selection) if selection is not None else name
    common["ops"] = [o.to_dict() | {"description": describe_op(ops, o.index)} for o in ops]
    common["floor"] = _floor_record(_RUNS, base, floor, reference.numel())
    if not bool(bad.any()):
        cause = Cause(
            CauseKind.ACCUMULATION_ORDER.value,
            f"the two sides pick other indices at {int(differ.sum())} of {differ.numel()} outputs, each among values "
            f"that tie within the fp32 floor ({floor:.1f} units of σ) of the values {where} chooses among: rounding "
            "(another order of the sums that made them, or another tie-break) picks either",
            0.0, "pair", None, where,
        )  # fmt: skip
        return Analysis(explained=True, verdict=cause.name, causes=[cause], location={}, **common)
    location = locate(bad, torch.zeros_like(bad), shape)
    gap = float(((best - _values_at(values, candidate, dim, keepdim)).abs() * bad).max())
    evidence = (
        f"the candidate's {name} picks indices whose values are up to {gap:.3g} from the best, beyond the fp32 floor "
        f"of the values {where} chooses among ({floor:.1f} units of σ): no rounding picks them; {location['summary']}"
    )
    cause = Cause(CauseKind.BUG.value, evidence, gap, "candidate", None)
    stats = error_stats(candidate.double(), reference.double()).to_dict()
    return Analysis(explained=False, verdict=cause.name, causes=[cause], location=location,
                    **{**common, "candidate_vs_fp64": stats})  # fmt: skip
