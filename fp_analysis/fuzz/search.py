"""``fpa fuzz``: property-based search for configs and data on which a kernel is wrong, shrunk to the minimum.

For a user's KernelBench pair, each example draws the arguments of the problem's own constructor and the input
shapes like the problem gives them (``fp_analysis.fuzz.model_space``), builds the reference Model with them (a
configuration the Model refuses is filtered and counted), builds the candidate from the same seed, and
compares them on data from ``fp_analysis.strategies``: equal bit for bit passes; otherwise
``fp_analysis.model.engine`` decides on the whole Model, as ``fpa explain`` does: a difference that arithmetic
explains (TF32, bf16, another order, an approximated activation...) is not a failure; a bug is, and a Model
the engine cannot model ends the search (exit 2). Hypothesis shrinks a failure to a minimal config, printed in
the user's parameter names and in conv terms with a one-line command that replays it.

The user's pair runs in a worker process (``fp_analysis.run.worker``): an example on which the candidate
raises, exits, crashes or hangs ends the search as a failure of the user's code (exit 3), with the
example's replay command. Every file fuzzing writes is under the cache directory: the example database
in ``$FPA_HYPOTHESIS_DB`` (default ``~/.cache/fp_analysis/hypothesis``) and Hypothesis's own files
beside it. The number of examples defaults to 200, or 2000 with ``HYPOTHESIS_PROFILE=thorough``.
"""

from __future__ import annotations

import inspect
import json
import pathlib
import shlex
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from hypothesis import given, reject
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky, Unsatisfiable
from torch import nn

from .. import records
from ..errors import Fate, FpaError, ParameterError, Side, UserCodeError
from ..explain.jobs import parse_replay
from ..explain.kernelbench import (
    KernelBenchError,
    init_inputs,
    load_problem,
    reference_forward,
    trial_inputs,
    written_notes,
)
from ..model.engine import Effort, analyse_model
from ..model.verdict import CauseKind, Outcome
from ..numerics.formats import FORMATS
from ..options import resolve_device
from ..run.candidate import CandidateProcess
from ..run.usercode import check_output, seed_all, wrong_output
from ..run.worker import report_event
from ..strategies import DATA_KINDS, LAYOUTS, make_tensor
from .hypothesis_setup import example_database, files_in_cache, search_settings
from .model_space import MAX_MACS, ModelSpace, Refused, TooLarge, describe_convs, first_conv_macs

__all__ = ["FuzzFailure", "Search", "fuzz_job", "replay_job"]

_U = FORMATS["fp32"].unit_roundoff
# Monte-Carlo runs per fuzzed example: fewer than explain's 8 (hundreds of examples), enough for σ's scale.
_FUZZ_RUNS = 4


@dataclass
class FuzzFailure:
    """A minimal failing example: the config in the user's constructor names (with the input shapes and data),
    the Model's convs in conv terms as it builds them there, how to replay it, what failed.

    ``not_from_get_init_inputs`` names the arguments set away from their defaults that ``get_init_inputs()``
    does not give (KernelBench never passes them, so the failure may be outside what the benchmark checks).
    ``user_code`` is set when the candidate's code itself failed on the example (raised, exited or returned
    the wrong thing) where the reference returned: the record of that ``UserCodeError``; the explanation's
    verdict is then ``bug`` with its message as evidence.
    """

    config: dict
    convs: list[str]
    command: str
    max_abs: float | None
    explanation: dict
    not_from_get_init_inputs: list[str] = field(default_factory=list)
    user_code: dict | None = None


