"""KernelBench-format problems: load REF.py / NEW.py, find the op they compute, run the correctness check.

A problem file defines ``Model``, ``get_inputs`` and ``get_init_inputs``; a solution defines ``ModelNew``.
``run_check`` follows KernelBench's correctness protocol (``eval_kernel_against_ref``): the same seed
before each model is built, then ``trials`` trials, each seeded from a generator seeded once, with fresh
inputs from ``get_inputs()``, compared with ``torch.allclose(atol, rtol)``. These functions run in the
worker process (``fp_analysis.run.worker``), which holds the problem; ``ModelNew`` runs in the candidate
process (``fp_analysis.run.candidate``). Every call into the user's code is guarded: whatever it raises or
returns wrongly becomes a ``UserCodeError`` naming the call.
"""

from __future__ import annotations

import contextlib
import pathlib
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import torch
from torch import nn
from torch.nn.parameter import is_lazy

from ..errors import Fate, FpaError, Side, UserCodeError
from ..model.interpose import interposed, precision_mode
from ..numerics.allclose import AtolToPass, atol_to_pass, beyond_rtol
from ..numerics.metrics import ErrorStats, error_stats
from ..options import linear_formats
from ..run.snapshot import Snapshot
from ..run.usercode import UserFile, check_output, copied, seed_all, written_inputs, wrong_output

if TYPE_CHECKING:
    from ..run.candidate import CandidateProcess

__all__ = [
    "BuiltParameters",
    "KernelBenchError",
    "TrialResult",
    "WrongOutput",
    "build_models",
    "emulated_reference",
    "init_inputs",
    "load_problem",
    "mismatch_summary",
    "numpy32",
    "reference_forward",
    "run_check",
    "trial_inputs",
    "written_notes",
]


class KernelBenchError(FpaError, ValueError):
    """A problem or solution file cannot be used (missing, no Model, inputs that do not fit...)."""


def load_problem(path: str | pathlib.Path, sources: dict[str, str] | None = None) -> UserFile:
    """The problem file (``Model``, ``get_inputs``, ``get_init_inputs``), imported in this process: from
    ``sources`` where given (its snapshot, ``Snapshot.encoded``: never from a disk the solution may have written)."""
    problem = UserFile(path, Side.PROBLEM, None if sources is None else Snapshot.decoded(sources))
    problem.load(("Model", "get_inputs", "get_init_inputs"))
    return problem


@contextlib.contextmanager
def emulated_reference(mode: str):
    """Within the block, the reference's linear ops run in ``mode`` as a CPU can emulate it
    (``interpose.precision_mode``); ``fp32`` changes nothing. Raises KernelBenchError when the block ran no
    linear op to emulate."""
    reduced = {kind: fmt for kind, fmt in linear_formats(mode).items() if fmt != "fp32"}
    if not reduced:
        yield None
        return
    with interposed(precision_mode(mode)) as interposer:
        yield interposer
    if interposer.rounded == 0:
        kinds = " or ".join({"conv": "convolution", "matmul": "matrix product"}[kind] for kind in reduced)
        raise KernelBenchError(
            f"--reference-mode {mode} could not be applied: the Model's forward ran no float32 {kinds} for it to "
            "emulate"
        )


