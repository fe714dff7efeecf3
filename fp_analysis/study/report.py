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

import numpy as np
import torch
import torch.nn.functional as F

from ..errors import ParameterError
from ..numerics import backends
from ..numerics.arith import add32
from ..numerics.bounds import bound_from_sums, epilogue_bound, term_sums
from ..numerics.formats import FORMATS
from ..numerics.gelu32 import GeluForm
from ..numerics.memory import require
from ..numerics.metrics import error_stats
from ..numerics.orders import AccumulationSpec, OperandRounding, accumulate
from ..ops.conv import ConvSpec, Terms, gather_terms, require_terms_memory, sample_output_indices
from ..ops.epilogue import EpilogueSpec, epilogue_torch
from ..ops.modules import torch_padding_arg
from ..ops.presets import PRESETS, make_problem, resolve_input_shape
from ..ops.reference import fp64_at, fp64_full, mpmath_at
from ..options import PRESET_KERNEL_OPS, check_op

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
        return asdict(self)


def _row(
    name: str,
    kind: RowKind,
    twinned: bool,
    got: np.ndarray | None,
    truth: np.ndarray,
    det,
    prob,
    seconds,
    note: str = "",
    sample: tuple | None = None,
) -> ReportRow:
    """Statistics over ``got`` (all of it); error ÷ bound where bounds exist: over the sampled outputs
    (``sample`` indexes them in a full tensor; None when ``got`` holds only the samples)."""
    kind = RowKind(kind).value  # rows are data (JSON, CSV, the store): the plain string
    if got is None:
        return ReportRow(name, kind, twinned, *([None] * 12), note=note)
    stats = error_stats(got, truth, atol=1e-4, rtol=1e-4, rel_floor=1e-6)
    ratio = None
    if det is not None:
        at = (lambda a: a[sample]) if sample is not None else (lambda a: a)
        err = np.abs(at(got).astype(np.float64) - at(truth))
        ratio = float(np.max(np.divide(err, det, out=np.zeros_like(err), where=err > 0)))
    return ReportRow(
        name,
        kind,
        twinned,
        stats.max_abs,
        stats.mean_abs,
        stats.max_rel,
        stats.ulp_p50,
        stats.ulp_p99,
        stats.ulp_max,
        stats.bits_min,
        None if det is None else float(np.max(det)),
        None if prob is None else float(np.max(prob)),
        ratio,
        100 * stats.allclose_fail_fraction,
        None if seconds is None else 1e3 * seconds,
        note,
    )


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
    """Rows for every kernel variant of ``preset`` and PyTorch's reference in fp32 and TF32 (see the module doc)."""
    from fpa_kernels import Op, run_variant, twin_from_terms, variant_bound, variant_matrix

    if device not in ("auto", "cpu", "cuda"):
        raise ParameterError(f"Got device={device!r}, but the only valid values are 'auto', 'cpu', 'cuda'.")
    if samples < 1:
        raise ParameterError(f"Got samples={samples}, but samples must be >= 1.")
    dev = "cuda" if device == "auto" and torch.cuda.is_available() else ("cpu" if device == "auto" else device)
    if dev == "cuda" and not torch.cuda.is_available():
        raise ParameterError("Got device='cuda', but torch sees no CUDA device.")
    _require_memory(preset, batch, input_shape, dev, samples)
    problem = _problem(preset, seed, batch, input_shape)
    spec: ConvSpec = problem.spec
    op = Op(PRESET_KERNEL_OPS[preset])
    out_shape = spec.output_shape(tuple(problem.x.shape))
    index = sample_output_indices(out_shape, samples, seed)
    terms = gather_terms(spec, problem.x, problem.weight, problem.bias, index)
    m = problem.multiplier.reshape(-1).numpy()[index[:, 1]] if problem.multiplier is not None else None
    epilogue = problem.epilogue
    conv64 = fp64_at(terms)
    truth = _epilogue64(conv64, m, epilogue)
    # Variants with the tanh GELU are measured against the fp64 tanh formula: the model difference between
    # the two forms is a choice of op, not an error of the variant (fpa explain names it gelu_approximation).
    truth_tanh = _epilogue64(conv64, m, EpilogueSpec(epilogue.negative_slope, "tanh")) if epilogue else truth
    sums = term_sums(terms.w, terms.x, terms.bias)
    probability = 1 - 0.01 / max(int(np.prod(out_shape)), 1)
    rows = []
    full = _GpuRunner(problem, spec, index, epilogue) if dev == "cuda" else None
    slope = epilogue.negative_slope if epilogue is not None else 0.01
    for variant in variant_matrix(op):
        if progress:
            progress(variant.label)
        bound = variant_bound(variant, sums, probability, conv=conv64, multiplier=m, negative_slope=slope)
        det, prob = bound.deterministic, bound.probabilistic
        tanh = epilogue is not None and variant.gelu is GeluForm.TANH
        if full is not None:
            got, seconds = full.kernel(lambda v=variant: run_variant(v, spec, *full.args))
            truth_full = full.truth_tanh if tanh else full.truth
            rows.append(
                _row(
                    variant.label,
                    RowKind.KERNEL,
                    variant.twinned,
                    got,
                    truth_full,
                    det,
                    prob,
                    seconds,
                    "full tensor; bounds on sampled outputs",
                    full.index,
                )
            )
        elif variant.twinned:
            start = time.perf_counter()
            got = twin_from_terms(variant, spec, terms, problem.multiplier, slope)
            rows.append(
                _row(
                    variant.label,
                    RowKind.KERNEL,
                    True,
                    got,
                    truth_tanh if tanh else truth,
                    det,
                    prob,
                    time.perf_counter() - start,
                    "CPU twin, bit-exact",
                )
            )
        else:
            rows.append(
                _row(
                    variant.label,
                    RowKind.KERNEL_GPU_ONLY,
                    False,
                    None,
                    truth,
                    None,
                    None,
                    None,
                    "tensor cores / CUDA math library: run with --device cuda",
                )
            )
    rows += _pytorch_rows(spec, problem, terms, m, epilogue, truth, sums, probability, conv64, full)
    spot = float(
        np.max(
            np.abs(
                np.array([float(v) for v in mpmath_at(_head(terms, 20), 50, epilogue, problem.multiplier)]) - truth[:20]
            )
        )
    )
    return {
        "op": preset,
        "device": dev,
        "input_shape": list(problem.x.shape),
        "samples": len(index),
        "K": spec.K,
        "seed": seed,
        "fp64_vs_mpmath_max": spot,
        "rows": [r.to_dict() for r in rows],
    }


