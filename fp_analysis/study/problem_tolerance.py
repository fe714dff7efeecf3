"""``fpa tolerance --problem``: the atol/rtol a candidate in each precision needs to pass against a KernelBench
problem's reference, and whether the check can tell a placeholder from a kernel at all.

The reference is the problem's ``Model`` in fp32 as PyTorch runs it (TF32 off), on the inputs KernelBench's first
trial draws (``tolerance_job``: the Model built after ``seed``, the inputs after the first trial's seed, as
``fp_analysis.explain.kernelbench.run_check`` draws them). What a candidate may differ from it by comes from the
engine's own measures (``fp_analysis.model.engine``'s docstring, steps 2 and 3), so that a kernel ``fpa explain``
would call explained passes at the tolerance given here:

* **fp32, any order.** The truth is the Model in fp64; σ is the spread of Monte-Carlo fp32 rounding around it
  (``floor.floor_of``); an fp32 kernel may sit anywhere within the floor, ``FLOOR_MULTIPLIER`` × max(1, the
  reference's own error in units of σ), of the truth. Each output's reach is |reference − truth| + floor·σ.
* **TF32, bf16, fp16.** The engine's re-creation of a kernel in that precision (``rewrites.Rewrite``): every linear
  op's operands rounded to TF32 (ties to even, and ties away from zero as ``cvt.rna``/``__float_to_tf32`` round),
  to bf16 or fp16 (operands only, and the whole Model under ``torch.autocast``: results in the format too). A kernel
  of it may sit within the floor plus the tensor cores' truncating accumulation (K/8 units) of the re-creation, in
  units of max(σ, the spread around the re-creation). Each output's reach is |reference − re-creation| + that; a
  row's reach is the worst of its re-creations.

needed atol = ``TOLERANCE_MARGIN`` (1.5, for the trials and inputs not drawn) × the largest reach, with rtol 0;
needed rtol = the least rtol that passes every output with the check's own atol, where (as KernelBench calls
``torch.allclose(reference, candidate)``) rtol scales the candidate's magnitude, at least |reference| − reach.

The check's power: whether returning zeros, the first input (where its shape and dtype are the output's) or the
reference's mean everywhere passes the check as it stands. One that passes means the check cannot tell a placeholder
from a kernel.

An output of more than ``_SUBSET_ABOVE`` elements is analysed on its first batch item: run alone where the Model treats
batch items apart (checked: the item run alone gives the reference's slice), else kept from evaluations of the whole
Model (``model.scope.KeptItems``: a norm over the whole tensor); the power check is always on the whole output.
This module imports no torch at its top: ``tolerance_file`` runs in the command's process, which only supervises the
worker the problem runs in.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import ParameterError
from ..options import DEFAULT_TIMEOUT_S, check_device, check_file, check_seconds, check_seed, check_tolerance

if TYPE_CHECKING:
    import torch

__all__ = [
    "KERNELBENCH_CHECK",
    "CandidatePrecision",
    "Needed",
    "Placeholder",
    "ProblemTolerance",
    "ToleranceOptions",
    "tolerance_file",
    "tolerance_job",
    "tolerance_of",
]

# KernelBench's fp32 check (src/eval.py: get_tolerance_for_precision(float32), "kernelbench v0 and v0.1 uses fp32,
# atol = rtol = 1e-02"): (atol, rtol).
KERNELBENCH_CHECK = (1e-2, 1e-2)
# KernelBench's seed_num: the Model is built after it, and the trials' seeds are drawn from it.
KERNELBENCH_SEED = 42
# Outputs above which the tolerances are measured on the first batch item alone (explain's threshold too): 2^22 fp64
# outputs are 32 MB a copy, and the floor holds a few.
_SUBSET_ABOVE = 1 << 22
# The item run alone must give the reference's slice to within this share of its largest value: summation orders
# differ by ~1e-6 between batch sizes, a Model that mixes batch items (BatchNorm in training mode) by O(1).
_ALONE_RELATIVE = 1e-3
# Units of an autocast re-creation's σ (u·|result| at each result rounded to the format) a kernel of it may differ by:
# each rounding may go to the neighbouring value, one ulp = 2u.
_FORMAT_ULPS = 2.0


class CandidatePrecision(str, Enum):
    """The arithmetic of a candidate kernel a tolerance is asked for (one row of the table)."""

    FP32 = "fp32"
    """An fp32 kernel summing in any order: anywhere within the floor of the Model in fp64."""
    TF32 = "tf32"
    """Every linear op's operands rounded to TF32, ties to even or away from zero (``cvt.rna``, ``__float_to_tf32``)."""
    BF16 = "bf16"
    """Every linear op's operands in bf16, or the Model under ``torch.autocast(bfloat16)`` (results in bf16 too)."""
    FP16 = "fp16"
    """The same in fp16."""