class _Pair:
    """The user's two files and their Model as a search space (``fp_analysis.fuzz.model_space``).

    The arguments ``get_init_inputs()`` gives are drawn; so are the constructor's defaulted ones when the
    candidate's constructor takes them too (KernelBench passes only what ``get_init_inputs()`` gives, so a
    ``ModelNew`` need not), which a first build of both at the problem's values decides.
    """

    def __init__(self, problem_path, solution_path, device: torch.device, candidate: CandidateProcess, sources=None):
        self.paths = (str(problem_path), str(solution_path))
        self.problem = load_problem(problem_path, sources)
        self.candidate = candidate
        candidate.loaded()  # a solution that cannot be imported fails here, before any example
        self.device = device
        self.written: dict[str, set[int]] = {}  # side → the inputs it wrote into, over every example
        init = init_inputs(self.problem)
        model_class = self.problem.module.Model
        signature = inspect.signature(model_class.__init__)
        try:
            signature.bind(None, *init)
        except TypeError as error:
            raise KernelBenchError(f"get_init_inputs() does not fit Model.__init__: {error}") from error
        seed_all(0)
        instance = self.problem.call("Model(*get_init_inputs())", model_class, *init)
        inputs = trial_inputs(self.problem, torch.device("cpu"))
        if not any(isinstance(t, torch.Tensor) and t.is_floating_point() for t in inputs):
            raise KernelBenchError("get_inputs() returns no floating-point tensor: there is no input to draw")
        self.space = ModelSpace(signature, init, inputs, instance)
        self.space.drawn -= self._refused_by_candidate(self.space.defaulted())

    def _refused_by_candidate(self, defaulted: list[str]) -> set[str]:
        """The defaulted arguments not to draw: all of them when ``ModelNew`` refuses them (a TypeError, as
        a constructor that takes fewer parameters raises), else none."""
        if not defaulted:
            return set()
        args, kwargs = self.space.call(self.space.base())
        try:
            self.candidate.build(args, kwargs, 0, self.device, where="ModelNew(...) with Model's defaults")
        except UserCodeError as error:
            if error.side is Side.SOLUTION and error.details.get("exception") == "TypeError":
                return set(defaulted)
        return set()

    def reference(self, values: dict, context: dict | None = None) -> nn.Module:
        """``Model`` built with ``values`` on the device, after the seed both sides are built from; ``Refused``
        when the Model raises."""
        args, kwargs = self.space.call(values)

        def build():
            seed_all(0)
            return self.problem.module.Model(*args, **kwargs).to(self.device)

        try:
            return self.problem.call("Model(...)", build, **(context or {}))
        except UserCodeError as error:
            if error.fate is not Fate.RAISED:
                raise
            raise Refused(str(error)) from None

    def inputs(self, shapes: list, data: dict) -> list:
        """The example's inputs: a tensor of each drawn shape from ``data`` (input i from seed + i); inputs
        that are not floating-point tensors keep the values ``get_inputs()`` gives."""
        out = []
        for i, (shape, base) in enumerate(zip(shapes, self.space.base_values, strict=True)):
            if shape is None or not (isinstance(base, torch.Tensor) and base.is_floating_point()):
                out.append(base.to(self.device) if isinstance(base, torch.Tensor) else base)
            else:
                tensor = make_tensor(tuple(shape), data["kind"], data["seed"] + i, data["layout"])
                out.append(tensor.to(self.device, base.dtype))
        return out

    def config(self, values: dict, shapes: list) -> dict:
        """The example's configuration in the user's parameter names (the drawn ones), plus the input shapes."""
        named = {k: _plain(v) for k, v in values.items() if k in self.space.drawn}
        return {**named, "input_shapes": [_plain(s) for s in shapes]}

    def user_config(self, values: dict, shapes: list, data: dict) -> dict:
        """The example as a failure reports it: its configuration and its data."""
        return {**self.config(values, shapes), "data": data}

    def command(self, values: dict, shapes: list, data: dict) -> str:
        """The one-line command that replays the example."""
        replay = json.dumps({"config": self.config(values, shapes), "data": data}, separators=(",", ":"))
        return (
            f"fpa fuzz --problem {shlex.quote(self.paths[0])} --solution {shlex.quote(self.paths[1])} "
            f"--device {self.device.type} --replay {shlex.quote(replay)}"
        )

    def failure(self, values, shapes, data, max_abs, explanation, error: UserCodeError | None = None) -> dict:
        """The failure record of an example: numbers that arithmetic does not explain, or the candidate's
        code failing where the reference returned (``error``)."""
        if error is not None:
            explanation = {"verdict": CauseKind.BUG.value, "evidence": f"where the reference returns, {error}"}
        try:
            first = next((s for s in shapes if s is not None), None)
            convs = describe_convs(self.reference(values), first)
        except Refused:
            convs = []
        base = self.space.base()
        beyond = [k for k in self.space.defaulted() if values.get(k) != base[k]]
        record = FuzzFailure(
            self.user_config(values, shapes, data),
            convs,
            self.command(values, shapes, data),
            max_abs,
            explanation,
            not_from_get_init_inputs=beyond,
        )
        record.user_code = None if error is None else error.to_dict()
        return asdict(record)

    def replayed(self, config: dict) -> tuple[dict, list]:
        """(argument values, input shapes) of a ``--replay`` config, checked against the constructor."""
        base = self.space.base()
        unknown = [k for k in config if k != "input_shapes" and k not in base]
        if unknown:
            raise ParameterError(
                f"--replay's config names {', '.join(unknown)}, which Model.__init__ does not take "
                f"(it takes {', '.join(base) or 'nothing'})"
            )
        values = {
            k: tuple(v) if isinstance(base.get(k), tuple) and isinstance(v, list) else v for k, v in config.items()
        }
        shapes = values.pop("input_shapes")
        if len(shapes) != len(self.space.base_inputs):
            raise ParameterError(
                f"--replay's config.input_shapes has {len(shapes)} shapes; get_inputs() returns "
                f"{len(self.space.base_inputs)} inputs"
            )
        return values, shapes

    def check(self, values: dict, shapes: list, data: dict, reference: nn.Module | None = None):
        """(passed, max |candidate − reference|, explanation) for one example; the explanation's verdict is
        ``identical`` (bit for bit), ``reference_nonfinite`` (the reference overflows: nothing to compare) or the
        analysis' (``fp_analysis.model.engine``).

        A configuration the problem's own ``Model`` refuses (raises on) is not an example: ``Refused``.
        The candidate raising, exiting or returning the wrong thing on the example raises ``UserCodeError``
        (Hypothesis shrinks it like any failure); one that dies or hangs is named with this example's replay
        command.
        """
        context = {
            "detail": f"example {records.dumps(self.user_config(values, shapes, data), indent=None)}",
            "replay": self.command(values, shapes, data),
        }
        if reference is None:
            reference = self.reference(values, context)
        inputs = self.inputs(shapes, data)
        try:
            with torch.no_grad():
                ref, ref_written = reference_forward(self.problem, reference, inputs, **context)
        except UserCodeError as error:
            if error.fate is not Fate.RAISED:
                raise
            raise Refused(str(error)) from None
        args, kwargs = self.space.call(values)
        self.candidate.build(args, kwargs, 0, self.device, where="ModelNew(...)", **context)
        cand, made_on, cand_written = self.candidate.forward(inputs, like=ref, **context)
        for side, indices in (("reference", ref_written), ("candidate", cand_written)):
            self.written.setdefault(side, set()).update(indices)
        if not torch.isfinite(ref).all():  # overflow in the reference itself: nothing to compare
            return True, None, {"verdict": Outcome.REFERENCE_NONFINITE.value, "explained": True}
        check_output(cand, "ModelNew.forward", Side.SOLUTION, like=ref, device=made_on, detail=context["detail"])
        wrong = wrong_output(cand, ref)
        if wrong is not None:  # a wrong result, as a wrong value is
            cause = {"name": CauseKind.BUG.value, "evidence": wrong, "residual_max": None}
            return False, None, {"verdict": CauseKind.BUG.value, "explained": False, "causes": [cause]}
        cand = cand.to(self.device)
        max_abs = float((cand.double() - ref.double()).abs().max()) if ref.numel() else 0.0
        if torch.equal(cand, ref):
            return True, 0.0, {"verdict": Outcome.IDENTICAL.value, "explained": True}
        with self.problem.watched("Model.forward (for the analysis)"):
            analysis = analyse_model(reference, inputs, ref, cand, effort=Effort(runs=_FUZZ_RUNS, twin_samples=200))
        explanation = {
            "verdict": analysis.verdict,
            "explained": analysis.explained,
            "causes": [
                {"name": c.name, "evidence": c.evidence, "residual_max": c.residual_max} for c in analysis.causes
            ],
            "candidate_vs_fp64_max": analysis.candidate_vs_fp64.get("max_abs"),
        }
        return analysis.explained, max_abs if np.isfinite(max_abs) else None, explanation


