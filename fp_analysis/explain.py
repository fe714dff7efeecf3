"""Explain a mismatch between a candidate kernel and its reference: which arithmetic, or a bug, and where.

Each hypothesis re-creates one side's arithmetic on sampled outputs, from the reference model's own
parameters and the trial's input: ``reference_tf32`` rounds the reference's operands to TF32 (nearest
even) and sums in fp64; ``candidate_bf16`` does the same to bf16 for the candidate; ``gelu_approximation``
evaluates the other GELU form; and so on. A side is explained by a hypothesis when its output stays
within the fp32 floor of the re-creation. The floor is a same-precision baseline (STYLE: error relative
to a baseline, as flash-attention's tests judge kernels): the largest error of a plain fp32 fmaf chain
against fp64 on the same outputs, in units of u·scale (scale = Σ|w·x| + |b|, through the epilogue
when there is one), times 8 — different fp32 orders differ by a few times (1.4× between the orders
of the seed-000 table; cuDNN's TF32 result vs its fp64 emulation, 6.3e-6, is 2.1× cuDNN fp32's own
3.0e-6 error: shared/facts), and 8 leaves a margin of about 4 over that. The verdict is the smallest
set of causes, one per side at most, that explains both sides; ``accumulation_order`` when both are
plain fp32 yet differ. If none does, the candidate's departure from its closest re-creation is located
(border outputs, channels, batch items, a region) and the verdict is ``bug``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .arith import add32
from .bounds import term_sums
from .candidate import CandidateProcess
from .errors import ParameterError
from .formats import FORMATS
from .kernelbench import (
    ConvOp,
    KernelBenchError,
    extract_op,
    load_problem,
    mismatch_summary,
    numpy32,
    parameter_mismatch,
    run_check,
)
from .metrics import error_stats
from .ops.conv import gather_terms
from .ops.epilogue import EpilogueSpec, epilogue_torch, gelu_derivative_max
from .options import resolve_device
from .orders import AccumulationSpec, accumulate
from .reference import abs_dot_at, fp64_at
from .rounding import round_to
from .tolerance import FAST_MATH_UNITS, side_bound, tolerance_from_bounds
from .usercode import UserFile
from .verdict import Cause, Explanation

__all__ = ["analyse", "explain_job"]

_U = FORMATS["fp32"].unit_roundoff
_FLOOR_MULTIPLIER = 8.0  # see the module docstring


def _sample(diff: np.ndarray, count: int, seed: int) -> np.ndarray:
    """Flat indices: the worst quarter by |candidate − reference|, the rest uniformly at random."""
    n = diff.size
    if n <= count:
        return np.arange(n)
    worst = np.argsort(-np.nan_to_num(diff, nan=np.inf), kind="stable")[: count // 4]
    rng = np.random.default_rng(seed)
    rest = rng.choice(n, size=count, replace=False)
    return np.unique(np.concatenate([worst, rest]))


@dataclass
class _Samples:
    index: np.ndarray  # (M, ndim) output coordinates
    reference: np.ndarray  # (M,) float64
    candidate: np.ndarray
    truth: np.ndarray  # fp64 of the reference op
    scale: np.ndarray  # u·scale is the unit of the floor
    recreations: dict  # name → (side, values)
    baseline_units: float
    sums: object
    multiplier: np.ndarray | None
    twins: dict  # name → fp32 values of a bit-exact CPU twin of cuDNN's fp32 conv (no epilogue ops only)


def _pipeline(op: ConvOp, conv: np.ndarray, m: np.ndarray | None, form: str | None = None) -> np.ndarray:
    if op.epilogue is None:
        return conv
    spec = EpilogueSpec(op.epilogue.negative_slope, form or op.epilogue.approximate)
    return epilogue_torch(torch.from_numpy(conv), torch.from_numpy(m.astype(np.float64)), spec).numpy()


def _sums64(terms, w, x) -> np.ndarray:
    total = (w.astype(np.float64) * x.astype(np.float64)).sum(axis=1)
    return total if terms.bias is None else total + terms.bias.astype(np.float64)


def _collect(op: ConvOp, x: torch.Tensor, ref: np.ndarray, cand: np.ndarray, samples: int, seed: int) -> _Samples:
    flat = _sample(np.abs(cand.astype(np.float64) - ref).reshape(-1), samples, seed)
    index = np.stack(np.unravel_index(flat, ref.shape), axis=1).astype(np.int64)
    terms = gather_terms(op.spec, numpy32(x), numpy32(op.weight), None if op.bias is None else numpy32(op.bias), index)
    m = numpy32(op.multiplier).reshape(-1)[index[:, 1]] if op.multiplier is not None else None
    truth = _pipeline(op, fp64_at(terms), m)
    scale = abs_dot_at(terms)
    if op.epilogue is not None:
        scale = np.abs(m) * scale * gelu_derivative_max() + np.abs(truth)
    scale = np.maximum(scale, FORMATS["fp32"].smallest_normal)
    recreations = {"": ("both", truth)}
    for fmt in ("tf32", "bf16", "fp16"):
        values = _pipeline(op, _sums64(terms, round_to(terms.w, fmt), round_to(terms.x, fmt)), m)
        recreations[f"reference_{fmt}"] = ("reference", values)
        recreations[f"candidate_{fmt}"] = ("candidate", values)
    if op.epilogue is not None:
        other = "tanh" if op.epilogue.approximate.value == "none" else "none"
        recreations["gelu_approximation"] = ("candidate", _pipeline(op, fp64_at(terms), m, other))
        recreations["fast_math"] = ("candidate", truth)
    base = accumulate(terms.w, terms.x, AccumulationSpec(), terms.bias)
    if op.epilogue is not None:
        base = epilogue_torch(torch.from_numpy(base), torch.from_numpy(m), op.epilogue).numpy()
    baseline = float(np.max(np.abs(base.astype(np.float64) - truth) / (_U * scale)))
    flat_ref = ref.reshape(-1)[flat].astype(np.float64)
    flat_cand = cand.reshape(-1)[flat].astype(np.float64)
    twins = {}
    if op.epilogue is None:  # cuDNN's fp32 conv is this fmaf chain, the bias first or last (gpu_validation.json)
        twins["fp32 fmaf chain, input channel outermost"] = base
        if terms.bias is not None:
            chain = accumulate(terms.w, terms.x, AccumulationSpec())
            twins["same chain with the bias added last"] = add32(chain, terms.bias)
    sums = term_sums(terms.w, terms.x, terms.bias)
    return _Samples(index, flat_ref, flat_cand, truth, scale, recreations, baseline, sums, m, twins)


def _units(values: np.ndarray, recreation: np.ndarray, scale: np.ndarray) -> float:
    """The largest |values − recreation| in units of u·scale; equal values (the same ±inf, NaN on both
    sides) count as 0, a NaN or ±inf on one side only as infinitely far."""
    with np.errstate(invalid="ignore"):
        same = (values == recreation) | (np.isnan(values) & np.isnan(recreation))
        diff = np.where(same, 0.0, np.abs(values - recreation))
    if not np.all(np.isfinite(diff)):
        return math.inf
    return float(np.max(diff / (_U * scale))) if diff.size else 0.0


_AXES = {2: ("rows", "columns"), 3: ("rows", "columns", "depth slices")}


def _locate(op: ConvOp, s: _Samples, bad: np.ndarray, shape: tuple[int, ...]) -> str:
    """Where the failing sampled outputs lie, in words, with counts that add up: the channels and batch items
    that hold all of them (each with how many of its sampled outputs fail), edges, a region."""
    idx, total = s.index[bad], len(s.index)
    nonfinite = int(np.sum(bad & ~np.isfinite(s.candidate)))
    parts = [
        f"{int(bad.sum())} of {total} sampled outputs beyond the floor"
        + (f" ({nonfinite} of them NaN or ±inf)" if nonfinite else "")
    ]
    if not idx.size:
        return parts[0]
    for axis, name in ((1, "channel"), (0, "batch item")):
        values, counts = np.unique(idx[:, axis], return_counts=True)
        present, sampled = np.unique(s.index[:, axis], return_counts=True)
        if len(present) > 1 and len(values) <= max(1, len(present) // 4):
            of = dict(zip(present.tolist(), sampled.tolist(), strict=True))
            each = [
                f"{name} {v}: {c} of its {of[v]} sampled" for v, c in zip(values.tolist(), counts.tolist(), strict=True)
            ]
            shown = ", ".join(each[:8]) + (f", and {len(each) - 8} more" if len(each) > 8 else "")
            plural = "s" if len(values) > 1 else ""
            parts.append(f"all in {len(values)} {name}{plural} of 0…{shape[axis] - 1} ({shown})")
    for d, axis in enumerate(_AXES[op.spec.spatial_dims]):
        extent = shape[2 + d]
        lo, hi = int(idx[:, 2 + d].min()), int(idx[:, 2 + d].max())
        if extent > 2 and hi == extent - 1 and lo > 0 and lo >= extent // 2:
            parts.append(f"all in the last {extent - lo} {axis} (index ≥ {lo} of 0…{extent - 1})")
        elif extent > 2 and lo == 0 and hi < extent - 1 and hi < extent // 2:
            parts.append(f"all in the first {hi + 1} {axis} (index ≤ {hi} of 0…{extent - 1})")
        elif extent > 2 and hi < extent - 1 and lo > 0:
            parts.append(f"{axis} {lo}…{hi} only, of 0…{extent - 1}")
    return "; ".join(parts)


def _tolerance(op: ConvOp, s: _Samples, ref_cause: str, cand_cause: str, numel: int, measured: float) -> dict:
    """Recommended atol for this pair: both sides' bounds under the causes found (``tolerance``)."""
    bounds, labels = [], []
    for cause in (ref_cause, cand_cause):
        fmt = cause.split("_")[-1] if cause.startswith(("reference_", "candidate_")) else "fp32"
        extra = cause if cause in ("gelu_approximation", "fast_math") else None
        bounds.append(
            side_bound(
                s.sums,
                fmt,
                numel,
                truth=s.truth,
                multiplier=s.multiplier,
                epilogue=op.epilogue,
                extra=extra,
                scale=s.scale,
            )
        )
        labels.append(cause or "fp32")
    return tolerance_from_bounds(bounds[0], bounds[1], numel, measured, tuple(labels))