# The engine's re-creations (``fp_analysis.model.rewrites.Rewrite`` fields) a row answers to: its reach is the worst
# of them. As keyword data, so that this table costs no torch import.
_EMULATIONS = {
    CandidatePrecision.FP32: ({},),
    CandidatePrecision.TF32: ({"precision": "tf32"}, {"precision": "tf32", "ties": "rna"}),
    CandidatePrecision.BF16: ({"precision": "bf16"}, {"precision": "bf16", "autocast": True}),
    CandidatePrecision.FP16: ({"precision": "fp16"}, {"precision": "fp16", "autocast": True}),
}


@dataclasses.dataclass(frozen=True)
class ToleranceOptions:
    """What ``fpa tolerance --problem`` is asked, valid by construction (a bad field is a ``ParameterError``, exit 2):
    where the Model runs (``device``), KernelBench's ``seed``, the check whose power is judged (``atol``, ``rtol``) and
    the seconds each call into the problem's code may take (``timeout``)."""

    device: str = "auto"
    seed: int = KERNELBENCH_SEED
    atol: float = KERNELBENCH_CHECK[0]
    rtol: float = KERNELBENCH_CHECK[1]
    timeout: float = DEFAULT_TIMEOUT_S

    def __post_init__(self):
        checked = {
            "device": check_device(self.device).value,
            "seed": check_seed("seed", self.seed),
            "atol": check_tolerance("atol", self.atol),
            "rtol": check_tolerance("rtol", self.rtol),
            "timeout": check_seconds("timeout", self.timeout),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> ToleranceOptions:
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class Needed:
    """What a candidate of one precision needs to pass against the reference (one row of the table)."""

    precision: str  # a ``CandidatePrecision`` value
    emulations: tuple[str, ...]  # the keys of the engine's re-creations behind it ("plain", "tf32~rna[all]"...)
    atol: float | None  # with rtol 0; None where an output is non-finite on one side only
    rtol: float | None  # with the check's atol; None where no rtol suffices (an output too near 0)
    max_difference: float | None  # the largest |re-creation − reference|, before the floor and the margin
    passes_check: bool  # the check as asked passes every candidate of this precision (the worst one the reach allows)
    recreations_pass: bool  # the check as asked passes the re-creations themselves (one kernel each)
    rounds_nothing: bool  # the re-creations round nothing in this Model (no linear op, no op autocast lowers)
    placeholders_passing: tuple[str, ...]  # the placeholders a check at (atol, rtol 0) would pass too


@dataclasses.dataclass(frozen=True)
class Placeholder:
    """A trivial output held against the check: does it pass?"""

    name: str  # "zeros", "first input", "mean"
    passes: bool | None  # None: not applicable (``why_not``)
    why_not: str | None = None
    max_difference: float | None = None  # max |reference − placeholder|
    failing_fraction: float | None = None  # of the outputs, those the check rejects
    atol_accepting: float | None = None  # the least atol at which the check (at its rtol) passes it


@dataclasses.dataclass(frozen=True)
class ProblemTolerance:
    """The tolerances each precision of candidate needs, and the check's power (see the module docstring)."""

    atol: float  # the check whose power is judged
    rtol: float
    shape: tuple[int, ...]
    analysed: dict | None  # {"batch_item", "of", "outputs"[, "whole_model"]} where they come from one batch item
    floor: dict  # baseline_units, floor_units, tensor_core_units, runs, margin
    reference: dict  # max_abs, mean_abs, nonfinite of the whole reference
    needed: tuple[Needed, ...]
    power: tuple[Placeholder, ...]
    notes: tuple[str, ...] = ()

    @property
    def blind(self) -> bool:
        """Whether a placeholder passes the check: it cannot tell a placeholder from a kernel."""
        return any(p.passes for p in self.power)

    def row(self, precision: CandidatePrecision | str) -> Needed:
        return next(n for n in self.needed if n.precision == CandidatePrecision(precision).value)

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "blind": self.blind, "outputs": math.prod(self.shape)}


