"""``fpa report``: every kernel variant's error against fp64, beside PyTorch's reference in fp32 and TF32.

On a CPU each twinned variant is emulated exactly on a sample of outputs (each output needs only its own
K terms); PyTorch's fp32 reference is the input-channel-outermost fmaf chain that cuDNN's fp32 conv
equals bit for bit (bias added last: experiments/results/gpu_validation.json), its TF32 mode the
operands rounded to TF32 and summed in fp64. On a GPU the real kernels and cuDNN run on full tensors
and bounds are evaluated on the sample. Both print the same row schema.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import Enum
from typing import TYPE_CHECKING

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import ParameterError
from ..numerics import backends
from ..numerics.arith import add32
from ..numerics.bounds import TermSums, bound_from_sums, epilogue_bound, term_sums
from ..numerics.formats import FORMATS
from ..numerics.gelu32 import GeluForm
from ..numerics.memory import require
from ..numerics.metrics import error_stats
from ..numerics.orders import AccumulationSpec, OperandRounding, accumulate
from ..ops.epilogue import EpilogueSpec, epilogue_torch
from ..ops.modules import torch_padding_arg
from ..ops.presets import PRESETS, Problem, make_problem, resolve_input_shape
from ..ops.reference import fp64_at, fp64_full, mpmath_at
from ..ops.terms import Terms, gather_terms, require_terms_memory, sample_output_indices
from ..options import PRESET_KERNEL_OPS, check_op

if TYPE_CHECKING:
    from fpa_kernels.variants import VariantBound

__all__ = ["ReportRow", "RowKind", "report"]
_U = FORMATS["fp32"].unit_roundoff


class RowKind(str, Enum):
    """What a report row measures."""

    KERNEL = "kernel"
    """One of our kernel variants: its CPU twin on the sampled outputs, or the CUDA kernel on a GPU."""
    KERNEL_GPU_ONLY = "kernel (GPU only)"
    """A variant with no bit-exact twin (tensor cores, CUDA's erff/tanhf), on a CPU: bounds only."""
    PYTORCH = "pytorch"
    """PyTorch's reference conv: cuDNN on a GPU; on a CPU its fp32 twin or the TF32 emulation."""


@dataclass(frozen=True)
class ReportRow:
    """One variant's error statistics against fp64 and its bounds (None where not applicable)."""

    variant: str
    kind: str  # a RowKind's value
    twinned: bool
    max_abs: float | None
    mean_abs: float | None
    max_rel: float | None
    ulp_p50: float | None
    ulp_p99: float | None
    ulp_max: float | None
    bits_min: float | None
    deterministic_bound: float | None
    probabilistic_bound: float | None
    error_over_bound: float | None
    allclose_fail_percent: float | None
    time_ms: float | None
    note: str = ""

    def to_dict(self) -> dict:
        """Return the row as a dict of its fields."""
        return asdict(self)


@dataclass(frozen=True)
class _Output:
    """What one row measured: ``got`` beside the fp64 ``truth`` of the same outputs, the seconds it took, and where
    the sampled outputs are in it (``sample`` indexes them in a full tensor; None when ``got`` holds only them)."""

    got: np.ndarray
    truth: np.ndarray
    seconds: float
    sample: tuple | None = None

    def at_samples(self, a: np.ndarray) -> np.ndarray:
        """Return ``a``'s values at the sampled outputs."""
        return a if self.sample is None else a[self.sample]


def _row(name: str, kind: RowKind, twinned: bool, output: _Output, bound: VariantBound, note: str) -> ReportRow:
    """Return the row of ``output``: its error statistics over all of it, its bounds and error ÷ bound over the
    sampled outputs (``bound``'s arrays are theirs)."""
    stats = error_stats(output.got, output.truth, atol=1e-4, rtol=1e-4, rel_floor=1e-6)
    det, prob = bound.deterministic, bound.probabilistic
    err = np.abs(output.at_samples(output.got).astype(np.float64) - output.at_samples(output.truth))
    ratio = float(np.max(np.divide(err, det, out=np.zeros_like(err), where=err > 0)))
    return ReportRow(
        name,
        RowKind(kind).value,  # rows are data (JSON, CSV, the store): the plain string
        twinned,
        stats.max_abs,
        stats.mean_abs,
        stats.max_rel,
        stats.ulp_p50,
        stats.ulp_p99,
        stats.ulp_max,
        stats.bits_min,
        float(np.max(det)),
        None if prob is None else float(np.max(prob)),
        ratio,
        100 * stats.allclose_fail_fraction,
        1e3 * output.seconds,
        note,
    )


def _gpu_only_row(name: str) -> ReportRow:
    """Return the row of a variant with no bit-exact twin, on a CPU: no statistics, no bounds."""
    note = "tensor cores / CUDA math library: run with --device cuda"
    return ReportRow(name, RowKind.KERNEL_GPU_ONLY.value, False, *([None] * 12), note=note)


def _require_memory(preset: str, batch, input_shape, device: str, samples: int) -> None:
    """Refuse (ParameterError) a size this machine cannot hold, before anything is allocated.

    CPU: the fp32 input and the gathered terms of the sampled outputs (fp32 weights and inputs, their
    rounded copies). GPU: besides, every full output the rows keep: the fp64 truth (twice with a GELU
    epilogue, whose tanh form is measured apart), one fp32 output at a time and its host copy.
    """
    if preset not in PRESETS:
        return  # _problem says what is allowed
    spec = PRESETS[preset].spec
    shape = resolve_input_shape(preset, batch, input_shape)
    n_in, n_out = math.prod(shape), math.prod(spec.output_shape(shape))
    option = f"--input-shape {','.join(map(str, shape))}" if input_shape is not None else f"--batch {batch}"
    if batch is None and input_shape is None:
        option = f"op {preset} at its full size {'x'.join(map(str, shape))}"
    truths = 2 if PRESETS[preset].epilogue is not None else 1
    require_terms_memory(spec, min(samples, n_out))
    host = {"fp32 input": 4 * n_in}
    if device == "cuda":
        host["fp64 truth and outputs copied back"] = (8 * truths + 4) * n_out
        require({"input": 4 * n_in, "fp64 truth": 8 * truths * n_out, "outputs": 2 * 4 * n_out}, option, "cuda")
    require(host, option, "cpu")


def _problem(preset: str, seed: int, batch: int | None, input_shape: tuple[int, ...] | None):
    """Return the preset's ``Problem`` for ``seed`` at the size asked for."""
    return make_problem(check_op(preset), seed=seed, batch=batch, input_shape=input_shape)


def report(
    preset: str,
    *,
    samples: int = 2000,
    seed: int = 0,
    device: str = "auto",
    batch: int | None = None,
    input_shape: tuple[int, ...] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """Return the rows for every kernel variant of ``preset`` and PyTorch's reference in fp32 and TF32 (see the
    module doc), with the run's context: {"op", "device", "input_shape", "samples", "K", "seed",
    "fp64_vs_mpmath_max", "rows"}."""
    from fpa_kernels import Op, variant_matrix

    dev = _report_device(device, samples)
    _require_memory(preset, batch, input_shape, dev, samples)
    problem = _problem(preset, seed, batch, input_shape)
    sampled = _sample(problem, samples, seed)
    full = _GpuRunner(problem, problem.spec, sampled.index, problem.epilogue) if dev == "cuda" else None
    rows = []
    for variant in variant_matrix(Op(PRESET_KERNEL_OPS[preset])):
        if progress:
            progress(variant.label)
        rows.append(_kernel_row(variant, sampled, full))
    rows += _pytorch_rows(sampled, full)
    return {
        "op": preset,
        "device": dev,
        "input_shape": list(problem.x.shape),
        "samples": len(sampled.index),
        "K": problem.spec.K,
        "seed": seed,
        "fp64_vs_mpmath_max": _fp64_vs_mpmath(sampled, 20),
        "rows": [r.to_dict() for r in rows],
    }


def _report_device(device: str, samples: int) -> str:
    """Return the device the report runs on, "cpu" or "cuda" ("auto": the GPU where torch sees one), having checked
    ``device`` and ``samples`` (ParameterError)."""
    if device not in ("auto", "cpu", "cuda"):
        raise ParameterError(f"Got device={device!r}, but the only valid values are 'auto', 'cpu', 'cuda'.")
    if samples < 1:
        raise ParameterError(f"Got samples={samples}, but samples must be >= 1.")
    dev = "cuda" if device == "auto" and torch.cuda.is_available() else ("cpu" if device == "auto" else device)
    if dev == "cuda" and not torch.cuda.is_available():
        raise ParameterError("Got device='cuda', but torch sees no CUDA device.")
    return dev


@dataclass(frozen=True)
class _Sampled:
    """The problem at its sampled outputs: their terms, their fp64 values and what their bounds are computed from."""

    problem: Problem
    index: np.ndarray  # the sampled outputs' indices in the output tensor, one row each
    terms: Terms
    multiplier: np.ndarray | None  # each sampled output's channel multiplier (conv_gelu), else None
    conv64: np.ndarray  # the fp64 convolution
    truth: np.ndarray  # the fp64 output, epilogue included
    truth_tanh: np.ndarray  # the same with the tanh GELU (the truth itself where there is no epilogue)
    sums: TermSums
    probability: float  # of the probabilistic bounds, for each output: all outputs at once hold with 0.99

    @property
    def slope(self) -> float:
        """Return the epilogue's LeakyReLU slope (0.01, unused, without an epilogue)."""
        epilogue = self.problem.epilogue
        return epilogue.negative_slope if epilogue is not None else 0.01


def _sample(problem: Problem, samples: int, seed: int) -> _Sampled:
    """Return ``problem`` at ``samples`` outputs drawn from ``seed`` (all of them where there are fewer)."""
    spec, epilogue = problem.spec, problem.epilogue
    out_shape = spec.output_shape(tuple(problem.x.shape))
    index = sample_output_indices(out_shape, samples, seed)
    terms = gather_terms(spec, problem.x, problem.weight, problem.bias, index)
    m = problem.multiplier.reshape(-1).numpy()[index[:, 1]] if problem.multiplier is not None else None
    conv64 = fp64_at(terms)
    truth = _epilogue64(conv64, m, epilogue)
    # Variants with the tanh GELU are measured against the fp64 tanh formula: the model difference between
    # the two forms is a choice of op, not an error of the variant (fpa explain names it gelu_approximation).
    truth_tanh = _epilogue64(conv64, m, EpilogueSpec(epilogue.negative_slope, "tanh")) if epilogue else truth
    sums = term_sums(terms.w, terms.x, terms.bias)
    probability = 1 - 0.01 / max(int(np.prod(out_shape)), 1)
    return _Sampled(problem, index, terms, m, conv64, truth, truth_tanh, sums, probability)


def _kernel_row(variant, sampled: _Sampled, full: _GpuRunner | None) -> ReportRow:
    """Return ``variant``'s row: the CUDA kernel on the full tensor on a GPU (``full``), else its CPU twin on the
    sampled outputs, or no measurement where it has no twin."""
    from fpa_kernels import run_variant, twin_from_terms, variant_bound

    problem, spec = sampled.problem, sampled.problem.spec
    bound = variant_bound(
        variant,
        sampled.sums,
        sampled.probability,
        conv=sampled.conv64,
        multiplier=sampled.multiplier,
        negative_slope=sampled.slope,
    )
    tanh = problem.epilogue is not None and variant.gelu is GeluForm.TANH
    if full is not None:
        got, seconds = full.kernel(lambda: run_variant(variant, spec, *full.args))
        output = _Output(got, full.truth_tanh if tanh else full.truth, seconds, full.index)
        return _row(
            variant.label, RowKind.KERNEL, variant.twinned, output, bound, "full tensor; bounds on sampled outputs"
        )
    if not variant.twinned:
        return _gpu_only_row(variant.label)
    got, seconds = _timed_on_cpu(
        lambda n: twin_from_terms(variant, spec, _head(sampled.terms, n), problem.multiplier, sampled.slope)
    )
    output = _Output(got, sampled.truth_tanh if tanh else sampled.truth, seconds)
    return _row(variant.label, RowKind.KERNEL, True, output, bound, "CPU twin, bit-exact")


def _timed_on_cpu(compute: Callable[[int | None], np.ndarray]) -> tuple[np.ndarray, float]:
    """Return (``compute(None)``, the seconds it took): a row's fp32 results at every sampled output, where
    ``compute(n)`` gives them at the first ``n``. It is run at one output first, untimed: a first call of an
    arithmetic compiles its numba loops (or loads them from numba's cache), a one-off cost that is not the
    variant's, and that would land on whichever row comes first. The GPU rows likewise time a second call."""
    compute(1)
    start = time.perf_counter()
    got = compute(None)
    return got, time.perf_counter() - start


def _fp64_vs_mpmath(sampled: _Sampled, n: int) -> float:
    """Return the largest difference between the fp64 truth and mpmath at 50 digits over the first ``n`` samples."""
    exact = mpmath_at(_head(sampled.terms, n), 50, sampled.problem.epilogue, sampled.problem.multiplier)
    return float(np.max(np.abs(np.array([float(v) for v in exact]) - sampled.truth[:n])))


def _head(terms: Terms, n: int | None) -> Terms:
    """Return the terms of the first ``n`` sampled outputs (all of them where ``n`` is None)."""
    return Terms(terms.w[:n], terms.x[:n], None if terms.bias is None else terms.bias[:n], terms.index[:n])


def _epilogue64(conv: np.ndarray, m: np.ndarray | None, epilogue) -> np.ndarray:
    """Return the fp64 ``conv`` values through ``epilogue`` in fp64 (multiplier ``m``), or as they are without one."""
    if epilogue is None:
        return conv
    return epilogue_torch(torch.from_numpy(conv), torch.from_numpy(m.astype(np.float64)), epilogue).numpy()


def _epilogue32(conv: np.ndarray, m: np.ndarray | None, epilogue) -> np.ndarray:
    """Return the fp32 ``conv`` values through ``epilogue`` in fp32 (multiplier ``m``), or as they are without one."""
    if epilogue is None:
        return conv
    return epilogue_torch(torch.from_numpy(conv), torch.from_numpy(m), epilogue).numpy()


def _pytorch_rows(sampled: _Sampled, full: _GpuRunner | None) -> list[ReportRow]:
    """Return PyTorch's reference rows, fp32 then TF32: cuDNN on the full tensor on a GPU (``full``), else on the
    sampled outputs its fp32 twin and the TF32 emulation."""
    rows = []
    for mode, rounding in (("fp32", OperandRounding.NONE), ("tf32", OperandRounding.TF32)):
        bound = _pytorch_bound(sampled, rounding)
        name = f"pytorch_{mode}"
        if full is not None:
            got, seconds = full.kernel(lambda mode=mode: full.torch_reference(mode == "tf32"))
            output = _Output(got, full.truth, seconds, full.index)
            rows.append(_row(name, RowKind.PYTORCH, False, output, bound, "cuDNN, full tensor"))
            continue
        got, seconds = _timed_on_cpu(lambda n, rounding=rounding: _pytorch_on_cpu(sampled, rounding, n))
        output = _Output(got, sampled.truth, seconds)
        rows.append(_row(name, RowKind.PYTORCH, False, output, bound, _PYTORCH_ON_CPU[rounding]))
    return rows


def _pytorch_bound(sampled: _Sampled, rounding: OperandRounding) -> VariantBound:
    """Return the bounds of PyTorch's reference with operands rounded by ``rounding``, epilogue included."""
    from fpa_kernels.variants import VariantBound

    bounds = bound_from_sums(sampled.sums, AccumulationSpec(operand_rounding=rounding), sampled.probability)
    det, prob = bounds.deterministic, bounds.probabilistic
    epilogue = sampled.problem.epilogue
    if epilogue is not None:
        det = epilogue_bound(sampled.conv64, det, sampled.multiplier, epilogue.negative_slope)
        prob = epilogue_bound(sampled.conv64, prob, sampled.multiplier, epilogue.negative_slope)
    return VariantBound(det, prob)


# How PyTorch's reference is computed on a CPU, by its operand rounding: each row's note.
_PYTORCH_ON_CPU = {
    OperandRounding.NONE: "CPU twin of cuDNN fp32 (input channel outermost fmaf, bias last)",
    OperandRounding.TF32: "emulated: operands rounded to TF32 (nearest even), summed in fp64",
}


def _pytorch_on_cpu(sampled: _Sampled, rounding: OperandRounding, n: int | None) -> np.ndarray:
    """Return PyTorch's reference at the first ``n`` sampled outputs (all: None) on a CPU: cuDNN fp32's twin
    (``OperandRounding.NONE``), else the operands rounded to TF32 and summed in fp64 (``_PYTORCH_ON_CPU``)."""
    terms = _head(sampled.terms, n)
    multiplier = None if sampled.multiplier is None else sampled.multiplier[:n]
    if rounding is OperandRounding.NONE:  # cuDNN fp32's order: channel-outermost fmaf chain, bias added after
        conv = accumulate(terms.w, terms.x, AccumulationSpec())
        if terms.bias is not None:
            conv = add32(conv, terms.bias)
    else:
        emulation = AccumulationSpec.reduced_precision_reference(OperandRounding.TF32)
        conv = accumulate(terms.w, terms.x, emulation, terms.bias)
    return _epilogue32(conv, multiplier, sampled.problem.epilogue)


class _GpuRunner:
    """Full-tensor runs on the GPU: inputs on the device, fp64 truth, timing with CUDA events."""

    def __init__(self, problem, spec, index, epilogue):
        self.spec, self.problem = spec, problem
        dev = torch.device("cuda")
        self.args = [
            problem.x.to(dev),
            problem.weight.to(dev),
            None if problem.bias is None else problem.bias.to(dev),
            None if problem.multiplier is None else problem.multiplier.to(dev),
        ]
        self.index = tuple(index.T)
        truth = fp64_full(spec, *self.args[:3], epilogue=epilogue, multiplier=self.args[3])
        self.truth = self.truth_tanh = truth.cpu().numpy()
        if epilogue is not None:
            tanh = EpilogueSpec(epilogue.negative_slope, "tanh")
            self.truth_tanh = fp64_full(spec, *self.args[:3], epilogue=tanh, multiplier=self.args[3]).cpu().numpy()

    def kernel(self, fn):
        """Return (``fn()``'s output on the host, the seconds its second call took by CUDA events)."""
        fn()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = fn()
        stop.record()
        torch.cuda.synchronize()
        return out.cpu().numpy(), start.elapsed_time(stop) / 1e3

    def torch_reference(self, tf32: bool) -> torch.Tensor:
        """Return PyTorch's output on the full input (cuDNN, TF32 on or off), epilogue included."""
        with backends.tf32(conv=tf32):
            x, w, b, m = self.args
            conv = F.conv3d if self.spec.spatial_dims == 3 else F.conv2d
            y = conv(x, w, b, self.spec.stride, torch_padding_arg(self.spec), self.spec.dilation, self.spec.groups)
            if self.problem.epilogue is not None:
                y = epilogue_torch(y, m, self.problem.epilogue)
            return y
