"""``fpa fuzz``: property-based search for configs and data on which a kernel is wrong, shrunk to the minimum.

For a user's KernelBench pair, each example draws constructor arguments (only those ``Model.__init__``
takes; the rest keep the values ``get_init_inputs`` gives) and an input from ``fp_analysis.strategies``,
builds both models from the same seed, and compares them: equal bit for bit passes; otherwise
``fp_analysis.engine`` decides on the whole Model, as ``fpa explain`` does: a difference that arithmetic
explains (TF32, bf16, another order, an approximated activation...) is not a failure; a bug is, and a Model
the engine cannot model ends the search (exit 2). Hypothesis shrinks a failure to a minimal config and
prints a one-line command that replays it.

The user's pair runs in a worker process (``fp_analysis.worker``): an example on which the candidate
raises, exits, crashes or hangs ends the search as a failure of the user's code (exit 3), with the
example's replay command. Every file fuzzing writes is under the cache directory: the example database
in ``$FPA_HYPOTHESIS_DB`` (default ``~/.cache/fp_analysis/hypothesis``) and Hypothesis's own files
beside it. The number of examples defaults to 200, or 2000 with ``HYPOTHESIS_PROFILE=thorough``.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import pathlib
import shlex
from dataclasses import asdict, dataclass

import numpy as np
import torch
from hypothesis import HealthCheck, Verbosity, given, reject, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase
from hypothesis.errors import Flaky, Unsatisfiable
from torch import nn

from . import records
from .candidate import CandidateProcess
from .engine import analyse_model
from .errors import Fate, FpaError, OutOfScopeError, ParameterError, Side, UserCodeError
from .formats import FORMATS
from .jobs import default_max_examples, parse_replay
from .kernelbench import KernelBenchError, init_inputs, load_problem
from .options import check_count, resolve_device
from .places import cache_dir
from .strategies import DATA_KINDS, LAYOUTS, config_spec, conv2d_configs, conv3d_kk1_configs, make_tensor
from .usercode import check_output

__all__ = ["FuzzFailure", "fuzz_job", "fuzz_op", "replay_job"]

_U = FORMATS["fp32"].unit_roundoff
# Monte-Carlo runs per fuzzed example: fewer than explain's 8 (hundreds of examples), enough for σ's scale.
_FUZZ_RUNS = 4
_CONV_KEYS = ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups", "bias")


@dataclass
class FuzzFailure:
    """A minimal failing example: the config in the user's constructor names, how to replay it, what failed.

    ``user_code`` is set when the candidate's code itself failed on the example (raised, exited or returned
    the wrong thing) where the reference returned: the record of that ``UserCodeError``; the explanation's
    verdict is then ``bug`` with its message as evidence.
    """

    config: dict
    command: str
    max_abs: float | None
    explanation: dict
    user_code: dict | None = None


def _database(*key: str) -> DirectoryBasedExampleDatabase:
    """The persistent example database, one folder per fuzzed target, so targets never replay each other's."""
    root = cache_dir("hypothesis", override="FPA_HYPOTHESIS_DB")
    digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:16]
    return DirectoryBasedExampleDatabase(str(root / digest))


@contextlib.contextmanager
def _hypothesis_files_in_cache():
    """Hypothesis's own files (character tables, constants) under the cache directory, not ``./.hypothesis``."""
    set_hypothesis_home_dir(cache_dir("hypothesis", override="FPA_HYPOTHESIS_DB") / "home")
    try:
        yield
    finally:
        set_hypothesis_home_dir(None)


def _settings(max_examples: int, database) -> settings:
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=database,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,  # Hypothesis's report goes to stdout, which is ours (or the user's, in a worker)
    )