class _Stop(BaseException):  # Hypothesis shrinks on an Exception; a BaseException ends its search at once
    """End the search with ``error``: the candidate's process is gone, or the Model is out of scope."""

    def __init__(self, error: FpaError):
        super().__init__(str(error))
        self.error = error


def _layouts(reference: nn.Module, device: torch.device) -> tuple[str, ...]:
    """The input layouts to draw. Not channels_last on a CPU for a Model with a grouped Conv3d: PyTorch's CPU
    conv3d crashes the process (SIGSEGV) on a channels_last_3d input with groups ≥ 2, stride ≥ 2 and dilation
    ≥ 2 (torch 2.13: ``nn.Conv3d(4, 4, (3, 3, 1), 2, 1, 2, 2)`` on a (1, 4, 4, 21, 1) channels_last_3d input),
    which would end the search as a failure of the problem's code."""
    grouped_3d = any(isinstance(m, nn.Conv3d) and m.groups > 1 for m in reference.modules())
    if device.type == "cpu" and grouped_3d:
        return tuple(layout for layout in LAYOUTS if layout != "channels_last")
    return LAYOUTS


def _plain(value):
    """Return ``value`` with a tuple as a list, as JSON has it."""
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True)
class Search:
    """The search ``fuzz_job`` makes: at most ``max_examples`` examples, drawn from ``seed`` (both checked by
    ``fp_analysis.explain.jobs.fuzz_files``, which sends them as this record's fields)."""

    max_examples: int
    seed: int