def analyse(
    op: ConvOp, x: torch.Tensor, reference: torch.Tensor, candidate: torch.Tensor, *, samples: int = 4000, seed: int = 0
) -> tuple[list[Cause], bool, str, dict, dict, dict, list[dict]]:
    """The causes of ``candidate`` ≠ ``reference`` on one trial; see the module docstring."""
    ref, cand = numpy32(reference), numpy32(candidate)
    expected = op.spec.output_shape(tuple(x.shape))
    if op.epilogue is None and tuple(ref.shape) != expected:
        raise KernelBenchError(f"the Model's output {ref.shape} is not its convolution's {expected}: unsupported op")
    s = _collect(op, x, ref, cand, samples, seed)
    floor = _FLOOR_MULTIPLIER * max(1.0, s.baseline_units)
    # Operand-rounding hypotheses describe tensor-core arithmetic, whose fp32 accumulation truncates (Fasi,
    # Higham, Mikaitis & Pranesh 2021, PeerJ Comput. Sci. 7:e330): about half an ulp of bias per mma k-step
    # of 8 products, so up to K/8 units of u·Σ|w·x| beyond what an IEEE fp32 chain leaves.
    tensor_core = op.spec.K / 8
    res = {}
    for name, (side, values) in s.recreations.items():
        limit = floor + (FAST_MATH_UNITS if name == "fast_math" else 0.0)
        limit += tensor_core if name.endswith(("_tf32", "_bf16", "_fp16")) else 0.0
        if side in ("both", "reference"):
            res[("reference", name)] = (_units(s.reference, values, s.scale), limit)
        if side in ("both", "candidate"):
            res[("candidate", name)] = (_units(s.candidate, values, s.scale), limit)
    hypotheses = [
        {"side": side, "cause": name or "none", "residual_units": r, "floor_units": limit, "fits": r <= limit}
        for (side, name), (r, limit) in res.items()
    ]
    for side, values in (("reference", s.reference), ("candidate", s.candidate)):
        for name, twin in s.twins.items():
            if np.array_equal(values.astype(np.float32).view(np.uint32), twin.view(np.uint32)):
                # A residual of exactly zero: the strongest evidence of what this side computed.
                hypotheses.append(
                    {
                        "side": side,
                        "cause": "none",
                        "twin": name,
                        "residual_units": 0.0,
                        "floor_units": floor,
                        "fits": True,
                        "bitwise_equal": True,
                    }
                )
    exact = {h["side"]: h["twin"] for h in hypotheses if h.get("bitwise_equal")}
    ref_fits = [n for (side, n), (r, lim) in res.items() if side == "reference" and r <= lim]
    cand_fits = [n for (side, n), (r, lim) in res.items() if side == "candidate" and r <= lim]
    cand_vs = error_stats(s.candidate, s.truth).to_dict()
    ref_vs = error_stats(s.reference, s.truth).to_dict()
    measured = float(np.max(np.abs(cand.astype(np.float64) - ref)))

    def absolute(side_values, name):
        return float(np.max(np.abs(side_values - s.recreations[name][1])))

    causes: list[Cause] = []
    if ref_fits and cand_fits:
        pick = lambda fits, side: min(fits, key=lambda n: (n != "", res[(side, n)][0]))  # noqa: E731
        r, c = pick(ref_fits, "reference"), pick(cand_fits, "candidate")
        for side, name, values in (("reference", r, s.reference), ("candidate", c, s.candidate)):
            if name:
                causes.append(
                    Cause(
                        name,
                        _evidence(name, side, res[(side, name)][0], res[(side, "")][0], floor),
                        absolute(values, name),
                        side,
                        res[(side, name)][0],
                    )
                )
        if not causes and not np.array_equal(ref.view(np.uint32), cand.view(np.uint32)):
            causes.append(
                Cause(
                    "accumulation_order",
                    f"both sides stay within the fp32 floor of fp64 (reference {res[('reference', '')][0]:.1f}, "
                    f"candidate {res[('candidate', '')][0]:.1f} ≤ {floor:.1f} units of u·Σ|w·x|) but differ "
                    f"bitwise: the same fp32 arithmetic summed in another order"
                    + "".join(f"; the {side} equals the {twin} bit for bit" for side, twin in exact.items()),
                    measured,
                    "pair",
                    max(res[("reference", "")][0], res[("candidate", "")][0]),
                )
            )
        explained = True
        verdict = "identical" if not causes else " + ".join(c.name for c in causes)
        tolerance = _tolerance(op, s, r, c, ref.size, measured)
    else:
        explained = False
        tolerance = _tolerance(op, s, "", "", ref.size, measured)
        if not ref_fits:
            # Nothing we model re-creates the reference: any verdict about the candidate would be about an
            # op the Model does not compute. Out of scope, said as such.
            found = "conv" + (" → ×multiplier → LeakyReLU → GELU" if op.epilogue else "")
            raise KernelBenchError(
                f"fp_analysis cannot model this reference: no precision of the {found} it found in the Model "
                f"(fp32, TF32, bf16, fp16 operands) re-creates the Model's output (closest: "
                f"{_closest(res, 'reference')}; floor {floor:.1f} units of u·Σ|w·x|). The Model computes more "
                "than that op (an activation, scaling, pooling or reduction after it), or its conv runs an "
                "arithmetic fp_analysis does not model; today it models one Conv2d/Conv3d((k,k,1)), alone or "
                "followed by × a (C,1,1) parameter → LeakyReLU → GELU"
            )
        else:
            # The closest re-creation is the one that accounts for the most sampled outputs (a bug in one
            # channel leaves every other output on plain fp32), not the one with the smallest largest
            # residual, which a coarse format wins by blurring every output alike.
            def outside(name):
                units = np.abs(s.candidate - s.recreations[name][1]) / (_U * s.scale)
                return ~(units <= res[("candidate", name)][1])

            names = [n for (side, n) in res if side == "candidate"]
            best = min(names, key=lambda n: (int(np.sum(outside(n))), res[("candidate", n)][0]))
            bad = outside(best)
            where = _locate(op, s, bad, tuple(ref.shape))
            causes.append(
                Cause(
                    "bug",
                    f"the candidate departs from every re-creation of its arithmetic (closest: "
                    f"{best or 'plain fp32'}, {res[('candidate', best)][0]:.3g} units > floor {floor:.1f}); "
                    f"{where}",
                    absolute(s.candidate, best),
                    "candidate",
                    res[("candidate", best)][0],
                )
            )
        verdict = causes[0].name
    return causes, explained, verdict, cand_vs, ref_vs, tolerance, hypotheses