class _Pair:
    """The user's two files, their constructor's parameters and the base values get_init_inputs gives."""

    def __init__(self, problem_path, solution_path, device: torch.device, candidate: CandidateProcess):
        self.paths = (str(problem_path), str(solution_path))
        self.problem = load_problem(problem_path)
        self.candidate = candidate
        self.device = device
        init = init_inputs(self.problem)
        model_class = self.problem.module.Model
        signature = inspect.signature(model_class.__init__)
        try:
            bound = signature.bind(None, *init)
        except TypeError as error:
            raise KernelBenchError(f"get_init_inputs() does not fit Model.__init__: {error}") from error
        bound.apply_defaults()
        self.base = {k: v for k, v in bound.arguments.items() if k != "self"}
        self.params = [p for p in signature.parameters if p != "self"]
        instance = self.problem.call("Model(*get_init_inputs())", model_class, *init)
        convs = [m for m in instance.modules() if isinstance(m, (nn.Conv2d, nn.Conv3d))]
        if len(convs) != 1:
            raise OutOfScopeError(
                f"fpa fuzz draws configurations of one nn.Conv2d or nn.Conv3d; the Model has {len(convs)} of them"
            )
        self.fixed = self._instance_values(convs[0])
        self.nd = 3 if isinstance(convs[0], nn.Conv3d) else 2

    def _instance_values(self, conv) -> dict:
        """Values for conv parameters the user's constructor does not take: what its instance has."""
        values = {
            "in_channels": conv.in_channels,
            "out_channels": conv.out_channels,
            "kernel_size": tuple(conv.kernel_size),
            "stride": tuple(conv.stride),
            "padding": conv.padding if isinstance(conv.padding, str) else tuple(conv.padding),
            "dilation": tuple(conv.dilation),
            "groups": conv.groups,
            "bias": conv.bias is not None,
        }
        return {k: v for k, v in values.items() if k not in self.params}

    def strategy(self) -> st.SearchStrategy:
        configs = conv3d_kk1_configs() if self.nd == 3 else conv2d_configs()

        def adjust(config):
            config = {**config, **self.fixed}
            if "in_channels" in self.fixed:
                config["input_shape"] = (
                    config["input_shape"][0],
                    self.fixed["in_channels"],
                    *config["input_shape"][2:],
                )
            return config

        def valid(config) -> bool:
            try:
                config_spec(config).output_shape(tuple(config["input_shape"]))
                return True
            except FpaError:
                return False

        data = st.fixed_dictionaries(
            {"kind": st.sampled_from(DATA_KINDS), "seed": st.integers(0, 2**31 - 1), "layout": st.sampled_from(LAYOUTS)}
        )
        return st.tuples(configs.map(adjust).filter(valid), data)

    def kwargs(self, config: dict) -> dict:
        out = {}
        for name in self.params:
            if name in config and name in _CONV_KEYS:
                out[name] = config[name]
            elif name == "multiplier_shape":
                out[name] = (config["out_channels"],) + (1,) * self.nd
            elif name in self.base:
                out[name] = self.base[name]
            else:
                raise KernelBenchError(
                    f"Model.__init__ needs {name!r}, which neither the fuzzer nor get_init_inputs provides"
                )
        return out

    def user_config(self, config: dict, data: dict) -> dict:
        """The example in the user's parameter names (only what the constructor takes), plus input and data."""
        named = {k: _plain(v) for k, v in self.kwargs(config).items()}
        return {**named, "input_shape": list(config["input_shape"]), "data": data}

    def command(self, config: dict, data: dict) -> str:
        replay = json.dumps({"config": _jsonable(config), "data": data}, separators=(",", ":"))
        return (
            f"fpa fuzz --problem {shlex.quote(self.paths[0])} --solution {shlex.quote(self.paths[1])} "
            f"--device {self.device.type} --replay {shlex.quote(replay)}"
        )

    def failure(self, config: dict, data: dict, max_abs, explanation, error: UserCodeError | None = None) -> dict:
        """The failure record of an example: numbers that arithmetic does not explain, or the candidate's
        code failing where the reference returned (``error``)."""
        if error is not None:
            explanation = {"verdict": "bug", "evidence": f"where the reference returns, {error}"}
        record = FuzzFailure(self.user_config(config, data), self.command(config, data), max_abs, explanation)
        record.user_code = None if error is None else error.to_dict()
        return asdict(record)

    def check(self, config: dict, data: dict) -> tuple[bool, float | None, dict | None]:
        """(passed, max |candidate − reference|, explanation or None) for one example.

        A configuration the problem's own ``Model`` refuses (raises on) is not an example: ``_Refused``.
        The candidate raising, exiting or returning the wrong thing on the example raises ``UserCodeError``
        (Hypothesis shrinks it like any failure); one that dies or hangs is named with this example's replay
        command.
        """
        kwargs = self.kwargs(config)
        context = {
            "detail": f"example {records.dumps(self.user_config(config, data), indent=None)}",
            "replay": self.command(config, data),
        }
        x = make_tensor(tuple(config["input_shape"]), data["kind"], data["seed"], data["layout"]).to(self.device)
        try:
            torch.manual_seed(0)
            reference = self.problem.call(
                "Model(**config)", lambda: self.problem.module.Model(**kwargs).to(self.device), **context
            )
            with torch.no_grad():
                ref = self.problem.call("Model.forward", reference, x, **context)
        except UserCodeError as error:
            if error.fate is not Fate.RAISED:
                raise
            raise _Refused(str(error)) from None
        check_output(ref, "Model.forward", Side.PROBLEM, detail=context["detail"])
        self.candidate.build([], kwargs, 0, self.device, where="ModelNew(**config)", **context)
        cand, made_on = self.candidate.forward([x], **context)
        if not torch.isfinite(ref).all():
            return True, 0.0, None  # overflow in the reference itself: nothing to compare
        check_output(cand, "ModelNew.forward", Side.SOLUTION, like=ref, device=made_on, detail=context["detail"])
        cand = cand.to(self.device)
        max_abs = float((cand.double() - ref.double()).abs().max()) if ref.numel() else 0.0
        if torch.equal(cand, ref):
            return True, 0.0, None
        with self.problem.watched("Model.forward (for the analysis)"):
            analysis = analyse_model(reference, [x], ref, cand, runs=_FUZZ_RUNS, twin_samples=200)
        explanation = {
            "verdict": analysis.verdict,
            "explained": analysis.explained,
            "causes": [
                {"name": c.name, "evidence": c.evidence, "residual_max": c.residual_max} for c in analysis.causes
            ],
            "candidate_vs_fp64_max": analysis.candidate_vs_fp64.get("max_abs"),
        }
        return analysis.explained, max_abs if np.isfinite(max_abs) else None, explanation