def fuzz_job(
    problem, solution, *, search: dict, device: str, timeout: float, folder: str, problem_sources=None,
    solution_sources=None,
) -> dict:  # fmt: skip
    """Return the worker's half of ``fuzz_kernelbench``: its result without the ``worker`` block. ``search``: a
    ``Search``'s fields."""
    dev = resolve_device(device)
    with CandidateProcess(solution, folder, timeout, solution_sources, dev.type == "cuda") as candidate:
        pair = _Pair(problem, solution, dev, candidate, problem_sources)
        return _search(pair, Search(**search))


def _search(pair: _Pair, search: Search) -> dict:
    """Return the search's result: the failures found (the problem's own configuration first, then Hypothesis's
    minimal failing example), what was drawn and how the examples went (``fuzz_files``' docstring lists the keys).
    FpaError where too few examples could be run to be a verdict."""
    tally = _Tally(asked=search.max_examples)
    own_failure = _try_own_example(pair, search.seed, tally)
    prop = _property(pair, search.seed, max(1, search.max_examples - tally.counts["examples"]), tally)
    failures = _failures_of(prop, pair, tally.last)
    if own_failure is not None and not failures:  # the search found no smaller failing configuration
        failures.append(own_failure)
    if not failures and tally.counts["examples"] < search.max_examples / 2:
        # Hypothesis stops drawing after too many rejected draws: a pass on a fraction of the examples asked
        # for is not a verdict on the search asked for.
        raise tally.shortfall(search.max_examples)
    summary = {"drawn": sorted(pair.space.drawn), "verdicts": tally.verdicts, "refusals": tally.refusals(),
               "max_examples": search.max_examples, "notes": written_notes(pair.written)}  # fmt: skip
    return {"failures": failures, **summary, **tally.counts}