def _closest(res: dict, side: str) -> str:
    name, (r, _) = min(((n, v) for (sd, n), v in res.items() if sd == side), key=lambda kv: kv[1][0])
    return f"{name or 'plain fp32'} at {r:.3g} units"


_DESCRIPTIONS = {
    "reference_tf32": "the reference's operands rounded to TF32 (nearest even), as cuDNN does by default in fp32",
    "reference_bf16": "the reference's operands rounded to bf16",
    "reference_fp16": "the reference's operands rounded to fp16",
    "candidate_tf32": "the candidate's operands rounded to TF32 (nearest even)",
    "candidate_bf16": "the candidate's operands rounded to bf16",
    "candidate_fp16": "the candidate's operands rounded to fp16",
    "gelu_approximation": "the other GELU form (tanh approximation instead of erf, or the reverse)",
    "fast_math": "fast-math transcendentals (tanhf up to 133 ulp; shared/facts, gpu_validation.json)",
}


def _evidence(name: str, side: str, residual: float, plain: float, floor: float) -> str:
    return (
        f"re-creating {_DESCRIPTIONS[name]} leaves a residual of {residual:.3g} units of u·Σ|w·x| on the {side} "
        f"(floor {floor:.1f}); plain fp32 arithmetic would leave {plain:.3g}"
    )