@dataclass
class TrialResult:
    """One KernelBench trial: what its allclose check saw (``stats``: candidate against reference)."""

    trial: int
    seed: int
    passed: bool
    stats: ErrorStats
    inputs: list = field(default_factory=list, repr=False)
    reference: torch.Tensor | None = field(default=None, repr=False)
    candidate: torch.Tensor | None = field(default=None, repr=False)
    # the inputs each side wrote into (indices into get_inputs()); each got a copy, so nothing else saw it
    written: dict[str, list[int]] = field(default_factory=dict)
    # the smallest atol at which this trial's check passes at its rtol (``numerics.allclose``): the check at any atol
    atol_to_pass: AtolToPass = field(default_factory=lambda: AtolToPass(False, None))
    # outputs that differ by more than the rtol alone allows: how wrong the trial is, whatever the atol
    beyond_rtol: int = 0
    # where not every trial's tensors fit (_KEEP_TRIALS_BYTES): the batch items this one kept, its inputs the
    # batch-sized ones sliced to them and its outputs those items' (``worst_item``)
    item: list[int] | None = None
    # with them, the batch-sized inputs after the first, whole: where the items are rows of the first alone
    item_whole_inputs: dict[int, torch.Tensor] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict:
        s = self.stats
        return {
            "trial": self.trial,
            "seed": self.seed,
            "passed": self.passed,
            "max_abs": s.max_abs,  # over pairs where both are finite; None if there is none
            "mean_abs": s.mean_abs,
            "allclose_fail_fraction": s.allclose_fail_fraction,
            "nonfinite": s.nonfinite.to_dict(),
            "inputs_written": self.written,
            "atol_to_pass": self.atol_to_pass.atol,
            "atol_to_pass_known": self.atol_to_pass.known,
        }


def mismatch_summary(results: list[TrialResult], atol: float, rtol: float) -> dict:
    """What the check saw over all trials: the largest finite difference, failures, and NaN/Inf counted apart.

    ``max_abs`` is over the outputs where both sides are finite (None where no trial has one); the
    ``nonfinite`` block counts NaN and ±inf on each side and the outputs where only one side is finite,
    so an all-NaN candidate never reads as "max |difference| 0".
    """
    finite = [r.stats for r in results if r.stats.max_abs is not None]
    worst = max(results, key=lambda r: r.stats.nonfinite.mismatched_nonfinite)
    nonfinite = worst.stats.nonfinite
    return {
        "max_abs": max((s.max_abs for s in finite), default=None),
        "mean_abs": float(np.mean([s.mean_abs for s in finite])) if finite else None,
        "allclose_fail_fraction": max(r.stats.allclose_fail_fraction for r in results),
        "failed_trials": sum(not r.passed for r in results),
        "outputs": results[0].stats.count,
        "finite_pairs": min(r.stats.finite_count for r in results),
        "nonfinite": {**nonfinite.to_dict(), "trial": worst.trial},
        "atol": atol,
        "rtol": rtol,
        **_atol_to_pass(results),
    }


def _atol_to_pass(results: list[TrialResult]) -> dict:
    """The smallest atol at which every trial passes (the largest of theirs), and whether it is known: the check's
    outcome at another atol, without running it again. None (known) where some trial passes at no atol."""
    margins = [r.atol_to_pass for r in results]
    known = bool(margins) and all(m.known for m in margins)
    needed = None if not known or any(m.atol is None for m in margins) else max(m.atol for m in margins)
    return {"atol_to_pass": needed, "atol_to_pass_known": known}


def _listed(value, where: str, detail: str | None = None) -> list:
    """``value`` (what the problem's ``where`` returned) as a list; UserCodeError when it is not a list or tuple."""
    if isinstance(value, (list, tuple)):
        return list(value)
    raise UserCodeError(
        f"{where} returned a {type(value).__name__}, not a list",
        side=Side.PROBLEM,
        where=where,
        fate=Fate.BAD_OUTPUT,
        details={"detail": detail} if detail else None,
    )


def init_inputs(problem: UserFile) -> list:
    """``get_init_inputs()`` of the problem, checked to be a list or tuple."""
    return _listed(problem.call("get_init_inputs()", problem.module.get_init_inputs), "get_init_inputs()")


def trial_inputs(problem: UserFile, device: torch.device, detail: str | None = None) -> list:
    """``get_inputs()`` of the problem, checked to be a list, its tensors moved to ``device``."""
    inputs = _listed(problem.call("get_inputs()", problem.module.get_inputs, detail=detail), "get_inputs()", detail)
    return [t.to(device) if isinstance(t, torch.Tensor) else t for t in inputs]