@dataclass
class _Tally:
    """What a search has counted: examples run before the first failure and shrink steps after it, configurations
    refused (the problem's Model raised) or too large; the verdicts of the examples before any failure; why the
    problem's Model refused; and ``last``, the latest failing example's (values, shapes, data, max_abs,
    explanation)."""

    counts: dict[str, int] = field(
        default_factory=lambda: {"examples": 0, "shrink_steps": 0, "refused": 0, "too_large": 0}
    )
    verdicts: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    last: list = field(default_factory=list)
    asked: int = 0  # the examples asked for, for the progress the worker reports

    def judged(self, explanation: dict) -> None:
        """Count an example run and its verdict, or a shrink step once an example has failed."""
        if self.last:
            self.counts["shrink_steps"] += 1
        else:
            self.counts["examples"] += 1
            self.verdicts[explanation["verdict"]] = self.verdicts.get(explanation["verdict"], 0) + 1
        self.report()

    def refused(self, refusal: Refused) -> None:
        """Count a configuration the problem's Model refused, and why."""
        self.counts["refused"] += 1
        self.reasons[str(refusal)] = self.reasons.get(str(refusal), 0) + 1
        self.report()

    def report(self) -> None:
        """How far the search is, as the step the worker's progress shows before what it is doing now."""
        counts = self.counts
        if self.last:
            step = f"shrinking the failure: step {counts['shrink_steps']}"
        else:
            skipped = counts["refused"] + counts["too_large"]
            step = f"example {counts['examples']} of {self.asked}" + (f", {skipped} refused" if skipped else "")
        report_event("progress", step=step)

    def refusals(self) -> list[dict]:
        """Return the three most frequent reasons of refusal, with their counts."""
        return [{"reason": r, "count": n} for r, n in sorted(self.reasons.items(), key=lambda kv: -kv[1])[:3]]

    def shortfall(self, max_examples: int) -> FpaError:
        """Return the error of a search that ran too few of ``max_examples`` examples, naming why."""
        top = max(self.reasons.items(), key=lambda kv: kv[1])[0] if self.reasons else None
        too_large = self.counts["too_large"]
        return FpaError(
            f"only {self.counts['examples']} of {max_examples} examples could be run: the problem's Model refused "
            f"{self.counts['refused']} drawn configurations"
            + (f" (most often: {top})" if top else "")
            + (f" and {too_large} exceeded fpa fuzz's size cap" if too_large else "")
            + "; does the constructor take the conv's parameters, and do get_inputs()' shapes follow them?"
        )


def _try_own_example(pair: _Pair, seed: int, tally: _Tally) -> dict | None:
    """Check the problem's own configuration (``_own_example``), the one KernelBench checks, counted in ``tally``;
    return its failure record, or None where it passes or is not an example. Raises the candidate's failure where
    its process died or hung there: no search after it."""
    own = _own_example(pair, seed)
    if own is None:
        return None
    own_failure = None
    try:
        passed, max_abs, explanation = pair.check(*own)
    except (Refused, TooLarge):
        passed, explanation = True, None  # not an example: the search draws others
    except UserCodeError as error:
        if error.side is not Side.SOLUTION:
            raise
        passed, explanation, own_failure = True, None, pair.failure(*own[:3], None, None, error)
        tally.counts["examples"] += 1
        if not pair.candidate.alive():  # it died or hung on the problem's own configuration: no search after it
            raise
    if explanation is not None:
        tally.judged(explanation)
    if not passed:
        own_failure = pair.failure(*own[:3], max_abs, explanation)
    return own_failure


def _data_strategy(layouts):
    """Return the strategy of an example's data: its kind, seed and layout (one of ``layouts``)."""
    kinds = {"kind": st.sampled_from(DATA_KINDS), "seed": st.integers(0, 2**31 - 1)}
    return st.fixed_dictionaries({**kinds, "layout": st.sampled_from(layouts)})


def _property(pair: _Pair, seed: int, max_examples: int, tally: _Tally):
    """Return the Hypothesis test of ``pair`` over ``max_examples`` drawn examples from ``seed``: it fails
    (AssertionError, or the candidate's UserCodeError) on an example the arithmetic does not explain, recording it
    in ``tally.last``, and raises ``_Stop`` where the search must end at once."""
    space = pair.space
    database = example_database(*[str(pathlib.Path(p).resolve()) for p in pair.paths], pair.device.type)

    @search_settings(max_examples, database)
    @hypothesis_seed(seed)
    @given(st.data())
    def prop(draws):
        values = draws.draw(space.arguments_strategy())
        shapes = data = None
        try:
            reference = pair.reference(values, {"detail": f"arguments {records.dumps(pair.config(values, []))}"})
            shapes = draws.draw(space.inputs_strategy(reference))
            data = draws.draw(_data_strategy(_layouts(reference, pair.device)))
            passed, max_abs, explanation = pair.check(values, shapes, data, reference)
        except Refused as refusal:
            tally.refused(refusal)
            reject()
        except TooLarge:
            tally.counts["too_large"] += 1
            reject()
        except UserCodeError as error:
            if error.side is Side.PROBLEM or shapes is None or data is None:
                raise _Stop(error) from None  # the problem's own code failed (not by raising): no example to shrink
            tally.counts["shrink_steps" if tally.last else "examples"] += 1
            tally.last[:] = [values, shapes, data, None, None]
            if not pair.candidate.alive():
                # Its process died or hung: each shrink step would cost a new process (and a timeout), so
                # the search stops at this example, which the error names with its replay command.
                raise _Stop(error) from None
            raise
        except FpaError as error:  # out of scope (a Model the engine cannot model): not a failing example
            raise _Stop(error) from None
        tally.judged(explanation)
        if not passed:
            tally.last[:] = [values, shapes, data, max_abs, explanation]
            raise AssertionError(explanation)

    return prop