def explain_job(
    problem, solution, *, device, reference_mode, trials, seed, atol, rtol, samples, timeout, folder
) -> dict:
    """The worker's half of ``explain_files``: the ``Explanation`` as a dict (its ``--json`` form)."""
    dev = resolve_device(device)
    mode = reference_mode or "fp32"
    if dev.type == "cuda" and reference_mode not in (None, "fp32"):
        raise ParameterError(
            "--reference-mode emulates a precision on the CPU; on a GPU the reference runs as "
            "your TF32 settings say (and is also run with TF32 forced on and off)"
        )
    with CandidateProcess(solution, folder, timeout) as candidate:  # its import overlaps the problem's
        reference_file = load_problem(problem)
        reference, parameters, results, worst = run_check(
            reference_file,
            candidate,
            dev,
            trials=trials,
            seed=seed,
            atol=atol,
            rtol=rtol,
            reference_mode=mode if dev.type == "cpu" else "fp32",
        )
        notes = candidate.loaded()
    context = {
        "device": str(dev),
        "reference_mode": mode if dev.type == "cpu" else _tf32_setting(),
        "trials": trials,
        "seed": seed,
        "atol": atol,
        "rtol": rtol,
    }
    mismatch = mismatch_summary(results, atol, rtol)
    trial_dicts = [r.to_dict() for r in results]
    problems = parameter_mismatch(reference, parameters)
    if problems:
        cause = Cause("parameter_mismatch", "; ".join(problems), mismatch["max_abs"], "pair")
        tolerance = {"atol": None, "rtol": None, "basis": "parameters differ: no tolerance makes this right"}
        return Explanation(
            False, "parameter_mismatch", [cause], mismatch, {}, {}, tolerance, trial_dicts, [], context, notes
        ).to_dict()
    op = extract_op(reference)
    x = next((t for t in worst.inputs if isinstance(t, torch.Tensor)), None)
    if x is None:
        raise KernelBenchError("get_inputs() gives no tensor: there is no input to analyse")
    if worst.reference.numel() == 0:
        raise KernelBenchError(
            f"the Model's output {tuple(worst.reference.shape)} is empty: there is nothing to compare"
        )
    context["analysed_trial"] = worst.trial
    if dev.type == "cuda":
        context["reference_tf32_forced"] = _forced_tf32(reference_file, reference, worst.inputs, worst.candidate)
    analysis = analyse(op, x.cpu(), worst.reference.cpu(), worst.candidate.cpu(), samples=samples, seed=seed)
    causes, explained, verdict, cand_vs, ref_vs, tolerance, hyps = analysis
    return Explanation(
        explained, verdict, causes, mismatch, cand_vs, ref_vs, tolerance, trial_dicts, hyps, context, notes
    ).to_dict()


def _tf32_setting() -> str:
    return "tf32" if torch.backends.cudnn.allow_tf32 else "fp32"


def _forced_tf32(problem: UserFile, reference, inputs, candidate_out) -> dict:
    """The reference rerun with cuDNN's TF32 forced on and off, and how far the candidate is from each."""
    saved = torch.backends.cudnn.allow_tf32
    out = {}
    try:
        with torch.no_grad():
            for flag in (True, False):
                torch.backends.cudnn.allow_tf32 = flag
                where = f"Model.forward (cuDNN TF32 {'on' if flag else 'off'})"
                ref = problem.call(where, reference, *inputs)
                out["tf32_on" if flag else "tf32_off"] = {
                    "max_abs_vs_candidate": float((ref - candidate_out).abs().max()),
                    "bitwise_equal_candidate": bool(torch.equal(ref, candidate_out)),
                }
    finally:
        torch.backends.cudnn.allow_tf32 = saved
    return out