# ------------------------------------------------------------------------------------------------- the computation


@dataclasses.dataclass(frozen=True)
class _Floor:
    """The analysed outputs' truth and floor: what every row is measured against."""

    truth: object  # interpose.Evaluation of the Model in fp64
    sigma: torch.Tensor
    units: float  # the floor, in units of σ
    tensor_core: float  # K/8 units: the tensor cores' truncating accumulation
    reference: torch.Tensor  # the reference's analysed outputs, in fp64


def tolerance_of(
    model,
    inputs: Sequence,
    *,
    atol: float = KERNELBENCH_CHECK[0],
    rtol: float = KERNELBENCH_CHECK[1],
    seed: int = 0,
    runs: int = 8,
    watch: Callable[[str], contextlib.AbstractContextManager] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ProblemTolerance:
    """The tolerances and the power of ``torch.allclose(reference, candidate, atol, rtol)`` for ``model`` on
    ``inputs`` (see the module docstring); ``runs``: the floor's Monte-Carlo runs with random signs. ``watch(where)``
    wraps each evaluation of the Model (the worker reports it, so the timeout applies); one that fails is out of
    scope (``OutOfScopeError``, exit 2). ``progress(text)`` hears each step."""
    import torch

    from ..model.compare import TOLERANCE_MARGIN, fit
    from ..model.floor import FLOOR_MULTIPLIER, floor_of
    from ..model.graph import OpKind
    from ..model.scope import check_path, checked_fp32, guarded

    say = progress or (lambda text: None)
    run = guarded(watch, "the tolerance")
    say("the Model in fp32")
    fp32 = run("in fp32", checked_fp32, model, inputs)
    reference = fp32.output
    analysed_inputs, model, analysed, notes = _batch_subset(model, inputs, reference, watch)
    say(f"the Model in fp64 and its floor ({runs + 2} Monte-Carlo runs)")
    truth, sigma = run("in fp64", floor_of, model, analysed_inputs, runs=runs, seed=seed)
    kept_slice = 1 if analysed and analysed.get("whole_model") else 0  # KeptItems' own last op, not the Model's
    check_path(fp32.ops, truth.ops[: len(truth.ops) - kept_slice])
    ref64 = (reference if analysed is None else reference[:1]).to(torch.float64)
    base = fit(ref64, truth.output, sigma, math.inf).units
    units = FLOOR_MULTIPLIER * max(1.0, base if math.isfinite(base) else 1.0)
    tensor_core = max((o.terms for o in truth.ops if o.kind is OpKind.LINEAR), default=0) / 8
    floor = _Floor(truth, sigma, units, tensor_core, ref64)
    power = _power(inputs, reference, atol, rtol)
    needed = []
    for precision in CandidatePrecision:
        say(f"a {precision.value} candidate's reach")
        needed.append(_needed(precision, model, analysed_inputs, floor, (atol, rtol), run, power))
    notes += _notes(reference, truth.ops, needed)
    record = {"baseline_units": base, "floor_units": units, "tensor_core_units": tensor_core, "runs": runs + 2,
              "margin": TOLERANCE_MARGIN}  # fmt: skip
    return ProblemTolerance(atol, rtol, tuple(reference.shape), analysed, record, _magnitudes(reference),
                            tuple(needed), tuple(power), tuple(notes))  # fmt: skip


def _batch_subset(model, inputs: Sequence, reference, watch) -> tuple[list, Any, dict | None, list[str]]:
    """(the inputs analysed, the Model analysed, {"batch_item", "of", "outputs", "whole_model"} or None, notes): where
    the output has more than ``_SUBSET_ABOVE`` elements, its first batch item — run alone where that gives the
    reference's slice (every input whose first dimension is the batch's sliced, else the first alone: in A @ B with
    both N × N only A's rows are items), else kept from the whole Model's evaluations (``scope.KeptItems``: a norm
    over the whole tensor), their memory checked; else everything."""
    import torch

    from ..explain.smaller import require_fp64_room
    from ..model.interpose import Arithmetic, evaluate
    from ..model.scope import KeptItems
    from ..numerics.backends import tf32

    n = reference.shape[0] if reference.dim() else 1
    if reference.numel() <= _SUBSET_ABOVE or n == 1:
        return list(inputs), model, None, []
    expected = reference[:1]
    scale = float(expected.abs().nan_to_num(0.0, 0.0, 0.0).max())
    batched = [i for i, t in enumerate(inputs) if isinstance(t, torch.Tensor) and t.dim() and t.shape[0] == n]
    guard = watch or (lambda where: contextlib.nullcontext())
    for sliced in dict.fromkeys([tuple(batched), tuple(batched[:1])]):
        if not sliced:
            continue
        alone_inputs = [t[:1] if i in sliced else t for i, t in enumerate(inputs)]
        try:
            with guard("Model.forward (checking that batch items are independent)"), tf32(conv=False, matmul=False):
                alone = evaluate(model, alone_inputs, Arithmetic(dtype=torch.float32)).output
        except Exception:  # the Model does not take one item: its batch is not items it treats apart
            continue
        if alone.shape == expected.shape and float((alone - expected).abs().max()) <= _ALONE_RELATIVE * scale:
            note = (
                f"the output has {reference.numel()} elements: the tolerances are measured on batch item 0 of {n} "
                f"alone ({expected.numel()} outputs; the Model treats batch items apart: item 0 run alone gives the "
                "reference's slice); the power check is on the whole output"
            )
            return alone_inputs, model, {"batch_item": 0, "of": n, "outputs": expected.numel()}, [note]
    what = f"a problem whose output has {reference.numel()} elements and whose batch items are not independent"
    require_fp64_room(inputs, reference, what)
    note = (
        f"the output has {reference.numel()} elements and the Model does not treat batch items apart (item 0 run "
        f"alone does not give the reference's slice): the whole Model is evaluated each time and batch item 0 of {n} "
        f"of its output is measured ({expected.numel()} outputs); the power check is on the whole output"
    )
    kept = {"batch_item": 0, "of": n, "outputs": expected.numel(), "whole_model": True}
    return list(inputs), KeptItems(model, 0), kept, [note]


def _difference(a, b):
    """|a − b| in fp64: 0 where equal (the same infinity, NaN on both), inf where only one is finite."""
    import torch

    a, b = a.to(torch.float64), b.to(torch.float64)
    same = (a == b) | (torch.isnan(a) & torch.isnan(b))
    return torch.where(same, torch.zeros_like(a), (a - b).abs().nan_to_num(math.inf, math.inf, math.inf))


class _Reach(NamedTuple):
    """How far the candidates of one re-creation may be from the reference (module docstring)."""

    outputs: torch.Tensor  # each output's reach, in fp64
    max_difference: float  # the largest |re-creation − reference|
    rounds_nothing: bool  # the re-creation rounded no op of this Model
    passes: bool  # the check passes the re-creation itself: allclose(reference, re-creation)
    key: str  # the re-creation's name (``Rewrite.key``)


def _reach(model, inputs, floor: _Floor, fields: dict, guarded, check) -> _Reach:
    """The reach of the re-creation ``Rewrite(**fields)``'s candidates (module docstring)."""
    import torch

    from ..model.floor import floor_of
    from ..model.rewrites import Rewrite

    h = Rewrite(**fields)
    if h.plain:
        difference = _difference(floor.reference, floor.truth.output)
        passes = _passes(floor.reference, floor.truth.output, check)
        return _Reach(difference + floor.units * floor.sigma, float(difference.max()), False, passes, h.key())
    centre, local = guarded(f"as {h.key()}", floor_of, model, inputs, runs=0, base=h.arithmetic(),
                            scales=floor.truth.scales)  # fmt: skip
    difference = _difference(floor.reference, centre.output)
    limit = floor.units + floor.tensor_core
    if h.autocast:
        # σ around an autocast re-creation holds its format's rounding of every result it rounds (u·|result|, carried
        # through): another fp32 order can round each of them one ulp (2u) the other way. The floor's multiple is
        # the fp32 spread's, in fp32's σ: in the re-creation's σ it would allow (8 + K/8) format half-ulps.
        reach = difference + limit * floor.sigma + _FORMAT_ULPS * local
    else:  # the operands round alike in every kernel: what varies is the fp32 sum, around the re-creation's kinks too
        reach = difference + limit * torch.maximum(floor.sigma, local)
    passes = _passes(floor.reference, centre.output, check)
    return _Reach(reach, float(difference.max()), centre.rounded_linear_ops == 0, passes, h.key())


def _passes(reference, value, check) -> bool:
    """``torch.allclose(reference, value, atol, rtol)`` in fp64 (the truth is fp64, the reference fp32)."""
    import torch

    atol, rtol = check
    return bool(torch.allclose(reference.to(torch.float64), value.to(torch.float64), atol=atol, rtol=rtol))


def _needed(precision: CandidatePrecision, model, inputs, floor: _Floor, check, guarded, power) -> Needed:
    """The row of ``precision``: the worst reach of its re-creations, as atol (rtol 0) and as rtol at the check's
    atol (rtol scales the candidate's magnitude, at least |reference| − reach: ``torch.allclose(reference,
    candidate)``)."""
    import torch

    from ..model.compare import TOLERANCE_MARGIN

    atol, rtol = check
    reaches = [_reach(model, inputs, floor, fields, guarded, check) for fields in _EMULATIONS[precision]]
    reach = TOLERANCE_MARGIN * torch.stack([r.outputs for r in reaches]).amax(0)
    needed_atol = _finite(reach.max())
    magnitude = (floor.reference.abs() - reach).clamp_min(0.0)
    over = (reach - atol).clamp_min(0.0)
    ratio = torch.where(over == 0, torch.zeros_like(over), over / magnitude)  # x/0 = inf: no rtol suffices
    needed_rtol = _finite(torch.where(torch.isnan(ratio), math.inf, ratio).max())  # a NaN output: nor there
    accepted = tuple(p.name for p in power if p.max_difference is not None and needed_atol is not None
                     and p.max_difference <= needed_atol)  # fmt: skip
    return Needed(
        precision=precision.value,
        emulations=tuple(r.key for r in reaches),
        atol=needed_atol,
        rtol=needed_rtol,
        max_difference=_finite(max(r.max_difference for r in reaches)),
        passes_check=needed_rtol is not None and needed_rtol <= rtol,
        recreations_pass=all(r.passes for r in reaches),
        rounds_nothing=precision is not CandidatePrecision.FP32 and all(r.rounds_nothing for r in reaches),
        placeholders_passing=accepted,
    )


def _finite(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def _power(inputs: Sequence, reference, atol: float, rtol: float) -> list[Placeholder]:
    """Zeros, the first input and the reference's mean everywhere, each held against the check as KernelBench
    makes it: ``torch.allclose(reference, placeholder, atol, rtol)``, |reference − p| ≤ atol + rtol·|p|. Measured
    ``_CHUNK`` outputs at a time: a whole fp64 copy of a 2 G-element output is 16 GB."""
    import torch

    first = inputs[0] if inputs else None
    mean = float(_chunked_sum(reference.reshape(-1)) / max(1, reference.numel()))
    candidates = {"zeros": lambda chunk: torch.zeros_like(chunk), "first input": first,
                  "mean": lambda chunk: torch.full_like(chunk, mean)}  # fmt: skip
    out = []
    for name, value in candidates.items():
        why_not = None
        if value is None or (not callable(value) and not isinstance(value, torch.Tensor)):
            why_not = "n/a: the first input is not a tensor" if inputs else "n/a: get_inputs() is empty"
        elif not callable(value) and tuple(value.shape) != tuple(reference.shape):
            why_not = f"n/a: shape differs (input {tuple(value.shape)}, output {tuple(reference.shape)})"
        elif not callable(value) and value.dtype != reference.dtype:
            why_not = f"n/a: dtype differs (input {value.dtype}, output {reference.dtype}: allclose would raise)"
        if why_not:
            out.append(Placeholder(name, None, why_not))
            continue
        flat = None if callable(value) else value.to(reference.device).reshape(-1)
        largest, accepting, failing = 0.0, 0.0, 0
        for start, chunk in _chunks(reference.reshape(-1)):
            other = value(chunk) if flat is None else flat[start : start + chunk.numel()]
            difference = _difference(chunk, other)
            failing += int((~torch.isclose(chunk, other, atol=atol, rtol=rtol)).sum())
            largest = max(largest, float(difference.max()))
            accepting = max(accepting, float((difference - rtol * other.double().abs()).clamp_min(0.0).max()))
        out.append(Placeholder(name, failing == 0, None, _finite(largest), failing / reference.numel(),
                               _finite(accepting)))  # fmt: skip
    return out


# Outputs measured at a time where a whole fp64 copy would be too large (2^24: 128 MB in fp64).
_CHUNK = 1 << 24


def _chunks(flat):
    """(start, flat[start : start + _CHUNK]) over a flat tensor."""
    for start in range(0, max(1, flat.numel()), _CHUNK):
        yield start, flat[start : start + _CHUNK]


def _chunked_sum(flat) -> float:

    return sum(float(chunk.double().sum()) for _, chunk in _chunks(flat)) if flat.numel() else 0.0


def _magnitudes(reference) -> dict:
    import torch

    largest, total, finite = None, 0.0, 0
    for _, chunk in _chunks(reference.reshape(-1)):
        values = chunk[torch.isfinite(chunk)].double().abs()
        if values.numel():
            largest = max(largest or 0.0, float(values.max()))
            total, finite = total + float(values.sum()), finite + values.numel()
    return {"max_abs": largest, "mean_abs": total / finite if finite else None,
            "nonfinite": int(reference.numel() - finite)}  # fmt: skip


def _notes(reference, ops, needed: list[Needed]) -> list[str]:
    """What the table cannot say on its own: a non-finite reference, re-creations that round nothing, cuDNN's TF32."""
    import torch

    notes = []
    bad = int((~torch.isfinite(reference)).sum())
    if bad:
        notes.append(
            f"the reference has {bad} NaN or ±inf outputs: torch.allclose (equal_nan=False) fails every candidate "
            "there, at any tolerance"
        )
    idle = [n.precision for n in needed if n.rounds_nothing]
    if idle:
        notes.append(
            f"the {', '.join(idle)} re-creations round nothing in this Model (no convolution or matrix product, no "
            "op that autocast lowers): those rows are the fp32 row; a kernel that stores activations in a reduced "
            "format is beyond them"
        )
    if any(o.name == "convolution" for o in ops):
        notes.append(
            "KernelBench runs on a GPU, where cuDNN computes fp32 convolutions in TF32 by default "
            "(torch.backends.cudnn.allow_tf32): its reference for this Model is then a TF32 one, about the tf32 "
            "row's atol from the fp32 reference measured here (fpa explain --reference-mode tf32 models that side)"
        )
    return notes


# ------------------------------------------------------------------------------------------------- the worker's job


def _first_trial_seed(seed: int) -> int:
    """The seed of KernelBench's first trial, drawn from ``seed`` as ``kernelbench.run_check`` draws it."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    return int(torch.randint(0, 2**31 - 1, (1,), generator=generator).item())


def tolerance_job(problem, *, options: dict, timeout: float, folder, problem_sources=None) -> dict:
    """The worker's half of ``tolerance_file``: the problem imported from its snapshot (``problem_sources``), its
    Model built and its first trial's inputs drawn as KernelBench does, the reference run as the user's code (what
    it raises is exit 3), then ``tolerance_of``. ``timeout`` is the worker's limit on each call (the options')."""
    import torch

    from ..explain.kernelbench import init_inputs, load_problem, reference_forward, trial_inputs
    from ..explain.smaller import Sizes, described, on_fitting_instance
    from ..numerics.backends import tf32
    from ..options import resolve_device
    from ..run.usercode import seed_all
    from ..run.worker import report_event

    asked = ToleranceOptions.from_json(options)
    device = resolve_device(asked.device)
    file = load_problem(problem, problem_sources)
    init = init_inputs(file)
    trial_seed = _first_trial_seed(asked.seed)
    context = {"problem": str(problem), "device": str(device), "seed": asked.seed, "trial_seed": trial_seed}

    def attempt(n: int, sizes: Sizes) -> dict:
        with torch.no_grad():
            seed_all(asked.seed)
            model = file.call("Model(*get_init_inputs())", lambda: file.module.Model(*init).to(device))
            seed_all(trial_seed)
            inputs = trial_inputs(file, device, "trial 1")
            sizes.saw(file, inputs)  # before the reference runs: it may run out of memory beside our copies
            with tf32(conv=False, matmul=False):
                reference, _ = reference_forward(file, model, inputs, detail="trial 1")
        sizes.saw(file, inputs, reference)
        return tolerance_of(model, inputs, atol=asked.atol, rtol=asked.rtol, seed=asked.seed, watch=file.watched,
                            progress=report)  # fmt: skip

    def report(text: str) -> None:
        report_event("progress", text=f"tolerance: {text}")

    result, smaller = on_fitting_instance(device, attempt, report)
    out = result.to_dict()
    if smaller:
        out["notes"] = [described(smaller), *out["notes"]]
        context["smaller_instance"] = smaller
    return {**out, "context": context}


def tolerance_file(problem, options: ToleranceOptions | None = None, *, on_event=None) -> dict:
    """``ProblemTolerance.to_dict()`` of the KernelBench problem file ``problem`` under ``options``
    (``ToleranceOptions()``: KernelBench's check), computed in a worker process (``fp_analysis.run.worker``, job
    "tolerance"): the problem's code never runs in this one. Adds "context" (problem, device, seeds) and "worker"
    (time spent, what the problem's code printed). Raises ``ParameterError`` (exit 2) for a bad option or a missing
    file, ``UserCodeError`` (exit 3) when the problem's code fails, ``OutOfScopeError`` (exit 2) for a Model that
    cannot be evaluated in fp64."""
    from ..explain.jobs import refuse_stale_edits
    from ..run.snapshot import Snapshot
    from ..run.supervisor import run_job

    options = ToleranceOptions() if options is None else options
    if not isinstance(options, ToleranceOptions):
        raise ParameterError(f"Got options={options!r}, but options must be a ToleranceOptions (or None).")
    path = check_file("problem", problem)
    snapshot = Snapshot.take(path, depth=0)
    refuse_stale_edits([snapshot])
    job = {"problem": path, "problem_sources": snapshot.encoded(), "options": options.to_json()}
    result = run_job("tolerance", job, timeout=options.timeout, on_event=on_event)
    return {**result.value, "worker": result.worker_record()}