def _failures_of(prop, pair: _Pair, last: list) -> list[dict]:
    """Run the Hypothesis test ``prop`` and return the failure records of the minimal failing example it ended on
    (``last``), none where it passed. Raises what ended the search (``_Stop``'s error), and a UserCodeError of the
    problem's side."""
    failures = []
    with files_in_cache():
        try:
            prop()
        except _Stop as stop:
            raise stop.error from None
        except AssertionError:
            failures.append(pair.failure(*last))
        except UserCodeError as error:
            if error.side is not Side.SOLUTION:
                raise
            failures.append(pair.failure(*last[:3], None, None, error))
        except Flaky:
            explanation = {
                "verdict": CauseKind.NONDETERMINISTIC.value,
                "evidence": "the candidate failed on this example once and passed on it when it ran again: its "
                "output is not a function of its input (a race, uninitialised memory, an unseeded draw)",
            }
            failures.append(pair.failure(*last[:3], None, explanation))
        except Unsatisfiable:
            pass  # every draw was rejected: the shortfall the caller checks says why
    return failures


def replay_job(
    problem, solution, *, replay: str, device: str, timeout: float, folder: str, problem_sources=None,
    solution_sources=None,
) -> dict:  # fmt: skip
    """The worker's half of ``replay_kernelbench``: its result without the ``worker`` block."""
    config, data = parse_replay(replay)
    dev = resolve_device(device)
    with CandidateProcess(solution, folder, timeout, solution_sources, dev.type == "cuda") as candidate:
        pair = _Pair(problem, solution, dev, candidate, problem_sources)
        values, shapes = pair.replayed(config)
        counts = {"examples": 1, "shrink_steps": 0, "refused": 0}
        try:
            passed, max_abs, explanation = pair.check(values, shapes, data)
        except Refused as refusal:
            raise ParameterError(f"the problem's own Model refuses the replayed configuration: {refusal}") from None
        except UserCodeError as error:
            if error.side is not Side.SOLUTION:
                raise
            return {"failures": [pair.failure(values, shapes, data, None, None, error)], **counts,
                    "notes": written_notes(pair.written)}  # fmt: skip
    failures = [] if passed else [pair.failure(values, shapes, data, max_abs, explanation)]
    return {"failures": failures, **counts, "notes": written_notes(pair.written)}


def _own_example(pair: _Pair, seed: int) -> tuple[dict, list, dict, nn.Module] | None:
    """(values, shapes, data, the Model built) of the problem's own configuration: the arguments
    ``get_init_inputs()`` gives and the shapes of ``get_inputs()``, with uniform data — the example a search must not
    miss, since it is the one KernelBench checks (a candidate wrong only there would pass every drawn one). None
    where it exceeds fpa fuzz's size cap (``MAX_MACS``: ``fpa explain`` runs that configuration) or the Model
    refuses it."""
    values = pair.space.base()
    shapes = [list(t.shape) if isinstance(t, torch.Tensor) and t.is_floating_point() else None
              for t in pair.space.base_values]  # fmt: skip
    try:
        reference = pair.reference(values)
        lead = next((tuple(s) for s in shapes if s is not None), ())
        if first_conv_macs(reference, lead) > MAX_MACS:
            return None
    except (Refused, FpaError):
        return None
    return values, shapes, {"kind": "uniform", "seed": seed, "layout": "contiguous"}, reference
