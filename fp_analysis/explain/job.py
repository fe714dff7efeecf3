"""``fpa explain``'s job: KernelBench's check on the user's pair, then why the two sides disagree.

Runs in the worker process (``fp_analysis.run.worker``): the problem here, ``ModelNew`` in the candidate
process. ``run_check`` gives the trials (a wrong output shape or dtype is a ``bug`` there); the worst trial is
explained on the whole reference Model by ``fp_analysis.model.engine`` — which rewrite of the reference's
arithmetic re-creates each side, or where the candidate departs from all of them. The parameters are evidence, not a
gate (``fp_analysis.explain.parameters``): where the analysis re-creates the candidate they do not matter; where not
and the candidate holds other values, the reference Model is evaluated again with them and what is left is
explained (``parameter_mismatch`` beside the arithmetic, ``fp_analysis.model.judge.parameter_analysis``). On a GPU
the reference is also run with cuDNN's and cuBLAS's TF32 forced on and off, the interventional evidence of what
precision each side used.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import torch

from ..errors import AnalysisMemoryError, OutOfScopeError, ParameterError, UserCodeError
from ..model import compare
from ..model.engine import Effort, analyse_model
from ..model.interpose import evaluate, precision_mode
from ..model.judge import nondeterministic, parameter_analysis, parameters_first
from ..model.rewrites import Rewrite
from ..model.scope import KeptItems
from ..model.verdict import Analysis, Cause, CauseKind, Explanation
from ..numerics.backends import tf32, tf32_settings
from ..options import ExplainOptions, autocast_format, linear_formats, resolve_device
from ..run.candidate import CandidateProcess
from ..run.usercode import Side, UserFile, check_output, wrong_output
from ..run.worker import report_event
from .exact_inputs import EXACT_INPUTS_WORDS, EXACT_TRIAL, exact_inputs_trial
from .kernelbench import (
    WrongOutput,
    emulated_reference,
    items_by_badness,
    load_problem,
    mismatch_summary,
    reference_forward,
    run_check,
    written_notes,
)
from .parameters import describe, match_parameters, with_values
from .smaller import Sizes, described, memory_error, on_fitting_instance, require_fp64_room, sizes_words

__all__ = ["explain_job"]


def explain_job(
    problem, solution, *, options: dict, timeout: float, folder, problem_sources=None, solution_sources=None
) -> dict:
    """The worker's half of ``fp_analysis.explain.jobs.explain_files``: the ``Explanation`` as a dict (its ``--json``).
    ``options``: the ``ExplainOptions`` as JSON; ``timeout``: the worker's limit on each call into the user's code
    (the options' own); ``problem_sources``, ``solution_sources``: each file's snapshot, which it is imported from
    (``fp_analysis.run.snapshot``)."""
    asked = ExplainOptions.from_json(options)
    seed, atol, rtol = asked.seed, asked.atol, asked.rtol
    dev = resolve_device(asked.device)
    mode = asked.reference_mode or "fp32"
    reduced = autocast_format(mode) or any(fmt != "fp32" for fmt in linear_formats(mode).values())
    if dev.type == "cuda" and reduced:
        raise ParameterError(
            "--reference-mode emulates a precision on the CPU; on a GPU the reference runs as "
            "your TF32 settings say (and is also run with TF32 forced on and off)"
        )
    context = {
        "device": str(dev),
        "reference_mode": mode if dev.type == "cpu" else _tf32_description(),
        "trials": asked.trials,
        "seed": seed,
        "atol": atol,
        "rtol": rtol,
    }
    loaded: dict[str, UserFile] = {}
    full_size: dict = {}
    departures: list[_Departure] = []  # each attempt's check: how far the candidate went, at that size

    def attempt(n: int, sizes: Sizes) -> dict:
        with CandidateProcess(solution, folder, timeout, solution_sources, dev.type == "cuda") as candidate:
            if not loaded:  # its import overlaps the candidate process's start
                loaded["problem"] = load_problem(problem, problem_sources)
            reference_file = loaded["problem"]
            try:
                check_mode = mode if dev.type == "cpu" else "fp32"

                def observe(inputs, out):  # the sizes a smaller instance halves, known before the check may run out
                    sizes.saw(reference_file, inputs, out)

                reference, parameters, results, worst = run_check(reference_file, candidate, dev, trials=asked.trials,
                    seed=seed, tolerance=(atol, rtol), reference_mode=check_mode, observe=observe)  # fmt: skip
                # the smaller instance's departure from plain fp32 is wanted whenever it gives the verdict; the full
                # size's only where something there runs out of memory (below)
                plain = _plain_reference(reference_file, reference, worst) if n else None
                departures.append(_Departure.of(worst, plain))
                if not n:  # the check as it ran at the problem's size, kept before anything else may run out
                    full_size["check"] = mismatch_summary(results, atol, rtol)
                again = _run_again(candidate, worst)
                import_notes = list(candidate.loaded())  # before the trial of ours, which may end the process for good
                tolerance = (check_mode, atol, rtol)
                exact, exact_note = exact_inputs_trial(reference_file, reference, candidate, worst, tolerance)
            except WrongOutput as wrong:
                if n:  # on an instance of ours, not the problem's: not the candidate's failure (smaller.py)
                    where, fate = "ModelNew.forward", "bad_output"
                    raise UserCodeError(str(wrong), side="solution", where=where, fate=fate) from None
                return _wrong_output(wrong, context, list(candidate.loaded()), asked)
            sides = ("reference", "candidate")
            written = {side: {i for r in results for i in r.written.get(side, ())} for side in sides}
            notes = import_notes + written_notes(written) + ([exact_note] if exact_note else [])
        checked = _Checked(reference_file, reference, parameters, results, worst, again, notes, exact)
        try:
            return _explained(checked, dict(context), asked)
        except (AnalysisMemoryError, torch.OutOfMemoryError, UserCodeError) as error:
            if not n and memory_error(error, dev) is not None:  # a smaller instance comes: keep what it is held to
                departures[0] = _Departure.of(worst, _plain_reference(reference_file, reference, worst))
            raise

    def report(text: str) -> None:
        report_event("progress", text=f"analysis: {text}")

    explanation, smaller = on_fitting_instance(dev, attempt, report)
    if smaller and explanation["explained"]:
        _vouched_for(smaller, explanation["causes"])
        if full_size:
            departures[0].covered_by(departures[-1], smaller)
    if smaller:  # the check the grader runs is the problem-size one: ``mismatch`` is it, where it ran to its end
        explanation["notes"] = [described(smaller, "analysed"), *explanation["notes"]]
        explanation["context"] |= {"smaller_instance": smaller, "analysed_check": explanation["mismatch"],
                                   "full_size_check_ran": bool(full_size)}  # fmt: skip
        if full_size:
            explanation["mismatch"] = full_size["check"]
        else:
            explanation["notes"].insert(1, _NO_FULL_SIZE_CHECK)
    return explanation


class _Departure(NamedTuple):
    """How far the candidate went from the reference in a check's worst trial: the largest finite difference over the
    largest finite |reference|, the outputs, whether some output is NaN or ±inf on one side only, and the same
    relative difference from the reference rerun in plain fp32 (TF32 off; None where that rerun did not fit)."""

    relative: float
    outputs: int
    one_sided: bool
    plain: float | None = None

    @classmethod
    def of(cls, worst, plain: torch.Tensor | None = None) -> _Departure:
        stats, reference = worst.stats, worst.reference
        from_plain = None if plain is None else _relative(compare.max_abs(worst.candidate, plain) or 0.0, plain)
        return cls(_relative(stats.max_abs or 0.0, reference), reference.numel(),
                   stats.nonfinite.mismatched_nonfinite > 0, from_plain)  # fmt: skip

    def covered_by(self, smaller: _Departure, sizes: dict) -> None:
        """OutOfScopeError where this full-size departure is beyond what the smaller instance's explanation covers
        (which ``_vouched_for`` limits to fp32's order of additions on the candidate's side): in the measure where the
        smaller instance departs least (from the reference as it ran, or from it in plain fp32: a TF32 reference's
        own error is not the candidate's allowance), the full size may depart at most 8 × the outputs' ratio times
        as far (at least fp32's unit roundoff 2⁻²⁴): a sum's rounding grows with its terms (at most linearly: Higham
        2002, eq. (3.4)); and NaN or ±inf on one side only must be there too."""
        measures = [(smaller.relative, self.relative, "the reference")]
        if smaller.plain is not None and self.plain is not None:
            measures.append((smaller.plain, self.plain, "the reference in plain fp32"))
        there, here, what = min(measures)
        ratio = self.outputs / max(1, smaller.outputs)
        limit = 8 * ratio * max(there, 2.0**-24)
        if (self.one_sided and not smaller.one_sided) or here > limit:
            shown = f"a relative difference from {what} of {here:.3g}"
            shown = "NaN or ±inf on one side only" if self.one_sided and not smaller.one_sided else shown
            raise OutOfScopeError(
                f"the candidate is explained on the smaller instance analysed ({sizes_words(sizes)}), but at the "
                f"problem's own size KernelBench's check sees {shown}, beyond what that instance covers "
                f"({limit:.3g}): a departure only the full size shows is not analysed (its fp64 analysis does not fit "
                "the device)"
            )


def _vouched_for(sizes: dict, causes: list[dict]) -> None:
    """OutOfScopeError where a smaller instance's explanation names the candidate's own arithmetic (bf16, an
    approximation, a formula: causes on its side other than its order of additions). The candidate may tell the
    sizes apart (by the shapes it is given), so the smaller instance vouches only for departures as small as fp32's:
    one as large as that arithmetic's could at the full size as well be a bug (an adversarial hunt: off by one term
    at the full size, bf16 on any smaller one, was explained as candidate_bf16) — whether or not the full-size check
    ran to its end."""
    named = sorted({c["name"] for c in causes if c.get("side") == "candidate"} - _CANDIDATE_ORDER_ONLY)
    if named:
        raise OutOfScopeError(
            f"the candidate is explained on the smaller instance analysed ({sizes_words(sizes)}) by arithmetic of "
            f"its own ({', '.join(named)}); at the problem's own size, which that instance does not show (its fp64 "
            "analysis does not fit the device), a departure as large as that arithmetic's could as well be a bug"
        )


# Causes on the candidate's side that leave its arithmetic fp32's: another order of the same additions, run to run
_CANDIDATE_ORDER_ONLY = {"accumulation_order", "nondeterministic"}


def _relative(difference: float, reference: torch.Tensor) -> float:
    """``difference`` over the largest finite |reference| (itself where there is none)."""
    finite = reference[torch.isfinite(reference)] if reference.is_floating_point() else reference.double()
    scale = float(finite.abs().max()) if finite.numel() else 0.0
    return difference / scale if scale > 0 else difference


def _plain_reference(problem: UserFile, reference, worst) -> torch.Tensor | None:
    """The reference Model rerun on the worst trial's inputs (copies) in plain fp32, TF32 off; None where that
    rerun fails (out of memory, most likely: the full-size check is then held to the reference as it ran)."""
    try:
        out = _reference_with_tf32(problem, reference, [t.clone() if isinstance(t, torch.Tensor) else t
                                                        for t in worst.inputs], on=False)  # fmt: skip
    except (torch.OutOfMemoryError, MemoryError, AnalysisMemoryError, UserCodeError):  # the call wraps what it raised
        return None
    return out if isinstance(out, torch.Tensor) and out.shape == worst.candidate.shape else None


_NO_FULL_SIZE_CHECK = (
    "KernelBench's check did not run to its end at the problem's own size here: its tensors beside fpa's copies of "
    "them (each trial's inputs for both sides, both outputs, the worst trial kept) ran out of the device's memory; "
    "the check and every trial shown are the smaller instance's, and whether the check passes at the problem's size "
    "is not known"
)


class _Checked(NamedTuple):
    """KernelBench's check as it ran: the problem, the reference Model, ``run_check``'s parameters, trials and worst
    trial, the candidate's second run on the worst trial's inputs, the notes so far, and the trial on the worst's
    inputs of few bits where it ran (``exact_inputs``)."""

    file: UserFile
    reference: torch.nn.Module
    parameters: object
    results: list
    worst: object
    again: torch.Tensor
    notes: list[str]
    exact: object = None


def _explained(checked: _Checked, context: dict, asked: ExplainOptions) -> dict:
    """The explanation of a check that ran: the worst trial analysed, then judged against every trial, the
    candidate's parameters and its second run."""
    reference_file, reference, parameters, results, worst, again, notes, exact = checked
    seed, atol, rtol, mode = asked.seed, asked.atol, asked.rtol, asked.reference_mode or "fp32"
    dev = worst.reference.device
    context["analysed_trial"] = worst.trial
    mismatch = mismatch_summary(results, atol, rtol)
    trial_dicts = [r.to_dict() for r in results]
    record = {"mismatch": mismatch, "trials": trial_dicts, "context": context, "notes": notes}
    unset = sorted(name for name, t in parameters.candidate.items() if t is None)
    if unset:  # a Lazy module: its values exist only after a forward, so nothing to compare them with
        shown = ", ".join(unset[:4]) + (f" and {len(unset) - 4} more" if len(unset) > 4 else "")
        notes.append(f"parameters not compared: ModelNew's {shown} had no values when it was built (a Lazy module)")
    matches = [] if unset else match_parameters(parameters.reference, parameters.candidate)
    if dev.type == "cuda":
        context["reference_tf32_forced"] = _forced_tf32(reference_file, reference, worst.inputs, worst.candidate)
    with reference_file.watched(_CHECKING_ITEMS):
        analysed_model, inputs, ref_out, cand_out, items = _batch_subset(reference, worst, mode, rtol)
    output = worst.reference if isinstance(analysed_model, KeptItems) else ref_out  # KeptItems: computed whole
    require_fp64_room(inputs, output, "the fp64 analysis of the Model at this size")
    if items is not None:
        whole = {"whole_model": True} if isinstance(analysed_model, KeptItems) else {}
        context["analysed_batch_items"] = {"items": items, "of": int(worst.reference.shape[0]), **whole}
        if whole:
            notes.append(
                f"the Model does not treat batch items apart (one run alone does not give the reference's slice): "
                f"it was evaluated whole each time and batch item {items[0]} of its output analysed"
            )
    analysis = analyse_model(
        analysed_model,
        inputs,
        ref_out,
        cand_out,
        seed=seed,
        progress=lambda text: report_event("progress", text=f"analysis: {text}"),
        effort=Effort(twin_samples=asked.samples),
        watch=reference_file.watched,
    )
    ran_again = (analysed_model, inputs, ref_out, items)  # the worst trial's: what the candidate's second run is of
    if analysis.explained:
        analysis, context["judged"], piece = _judge_every_trial(reference, reference_file, results, worst, analysis,
                                                                asked)  # fmt: skip
        if piece is not None:  # another trial, or other items, gave the verdict: what follows is about those
            analysed_model, inputs, ref_out, cand_out, items = piece
            context["analysed_trial"] = context["judged"]["not_explained"]
            context.pop("analysed_batch_items", None)
            if items is not None:
                context["analysed_batch_items"] = {"items": items, "of": int(worst.reference.shape[0])}
    if exact is not None and not analysis.explained:
        context["exact_inputs"] = {"judged": False}  # the check's trials gave the verdict
    elif exact is not None:
        analysis = _judge_exact_inputs(reference, reference_file, exact, analysis, asked, context, notes)
    unaffected = analysis.explained  # re-created with the reference's own parameters
    if any(m.status in ("differs", "rounded") for m in matches):
        analysed = (inputs, ref_out, cand_out, items if isinstance(analysed_model, KeptItems) else None)
        analysis, unaffected = _with_candidate_values(reference_file, reference, matches, analysis, analysed, asked)
    if not compare.same_values(worst.candidate, again):
        analysis = _nondeterministic(reference_file, analysis, worst, again, ran_again, asked)
        context["candidate_runs"] = 2
    differences = describe(matches)
    if differences:
        effect = " (the output does not depend on it beyond the floor)" if unaffected else ""
        notes.append(f"parameters held otherwise than the reference's{effect}: {'; '.join(differences)}")
    return Explanation.of(analysis, **record).to_dict()


def _with_candidate_values(problem: UserFile, model, matches, first: Analysis, analysed: tuple, asked: ExplainOptions):
    """(the analysis that gives the verdict, whether the parameters did not matter): ``first`` (the analysis of
    ``analysed``, the trial's (inputs, reference, candidate), against the reference Model as built) held against the
    analysis against the reference Model evaluated with the candidate's parameter values (``parameters.with_values``;
    ``analysed``'s fourth, the items kept where the analysis kept them from the whole Model's output, else None).
    Where ``first`` is not explained, the verdict names the parameters and what arithmetic is left
    (``fp_analysis.model.judge.parameter_analysis``); where it is, it stands unless the candidate's values re-create
    the candidate with less (``parameters_first``)."""
    if first.explained and first.recreations.get("candidate") == Rewrite().key():
        return first, True  # plain arithmetic re-creates it with the reference's own values: nothing simpler
    inputs, ref_out, cand_out, kept = analysed
    report_event("progress", text="analysis: the reference Model again, with the candidate's parameter values")
    substituted = with_values(model, matches)
    with emulated_reference(asked.reference_mode or "fp32"):
        reference_again, _ = reference_forward(problem, substituted, inputs, detail="with the candidate's parameters")
    reference_again = reference_again.detach()
    if kept is not None:  # the items the analysis kept (one, or a group of them) from the whole Model's output
        start, count = kept[0], len(kept)
        substituted, reference_again = KeptItems(substituted, start, count), reference_again[start : start + count]
    try:
        second = analyse_model(substituted, inputs, reference_again, cand_out, seed=asked.seed, watch=problem.watched)
    except AnalysisMemoryError:  # our memory, not a finding about the values: a smaller instance is analysed
        raise
    except OutOfScopeError:  # the reference with those values is not re-created: nothing more to say
        second = None
    differing = [m.words for m in matches if m.status == "differs"]
    stored: dict[str, list[str]] = {}
    for m in matches:
        if m.status == "rounded":
            stored.setdefault(m.fmt, []).append(m.name)
    shares = {
        "parameters": compare.max_abs(ref_out, reference_again),
        "arithmetic": compare.max_abs(reference_again, cand_out),
    }
    if first.explained and (second is None or not parameters_first(first, second)):
        return first, True
    return parameter_analysis(first, second, differing, stored, shares), False


def _run_again(candidate: CandidateProcess, worst) -> torch.Tensor:
    """The candidate's output on the worst trial's inputs, a second time: a kernel that races or adds with atomics in
    the order threads arrive returns another output for the same inputs (a wrong shape or dtype the second time is
    a bug, as the first)."""
    report_event("progress", text="ModelNew.forward again on the worst trial's inputs: is it deterministic?")
    detail = f"trial {worst.trial + 1}, run again"
    out, made_on, _ = candidate.forward(worst.inputs, like=worst.reference, detail=detail)
    check_output(out, "ModelNew.forward", Side.SOLUTION, like=worst.reference, device=made_on, detail=detail)
    wrong = wrong_output(out, worst.reference)
    if wrong is not None:
        raise WrongOutput(f"{wrong} (trial {worst.trial + 1}, run again)", worst.trial, worst.reference.numel())
    return out.to(worst.candidate.device)


def _nondeterministic(problem: UserFile, first: Analysis, worst, again, analysed: tuple, asked) -> Analysis:
    """The verdict where the second run differs from the first (``judge.nondeterministic``): the second run analysed
    as the first was (``analysed``: the Model, inputs, reference and batch items it was analysed on)."""
    model, inputs, ref_out, items = analysed
    second_out = again if items is None else again[items[0] : items[0] + len(items)]
    report_event("progress", text="analysis: the candidate's second run, which differs from its first")
    second = analyse_model(model, inputs, ref_out, second_out, seed=asked.seed, watch=problem.watched)
    differing = int(compare.differing(worst.candidate, again).sum())
    return nondeterministic(first, second, differing, again.numel(), compare.max_abs(worst.candidate, again))


def _wrong_output(wrong: WrongOutput, context: dict, notes: list[str], asked: ExplainOptions) -> dict:
    """The explanation where the candidate returned another shape or dtype than the reference: ``bug``, with no
    analysis (there is nothing output by output to compare), the check failing on that trial."""
    cause = Cause(CauseKind.BUG.value, wrong.words, None, "candidate")
    mismatch = {
        "max_abs": None, "mean_abs": None, "allclose_fail_fraction": 1.0, "failed_trials": 1, "outputs": wrong.outputs,
        "finite_pairs": 0, "nonfinite": {}, "atol": asked.atol, "rtol": asked.rtol, "wrong_output": wrong.words,
        "atol_to_pass": None, "atol_to_pass_known": True,  # another shape or dtype fails at every atol
    }  # fmt: skip
    analysis = Analysis(explained=False, verdict=cause.name, causes=[cause], location={"summary": wrong.words})
    context = {**context, "analysed_trial": wrong.trial}
    return Explanation.of(analysis, mismatch=mismatch, trials=[], context=context, notes=notes).to_dict()


# What the reference's evaluations that check which batch items run alone are, for the watchdog and its words.
_CHECKING_ITEMS = "Model.forward (checking which batch items can be analysed alone)"
# Outputs above which the analysis evaluates one batch item rather than the whole batch (when the Model treats
# batch items independently): 2^22 fp64 outputs are 32 MB; the seed-000 output (129 M) would be 1 GB a copy.
_SUBSET_ABOVE = 1 << 22


def _batch_subset(model, trial, mode: str, rtol: float):
    """(Model, inputs, reference, candidate, items): where the output is large, the worst batch item — run alone
    where the Model treats batch items independently, else kept from the whole Model's evaluations (the Model
    wrapped in ``scope.KeptItems``, the inputs whole: a norm over the whole tensor); else everything (items None).

    The worst item is the one where the candidate departs furthest from the reference (a NaN or infinity on one side
    only counts as furthest), then the one with the most outputs beyond what the check's rtol alone allows (not its
    atol: the analysis is the same at every atol): an item with a bug smaller than the tolerance, beside items that
    are equal, or one with a large bug, beside items with many small differences (TF32's), is the one analysed —
    not one where nothing is wrong. Independence is checked, not assumed: the item
    run alone through the reference's own arithmetic must give the reference's output for it (BatchNorm in training
    mode, or a reduction over the batch, would not).
    """
    reference, candidate = trial.reference, trial.candidate
    n = reference.shape[0] if reference.dim() else 1
    if reference.numel() <= _SUBSET_ABOVE or n == 1:
        return model, trial.inputs, reference, candidate, None

    item = items_by_badness(reference, candidate, rtol)[0]
    return (*_items_alone(model, trial, item, 1, mode), [item])


def _items_alone(model, trial, start: int, count: int, mode: str):
    """(Model, inputs, reference, candidate) of batch items ``start`` … ``start + count − 1``: run alone where the
    Model treats batch items apart (checked: the items through the reference's own arithmetic give the reference's
    output for them), else kept from the whole Model's evaluations (``scope.KeptItems``)."""
    reference, candidate = trial.reference.detach(), trial.candidate.detach()
    n = reference.shape[0]
    expected = reference[start : start + count]
    batched = [i for i, t in enumerate(trial.inputs) if isinstance(t, torch.Tensor) and t.dim() and t.shape[0] == n]
    # every input whose first dimension is the batch's, else the first alone: in A @ B with A and B both N × N
    # (a symmetric or triangular matmul) only A's rows are items
    for sliced in dict.fromkeys([tuple(batched), tuple(batched[:1])]):
        inputs = [t[start : start + count] if i in sliced else t for i, t in enumerate(trial.inputs)]
        if _gives(model, inputs, expected, mode):
            return model, inputs, expected, candidate[start : start + count]
    return KeptItems(model, start, count), trial.inputs, expected, candidate[start : start + count]


def _gives(model, inputs: list, expected: torch.Tensor, mode: str) -> bool:
    """Whether the Model on ``inputs`` (batch items alone), through the reference's own arithmetic, gives
    ``expected`` (the reference's output for them, to 1e-3 of its largest value): the items are ones it treats apart.
    A Model that does not take them alone (a norm over the batch, shapes it assumes) does not."""
    scale = float(expected.abs().max()) if expected.numel() else 0.0
    try:
        alone = evaluate(model, inputs, precision_mode(mode)).output
    except Exception:  # the Model does not take these items alone
        return False
    return alone.shape == expected.shape and float((alone - expected).abs().max()) <= 1e-3 * scale


def _pieces(model, problem: UserFile, trial, every_item: bool, mode: str, rtol: float):
    """(Model, inputs, reference, candidate, items) of what a trial is judged on: the whole trial up to
    ``_JUDGE_WHOLE`` outputs; beyond, every batch item in groups of at most that many outputs where ``every_item``
    (the worst trial: a candidate that computes one item in bf16 and errs in the others would otherwise be judged on
    the item that departs furthest alone, the bf16 one), else its worst item (``_batch_subset``)."""
    if trial.reference.numel() <= _JUDGE_WHOLE or trial.reference.dim() == 0:
        yield model, trial.inputs, trial.reference, trial.candidate, None
        return
    if not every_item:
        with problem.watched(_CHECKING_ITEMS):
            worst_item = _batch_subset(model, trial, mode, rtol)
        yield worst_item
        return
    n = trial.reference.shape[0]
    group = max(1, _JUDGE_WHOLE // max(1, trial.reference[0].numel()))
    for start in range(0, n, group):
        with problem.watched(_CHECKING_ITEMS):
            piece = _items_alone(model, trial, start, min(group, n - start), mode)
        yield (*piece, list(range(start, min(n, start + group))))


# Outputs up to which a trial is judged whole against the rewrites that explained the worst (beyond: its worst batch
# item, as the analysis itself does past _SUBSET_ABOVE); 2^24 fp64 outputs are 128 MB a copy.
_JUDGE_WHOLE = 1 << 24


def _judge_every_trial(model, problem: UserFile, results, worst, analysis: Analysis, asked: ExplainOptions):
    """(the analysis that gives the verdict, what was judged, the piece it was made on where not the worst's: Model,
    inputs, reference, candidate, items): ``analysis`` of the worst trial, held against every
    trial whose tensors were kept (``kernelbench.run_check``) — a candidate can compute in TF32 on some calls and err
    on others, or err in one batch item beside items computed in bf16, and be explained where it does not err.

    Each trial, whole (up to ``_JUDGE_WHOLE`` outputs; beyond, the worst trial's every batch item in groups of that
    size and another trial's worst item: ``_pieces``), is judged against the rewrites that re-created each side of
    the worst (``_judge_trial``), and the first trial (the items of it) the candidate is not re-created on gives the
    verdict."""
    judged = []
    for trial in results:
        trial = worst if trial.trial == worst.trial else trial  # the worst is kept whatever its size
        if trial.candidate is None:  # not kept: too large to keep them all, and no batch item to keep instead
            continue
        if trial.item is not None:
            alone = _alone_alike(model, problem, trial, asked.reference_mode or "fp32")
            if alone is None:
                continue  # its batch items, kept alone, are not what the Model computes for them in the batch
            trial = dataclasses.replace(trial, inputs=alone)
        judged.append(trial.trial)
        found = _judge_trial(model, problem, trial, trial is worst, analysis, asked)
        if found is not None:
            return found[0], {"trials": judged, "of": len(results), "not_explained": trial.trial}, found[1]
    return analysis, {"trials": judged, "of": len(results)}, None


def _judge_trial(model, problem: UserFile, trial, is_worst: bool, analysis: Analysis, asked: ExplainOptions):
    """(the full analysis of the first piece of ``trial`` that is not explained, that piece: Model, inputs,
    reference, candidate, items), or None where every piece is: each is judged against the rewrites that re-created
    each side of the worst (``Effort.recheck``: a fraction of the evaluations), and where they do not re-create it,
    analysed in full. What is equal bit for bit has nothing to judge."""
    mode = asked.reference_mode or "fp32"
    for judged_model, inputs, ref_out, cand_out, items in _pieces(model, problem, trial, is_worst, mode, asked.rtol):
        if is_worst and items is None and analysis.floor["outputs"] == ref_out.numel():
            continue  # the worst trial, analysed whole already
        if torch.equal(ref_out, cand_out):
            continue
        items = trial.item if trial.item is not None else items
        what = _trial_words(trial) + (f", batch items {items[0]}…{items[-1]}" if items else "")
        report_event("progress", text=f"analysis: judging {what} against the worst's re-creations")
        try:
            recheck = Effort.recheck(analysis.recreations.values())
            check = analyse_model(
                judged_model, inputs, ref_out, cand_out, seed=asked.seed, effort=recheck, watch=problem.watched
            )
        except OutOfScopeError:  # the worst's rewrites do not re-create this reference: analysed in full
            check = None
        if check is None or not check.explained:
            report_event("progress", text=f"analysis: {what} in full")
            full = analyse_model(judged_model, inputs, ref_out, cand_out, seed=asked.seed, watch=problem.watched)
            if not full.explained:
                return full, (judged_model, inputs, ref_out, cand_out, items)
    return None


def _judge_exact_inputs(model, problem: UserFile, exact, analysis: Analysis, asked, context: dict, notes: list):
    """The analysis that gives the verdict, once the check's trials are explained: theirs, or where the trial on
    inputs of few bits (``exact_inputs``) is not explained, that trial's — where every legitimate order of the
    Model's sums is exact, a departure that an order's allowance took in on random inputs is a bug."""
    found = _judge_trial(model, problem, exact, False, analysis, asked)
    context["exact_inputs"] = {"judged": True, "explained": found is None}
    if found is None:
        return analysis
    notes.append(
        f"the check's trials were explained, but on {EXACT_INPUTS_WORDS}, the worst trial's inputs rounded so, "
        "the candidate departs from the reference where no legitimate arithmetic does: the verdict and the "
        "location are from that trial"
    )
    items = found[1][4]
    context.pop("analysed_batch_items", None)
    if items is not None:
        context["analysed_batch_items"] = {"items": items, "of": int(exact.reference.shape[0])}
    return found[0]


def _trial_words(trial) -> str:
    return "the trial on inputs of few significant bits" if trial.trial == EXACT_TRIAL else f"trial {trial.trial + 1}"


def _alone_alike(model, problem: UserFile, trial, mode: str) -> list | None:
    """The inputs on which the Model run on a trial's kept batch items alone (``kernelbench.worst_item``) gives the
    reference's output for them, as ``_items_alone`` checks: every batch-sized input sliced, else the first alone
    (A @ B with both N × N: rows of A, B whole); None where neither does (a norm over the batch): not judged."""
    first_alone = [trial.item_whole_inputs.get(i, t) for i, t in enumerate(trial.inputs)]
    for inputs in [trial.inputs, first_alone][: 2 if trial.item_whole_inputs else 1]:
        with problem.watched(_CHECKING_ITEMS):
            if _gives(model, inputs, trial.reference, mode):
                return inputs
    return None


def _tf32_description() -> str:
    settings = tf32_settings()
    return ", ".join(f"{k} {'tf32' if v else 'fp32' if v is not None else 'mixed API'}" for k, v in settings.items())


def _forced_tf32(problem: UserFile, reference, inputs, candidate_out) -> dict:
    """The reference rerun with TF32 forced on and off for convolutions and matrix products together, and how
    far the candidate is from each: which precision each side used, by intervention."""
    out = {}
    for flag in (True, False):
        ref = _reference_with_tf32(problem, reference, inputs, on=flag)
        out["tf32_on" if flag else "tf32_off"] = {
            "max_abs_vs_candidate": float((ref - candidate_out).abs().max()),
            "bitwise_equal_candidate": bool(torch.equal(ref, candidate_out)),
        }
    return out


def _reference_with_tf32(problem: UserFile, reference, inputs: list, *, on: bool):
    """The reference Model's output on ``inputs`` with TF32 forced ``on`` or off for convolutions and matrix products
    together (the problem's own code, watched as every call into it)."""
    with torch.no_grad(), tf32(conv=on, matmul=on):
        return problem.call(f"Model.forward (TF32 {'on' if on else 'off'})", reference, *inputs)