class _Refused(Exception):
    """The problem's own Model refused a drawn configuration: not an example."""


class _Stop(BaseException):  # Hypothesis shrinks on an Exception; a BaseException ends its search at once
    """End the search with ``error``: the candidate's process is gone, or the Model is out of scope."""

    def __init__(self, error: FpaError):
        super().__init__(str(error))
        self.error = error


def _plain(value):
    return list(value) if isinstance(value, tuple) else value


def _jsonable(config: dict) -> dict:
    return {k: _plain(v) for k, v in config.items()}


def fuzz_job(problem, solution, *, max_examples: int, device: str, seed: int, timeout: float, folder: str) -> dict:
    """The worker's half of ``fuzz_kernelbench``: its result without the ``worker`` block."""
    with CandidateProcess(solution, folder, timeout) as candidate:
        pair = _Pair(problem, solution, resolve_device(device), candidate)
        return _search(pair, max_examples, seed)


def _search(pair: _Pair, max_examples: int, seed: int) -> dict:
    counts = {"examples": 0, "shrink_steps": 0, "refused": 0}
    last: list = []

    @_settings(max_examples, _database(*[str(pathlib.Path(p).resolve()) for p in pair.paths], pair.device.type))
    @hypothesis_seed(seed)
    @given(pair.strategy())
    def prop(example):
        config, data = example
        try:
            passed, max_abs, explanation = pair.check(config, data)
        except _Refused:
            counts["refused"] += 1
            reject()
        except UserCodeError as error:
            counts["shrink_steps" if last else "examples"] += 1
            last[:] = [config, data, None, None]
            if not pair.candidate.alive():
                # Its process died or hung: each shrink step would cost a new process (and a timeout), so
                # the search stops at this example, which the error names with its replay command.
                raise _Stop(error) from None
            raise
        except FpaError as error:  # out of scope (a Model the engine cannot model): not a failing example
            raise _Stop(error) from None
        counts["shrink_steps" if last else "examples"] += 1
        if not passed:
            last[:] = [config, data, max_abs, explanation]
            raise AssertionError(explanation)

    failures = []
    with _hypothesis_files_in_cache():
        try:
            prop()
        except _Stop as stop:
            raise stop.error from None
        except AssertionError:
            failures.append(pair.failure(*last))
        except UserCodeError as error:
            if error.side is not Side.SOLUTION:
                raise
            failures.append(pair.failure(*last[:2], None, None, error))
        except Flaky:
            config, data = last[:2]
            explanation = {
                "verdict": "nondeterministic",
                "evidence": "the candidate failed on this example once and passed on it when it ran again: its "
                "output is not a function of its input (a race, uninitialised memory, an unseeded draw)",
            }
            failures.append(pair.failure(config, data, None, explanation))
        except Unsatisfiable:
            raise FpaError(
                f"the problem's Model refused every one of {counts['refused']} drawn configurations; "
                "there is nothing to fuzz (does its constructor take the conv's parameters?)"
            ) from None
    return {"failures": failures, **counts}