class WrongOutput(Exception):
    """The candidate returned another shape or dtype than the reference (``words``) on ``trial``: a wrong result,
    which allclose cannot even compare (verdict ``bug``, exit 1)."""

    def __init__(self, words: str, trial: int, outputs: int):
        super().__init__(words)
        self.words, self.trial, self.outputs = words, trial, outputs


class BuiltParameters(NamedTuple):
    """Both models' parameters as built, before any forward (a Model may change its own in forward: clamp them,
    cast itself to half): the reference's parameters (name → a CPU copy) and the candidate's parameters and
    buffers (name → CPU tensor, or None for one not initialised yet: a Lazy module's)."""

    reference: dict[str, torch.Tensor]
    candidate: dict[str, torch.Tensor | None]


def build_models(problem: UserFile, candidate: CandidateProcess, device: torch.device, seed: int, meanwhile=None):
    """(Model, ``BuiltParameters``): both built as KernelBench builds them (the same seed before each), on
    ``device``; ModelNew in the candidate process, which sends the tensors of the sizes the parameter check can
    match. ``meanwhile()`` is called between the two: what it starts (in a thread) runs while the candidate process
    builds ModelNew."""
    init = init_inputs(problem)
    seed_all(seed)
    reference = problem.call("Model(*get_init_inputs())", lambda: problem.module.Model(*init).to(device))
    built = {n: q.detach().to("cpu", copy=True) for n, q in reference.named_parameters() if not is_lazy(q)}
    if meanwhile is not None:
        meanwhile()
    parameters = candidate.build(init, {}, seed, device, where="ModelNew(*get_init_inputs())", like=built)
    return reference, BuiltParameters(built, parameters)


def reference_forward(problem: UserFile, model: nn.Module, inputs: list, **context) -> tuple[torch.Tensor, list]:
    """``Model.forward`` on a copy of ``inputs`` (a Model that writes into its input changes nothing the candidate
    or the analysis sees), checked to return a floating tensor: (its output, the inputs it wrote into)."""
    given = copied(inputs)
    out = problem.call("Model.forward", model, *given, **context)
    check_output(out, "Model.forward", Side.PROBLEM, detail=context.get("detail"))
    return out, written_inputs(inputs, given)


def written_notes(written: dict[str, set[int]]) -> list[str]:
    """The notes on the inputs each side wrote into (``written``: side → indices over every call; none: no note)."""
    consequence = {
        "reference": "under KernelBench, which runs ModelNew on the tensors Model has run on, the candidate would get "
        "the changed input",
        "candidate": "a harness that runs the reference after the candidate, or reuses the inputs, would see the "
        "change",
    }
    notes = []
    for side, name in (("reference", "Model.forward"), ("candidate", "ModelNew.forward")):
        indices = sorted(written.get(side, ()))
        if indices:
            which = ", ".join(map(str, indices))
            notes.append(
                f"{name} writes into its input {which} (in place). Each side ran on its own copy of get_inputs(), so "
                f"neither the other side nor the analysis saw the change; {consequence[side]}"
            )
    return notes