def _head(terms: Terms, n: int) -> Terms:
    return Terms(terms.w[:n], terms.x[:n], None if terms.bias is None else terms.bias[:n], terms.index[:n])


def _epilogue64(conv: np.ndarray, m: np.ndarray | None, epilogue) -> np.ndarray:
    if epilogue is None:
        return conv
    return epilogue_torch(torch.from_numpy(conv), torch.from_numpy(m.astype(np.float64)), epilogue).numpy()


def _epilogue32(conv: np.ndarray, m: np.ndarray | None, epilogue) -> np.ndarray:
    if epilogue is None:
        return conv
    return epilogue_torch(torch.from_numpy(conv), torch.from_numpy(m), epilogue).numpy()


def _pytorch_rows(spec, problem, terms, m, epilogue, truth, sums, probability, conv64, full) -> list[ReportRow]:
    rows = []
    for mode, rounding in (("fp32", OperandRounding.NONE), ("tf32", OperandRounding.TF32)):
        bounds = bound_from_sums(sums, AccumulationSpec(operand_rounding=rounding), probability)
        det, prob = bounds.deterministic, bounds.probabilistic
        if epilogue is not None:
            det = epilogue_bound(conv64, det, m, epilogue.negative_slope)
            prob = epilogue_bound(conv64, prob, m, epilogue.negative_slope)
        name = f"pytorch_{mode}"
        if full is not None:
            got, seconds = full.kernel(lambda mode=mode: full.torch_reference(mode == "tf32"))
            note = "cuDNN, full tensor"
            rows.append(_row(name, RowKind.PYTORCH, False, got, full.truth, det, prob, seconds, note, full.index))
            continue
        start = time.perf_counter()
        if mode == "fp32":  # cuDNN fp32's order: channel-outermost fmaf chain, bias added after
            conv = accumulate(terms.w, terms.x, AccumulationSpec())
            if terms.bias is not None:
                conv = add32(conv, terms.bias)
            note = "CPU twin of cuDNN fp32 (input channel outermost fmaf, bias last)"
        else:
            emulation = AccumulationSpec.reduced_precision_reference(OperandRounding.TF32)
            conv = accumulate(terms.w, terms.x, emulation, terms.bias)
            note = "emulated: operands rounded to TF32 (nearest even), summed in fp64"
        got = _epilogue32(conv, m, epilogue)
        rows.append(_row(name, RowKind.PYTORCH, False, got, truth, det, prob, time.perf_counter() - start, note))
    return rows


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
        fn()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        out = fn()
        stop.record()
        torch.cuda.synchronize()
        return out.cpu().numpy(), start.elapsed_time(stop) / 1e3

    def torch_reference(self, tf32: bool) -> torch.Tensor:
        with backends.tf32(conv=tf32):
            x, w, b, m = self.args
            conv = F.conv3d if self.spec.spatial_dims == 3 else F.conv2d
            y = conv(x, w, b, self.spec.stride, torch_padding_arg(self.spec), self.spec.dilation, self.spec.groups)
            if self.problem.epilogue is not None:
                y = epilogue_torch(y, m, self.problem.epilogue)
            return y