def replay_job(problem, solution, *, replay: str, device: str, timeout: float, folder: str) -> dict:
    """The worker's half of ``replay_kernelbench``: its result without the ``worker`` block."""
    config, data = parse_replay(replay)
    with CandidateProcess(solution, folder, timeout) as candidate:
        pair = _Pair(problem, solution, resolve_device(device), candidate)
        missing = [k for k in ("out_channels",) if k not in config and "multiplier_shape" in pair.params]
        if missing:
            raise ParameterError(f"--replay's config lacks {', '.join(missing)}, which this Model's constructor needs")
        counts = {"examples": 1, "shrink_steps": 0, "refused": 0}
        try:
            passed, max_abs, explanation = pair.check(config, data)
        except _Refused as refusal:
            raise ParameterError(f"the problem's own Model refuses the replayed configuration: {refusal}") from None
        except UserCodeError as error:
            if error.side is not Side.SOLUTION:
                raise
            return {"failures": [pair.failure(config, data, None, None, error)], **counts}
    return {"failures": [] if passed else [pair.failure(config, data, max_abs, explanation)], **counts}


def _op_check(kind, problem, variant, dev: torch.device) -> str | None:
    """Why this example of our own variant is wrong, or None (see ``fuzz_op``)."""
    from fpa_kernels import Op, run_variant, twin
    from fpa_kernels.twin import all_output_indices

    from .bounds import dot_bound, epilogue_bound
    from .ops.conv import conv2d_spec, gather_terms
    from .ops.epilogue import EpilogueSpec, epilogue_torch
    from .reference import fp64_at

    config, x, w, b = problem
    spec = config_spec(config)
    x = x.contiguous()
    m = (
        torch.randn(spec.out_channels, 1, 1, generator=torch.Generator().manual_seed(1))
        if kind is Op.CONV_GELU
        else None
    )
    got = twin(variant, spec, x, w, b, m)
    terms = gather_terms(spec, x, w, b, all_output_indices(got.shape))
    exact = fp64_at(terms)
    bound = dot_bound(terms.w, terms.x, variant.twin_accumulation(), terms.bias).deterministic
    if m is not None:
        per_output = m.reshape(-1).numpy()[terms.index[:, 1]]
        form = "none" if variant.gelu.value == "erf" else "tanh"
        conv = exact
        exact = epilogue_torch(
            torch.from_numpy(conv), torch.from_numpy(per_output.astype(np.float64)), EpilogueSpec(0.01, form)
        ).numpy()
        bound = epilogue_bound(conv, bound, per_output, 0.01, ftz=variant.fast_math)
    err = np.abs(got.reshape(-1).astype(np.float64) - exact)
    finite = np.isfinite(err) & np.isfinite(bound)
    if np.any(err[finite] > bound[finite]):
        return f"error beyond the deterministic bound (max ratio {np.max(err[finite] / bound[finite]):.3g})"
    if kind is Op.CONV3D_KK1:
        padding = tuple(p[0] for p in spec.padding[:2]) if spec.is_symmetric_padding else "same"
        flat_spec = conv2d_spec(
            spec.in_channels,
            spec.out_channels,
            spec.kernel_size[:2],
            spec.stride[:2],
            padding,
            spec.dilation[:2],
            spec.groups,
            spec.bias,
        )
        flat_variant = type(variant)(Op.CONV2D, variant.accumulation, variant.term_order, variant.fast_math)
        for d in range(got.shape[-1]):
            j = d * spec.stride[2] - spec.padding[2][0]  # a (k,k,1) kernel reads exactly one input slice
            if 0 <= j < x.shape[-1]:
                want = twin(flat_variant, flat_spec, x[..., j].contiguous(), w[..., 0].contiguous(), b)
                if not np.array_equal(got[..., d].view(np.uint32), want.view(np.uint32)):
                    return f"depth slice {d} differs from conv2d of input slice {j}"
    if dev.type == "cuda":
        on_gpu = [t.cuda() if t is not None else None for t in (x, w, b, m)]
        kernel = run_variant(variant, spec, *on_gpu).cpu().numpy()
        if not np.array_equal(kernel.view(np.uint32), got.view(np.uint32)):
            return "the CUDA kernel differs from its CPU twin"
    return None