def run_check(
    problem: UserFile,
    candidate: CandidateProcess,
    device: torch.device,
    *,
    trials: int = 5,
    seed: int = 42,
    tolerance: tuple[float, float] = (1e-4, 1e-4),
    reference_mode: str = "fp32",
    observe: Callable[[list, torch.Tensor | None], None] | None = None,
):
    """Run KernelBench's check; returns (reference model, ``BuiltParameters``, [TrialResult], worst trial).
    ``tolerance``: the check's (atol, rtol). ``observe(inputs, reference output)`` is called on each trial as its
    inputs are drawn (the output None) and as soon as the reference has run.

    The worst trial (``_severity``) keeps its inputs and outputs for the analysis: a candidate that is right
    on the first call and wrong later (a stale cache, state kept between calls) is judged where it is wrong; where
    all the trials' tensors fit ``_KEEP_TRIALS_BYTES``, every trial keeps them, so that each can be judged.
    ``reference_mode`` emulates the reference's operand precision on a CPU (``emulated_reference``). Each side
    gets a copy of each trial's inputs (the candidate in its own process), so a kernel that writes into its input
    cannot change what the other side or the analysis sees; each trial records which inputs each side wrote into.
    """
    atol, rtol = tolerance
    generator = torch.Generator().manual_seed(seed)  # its own generator: the trials' seeds do not wait for the models
    seeds = [int(torch.randint(0, 2**31 - 1, (1,), generator=generator).item()) for _ in range(trials)]

    def draw(trial: int) -> list:  # as KernelBench draws a trial's inputs: its seed, then get_inputs()
        with torch.no_grad():  # grad mode is per thread
            seed_all(seeds[trial])
            return trial_inputs(problem, device, f"trial {trial + 1} of {trials}")

    # On a GPU a trial's inputs are drawn in a thread while the candidate process works (builds ModelNew, runs
    # the previous trial): a full-size get_inputs() is CPU time a trial that the worker would otherwise spend while
    # the GPU idles. Only after the reference's own use of the random streams (its
    # construction, the previous trial's forward), so every draw sees what KernelBench's sequence gives it. On a
    # CPU the two would share the same cores, and the inputs the memory: drawn in turn there.
    def in_thread(upcoming: _Drawn) -> _Drawn:
        if device.type == "cuda" and _thread_draws_alike():
            upcoming.start()
        return upcoming

    upcoming = _Drawn(draw, 0)
    try:
        reference, parameters = build_models(problem, candidate, device, seed, meanwhile=lambda: in_thread(upcoming))
    finally:
        upcoming.join()
    results, worst, keep_all = [], None, None
    with torch.no_grad():
        for trial in range(trials):
            detail = f"trial {trial + 1} of {trials}"
            inputs = upcoming.result()
            if observe is not None:
                observe(inputs, None)
            with emulated_reference(reference_mode):
                ref_out, ref_written = reference_forward(problem, reference, inputs, detail=detail)
            if observe is not None:
                observe(inputs, ref_out)
            upcoming = in_thread(_Drawn(draw, trial + 1)) if trial + 1 < trials else None
            try:
                cand_out, made_on, cand_written = candidate.forward(inputs, like=ref_out, detail=detail)
            finally:
                if upcoming is not None:
                    upcoming.join()
            check_output(cand_out, "ModelNew.forward", Side.SOLUTION, like=ref_out, device=made_on, detail=detail)
            wrong = wrong_output(cand_out, ref_out)
            if wrong is not None:
                raise WrongOutput(f"{wrong} (trial {trial + 1} of {trials})", trial, ref_out.numel())
            cand_out = cand_out.to(device)
            # an index output (argmax) is compared as KernelBench's allclose compares it: as numbers
            as_real = (lambda t: t) if ref_out.is_floating_point() else (lambda t: t.double())
            stats = error_stats(as_real(cand_out), as_real(ref_out), atol=atol, rtol=rtol)
            # KernelBench's argument order: allclose(reference, candidate), rtol scaling |candidate|
            passed = bool(torch.allclose(ref_out, cand_out, atol=atol, rtol=rtol))
            written = {k: v for k, v in (("reference", ref_written), ("candidate", cand_written)) if v}
            margin = atol_to_pass(ref_out, cand_out, rtol)
            if margin.known and margin.passes(atol) != passed:  # never expected: then it is not known, not wrong
                margin = AtolToPass(False, None)
            beyond = beyond_rtol(as_real(ref_out), as_real(cand_out), rtol)
            scores = {"written": written, "atol_to_pass": margin, "beyond_rtol": beyond}
            if keep_all is None:  # every trial's tensors kept for the analysis where they fit (see _KEEP_TRIALS_BYTES)
                size = ref_out.nbytes + cand_out.nbytes + sum(t.nbytes for t in inputs if isinstance(t, torch.Tensor))
                keep_all = trials * size <= _KEEP_TRIALS_BYTES[device.type == "cuda"]
            kept = {"inputs": inputs, "reference": ref_out, "candidate": cand_out}
            share = _KEEP_TRIALS_BYTES[device.type == "cuda"] // trials  # what the inputs kept whole may take
            kept = kept if keep_all else worst_item(inputs, ref_out, cand_out, rtol, share)
            result = TrialResult(trial, seeds[trial], passed, stats, **kept, **scores)
            results.append(result)
            if worst is None or _severity(result) > _severity(worst):
                worst = result if keep_all else TrialResult(trial, seeds[trial], passed, stats, inputs, ref_out,
                                                            cand_out, **scores)  # fmt: skip
    return reference, parameters, results, worst