def fuzz_op(op: str, *, max_examples: int | None = None, device: str = "auto", seed: int = 0) -> dict:
    """Fuzz our own variants of ``op`` (twinned ones): each twin's error ≤ its deterministic bound against the
    exact result; for conv3d_kk1, each depth slice equals conv2d of its input slice (same variant) bit for bit;
    on a GPU, the kernel equals its twin bit for bit. Returns {"failures": [...], "examples": n, "shrink_steps": k}
    (counted as for ``fuzz_kernelbench``)."""
    from fpa_kernels import Op, variant_matrix

    from .strategies import conv_inputs

    try:
        kind = Op(op)
    except ValueError:
        allowed = ", ".join(repr(o.value) for o in Op)
        raise ParameterError(f"Got op={op!r}, but the only valid ops are {allowed}.") from None
    max_examples = default_max_examples() if max_examples is None else check_count("max_examples", max_examples)
    dev = resolve_device(device)
    configs = conv3d_kk1_configs(max_outputs=3000) if kind is Op.CONV3D_KK1 else conv2d_configs(max_outputs=3000)
    variants = [v for v in variant_matrix(kind) if v.twinned]
    kinds = ("uniform", "normal", "heavy_tailed", "subnormal_rich", "cancellation")
    counts = {"examples": 0, "shrink_steps": 0}
    last: list = []

    @_settings(max_examples, _database("op", op, dev.type))
    @hypothesis_seed(seed)
    @given(st.tuples(conv_inputs(configs, kinds=kinds), st.sampled_from(variants)))
    def prop(example):
        problem, variant = example
        counts["shrink_steps" if last else "examples"] += 1
        reason = _op_check(kind, problem, variant, dev)
        if reason:
            last[:] = [problem[0], variant.label, reason]
            raise AssertionError(reason)

    failures = []
    try:
        with _hypothesis_files_in_cache():
            prop()
    except AssertionError:
        config, label, reason = last
        failures.append(
            {
                "config": _jsonable(config),
                "variant": label,
                "max_abs": None,
                "command": f"fpa fuzz {op} --device {dev.type} --seed {seed} --max-examples {max_examples}",
                "explanation": {"verdict": "bug", "evidence": reason},
            }
        )
    return {"failures": failures, **counts}