def items_by_badness(reference: torch.Tensor, candidate: torch.Tensor, rtol: float) -> tuple[int, int]:
    """The batch item where the candidate departs furthest from the reference (a NaN or infinity on one side only
    counts as furthest; the same infinity or NaN on both, as equal), then with the most outputs beyond what the rtol
    alone allows (``beyond_rtol``: not the atol, the analysis is the same at every atol), the first of equals; and
    the item with the most outputs beyond the rtol alone. A group of items at a time: a whole float64 copy could be
    GBs, and one item at a time took 19 s a trial at 32768 rows."""
    n = reference.shape[0]
    rows, cols = reference.reshape(n, -1), candidate.reshape(n, -1)
    group = max(1, (1 << 22) // max(1, rows.shape[1]))
    largest, most = (-1.0, -1, 0), (-1, 0)
    for start in range(0, n, group):
        r32, c32 = rows[start : start + group], cols[start : start + group]
        r, c = r32.double(), c32.double()
        difference = torch.where(torch.isnan(c - r), torch.inf, (c - r).abs())
        difference[(c == r) | (torch.isnan(c) & torch.isnan(r))] = 0.0
        worst = difference.max(dim=1).values if difference.shape[1] else torch.zeros(len(r), dtype=torch.float64)
        beyond = (~torch.isclose(r32, c32, atol=0.0, rtol=rtol, equal_nan=True)).sum(dim=1)  # as beyond_rtol counts
        for k in range(len(r)) if len(r) <= 64 else _candidates(worst, beyond):
            largest = max(largest, (float(worst[k]), int(beyond[k]), -(start + k)))
        j = int(beyond.argmax())
        most = max(most, (int(beyond[j]), -(start + j)))
    return -largest[-1], -most[1]


def _candidates(worst: torch.Tensor, beyond: torch.Tensor) -> list[int]:
    """The items of a group that can be worst by (difference, beyond the rtol): those of its largest difference."""
    return torch.nonzero(worst == worst.max()).flatten().tolist()


def worst_item(inputs: list, ref_out: torch.Tensor, cand_out: torch.Tensor, rtol: float, budget: int) -> dict:
    """What a trial keeps where not every trial's tensors fit (``TrialResult``'s fields): its inputs sliced to a few
    batch items, those items' reference and candidate outputs, and the items — copies, so the rest is freed — so
    that each trial is judged on more than the one departing furthest (a candidate that computed one trial in bf16
    and scaled every output of the others was judged on the bf16 one alone). The items: the one departing furthest,
    the one with the most outputs beyond the rtol alone, and one drawn at random (by fpa, not from the trial's seeds:
    a candidate that computes one item of each trial in bf16 as a decoy cannot know which other is kept). Nothing
    where the output has no batch, or where the inputs kept whole (those without the batch's first dimension)
    exceed ``budget`` bytes."""
    n = ref_out.shape[0] if ref_out.dim() else 0
    if n < 2 or not ref_out.is_floating_point():
        return {}
    batched = [isinstance(t, torch.Tensor) and t.dim() > 0 and t.shape[0] == n for t in inputs]
    whole = sum(t.nbytes for t, b in zip(inputs, batched, strict=True) if isinstance(t, torch.Tensor) and not b)
    if whole > budget:
        return {}
    items = sorted({*items_by_badness(ref_out, cand_out, rtol), secrets.randbelow(n)})
    index = torch.tensor(items, device=ref_out.device)
    sliced = [t.index_select(0, index.to(t.device)) if b else t for t, b in zip(inputs, batched, strict=True)]
    # A @ B with both N × N: the items are rows of A alone, B whole (``job._items_alone`` tries the same), kept
    # where the budget allows
    later = [i for i, b in enumerate(batched) if b][1:]
    others = {i: inputs[i] for i in later} if whole + sum(inputs[i].nbytes for i in later) <= budget else {}
    return {"inputs": sliced, "reference": ref_out.index_select(0, index), "candidate": cand_out.index_select(0, index),
            "item": items, "item_whole_inputs": others}  # fmt: skip


def _thread_draws_alike() -> bool:
    """Whether a new thread sees the torch state this one does where it is per thread: the default device
    (``torch.set_default_device``), the stacks of torch function and dispatch modes, and the current CUDA device
    (``torch.cuda.set_device``: a new thread's is device 0, CUDA's per-thread default). A problem that set any
    of them (at import or in its Model's constructor, say) gets its inputs drawn in turn, as a thread would draw
    them elsewhere."""
    stacks = [getattr(torch._C, name, None) for name in ("_len_torch_function_stack", "_len_torch_dispatch_stack")]
    if any(stack is None for stack in stacks):
        return False
    if torch.cuda.is_initialized() and torch.cuda.current_device() != 0:
        return False
    return torch.get_default_device() == torch.device("cpu") and all(stack() == 0 for stack in stacks)


class _Drawn:
    """One trial's inputs, drawn by ``draw(trial)`` in a thread (``start``) or, where none was started, when
    ``result`` is asked; ``result`` gives them, or raises what drawing them raised (get_inputs() failing)."""

    def __init__(self, draw, trial: int):
        self._draw, self._trial = draw, trial
        self._thread = threading.Thread(target=self.run, name=f"fpa-inputs-{trial}", daemon=True)
        self._value, self._error = None, None

    def run(self) -> None:
        try:
            self._value = self._draw(self._trial)
        except BaseException as error:  # kept for result(): raised where the sequential draw would raise it
            self._error = error

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        """Wait for the thread, if it was started."""
        if self._thread.ident is not None:
            self._thread.join()

    def result(self) -> list:
        """The inputs: drawn by the thread (joined), or here where it was never started."""
        if self._thread.ident is None:
            self.run()
        self.join()
        if self._error is not None:
            raise self._error
        return self._value


# Bytes of all the trials' inputs and outputs kept for the analysis (on the CPU, on a GPU): within them, every trial
# is judged (a candidate can err on some calls and compute in TF32 on others); beyond, the worst alone, as the memory
# of a full-size problem (1.3 GB a trial at seed 000) bids.
_KEEP_TRIALS_BYTES = {False: 1 << 30, True: 16 << 30}


def _severity(result: TrialResult) -> tuple:
    """How wrong a trial is, for choosing the one to analyse: outputs non-finite on one side only, then the largest
    finite difference, then the outputs beyond what the rtol alone allows. The departure before the count: a
    candidate that adds a large error on some calls and computes in TF32 (many small failures) on the others is
    analysed where it errs. Nothing here reads the check's atol: the analysis is the same at every atol, and a
    stored one is judged again at another (``triage.keys``)."""
    s = result.stats
    return (s.nonfinite.mismatched_nonfinite, s.max_abs or 0.0, result.beyond_rtol)


def numpy32(t: torch.Tensor) -> np.ndarray:
    """A detached float32 CPU copy as numpy."""
    return t.detach().to("cpu", torch.float32).numpy()
