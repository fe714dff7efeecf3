"""``fpa bench OP``: time the kernel variants beside cuDNN and the fp64 references on one GPU, with each
one's error against fp64, so the accuracy–speed trade-off is measured in one run.

Timing (``time_on_device``): CUDA events around each call, after warm-up calls, over ``rotate`` input sets
used in turn (so repeated calls do not find their input in L2), median of the repetitions. The error
of every row is taken on input set 0 against the fp64 reference of the same inputs (all outputs).

Peak rates: the fp32 peak is SMs × fp32 lanes per SM × 2 × the maximum clock the driver reports (NVIDIA
CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table: 128 fp32 results per clock per
SM for compute capability 8.6–9.0, 64 for 6.0, 7.x and 8.0); ``ceilings`` are measured in the same run
(a device-to-device copy, counting bytes read plus written, and 8192³ matrix products through torch).
"""

from __future__ import annotations

import datetime
import json
import math
import os
import pathlib
import re
import statistics
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from fpa_kernels.launch import variant_runs
from fpa_kernels.registry import general_kernel
from fpa_kernels.variants import Op

from ..errors import ParameterError
from ..numerics import backends
from ..ops.epilogue import EpilogueSpec
from ..ops.modules import torch_padding_arg
from ..ops.presets import make_problem
from ..options import PRESET_KERNEL_OPS, check_op

__all__ = [
    "BenchOptions",
    "BenchResult",
    "bench",
    "default_variants",
    "fp32_peak_tflops",
    "gpu_slug",
    "kernels_tree_of_checkout",
    "load",
    "measure_ceilings",
    "pareto_front",
    "plot_pareto",
    "save",
    "time_on_device",
]

_FP32_LANES = {(6, 0): 64, (7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128, (9, 0): 128}


@dataclass
class BenchResult:
    """One op's rows (``records``) and the run's context (``meta``)."""

    op: str
    meta: dict
    records: list[dict] = field(default_factory=list)


def fp32_peak_tflops(device: int = 0) -> float | None:
    """SMs × fp32 lanes × 2 flops × max clock (see the module docstring); None for an unknown architecture."""
    from fpa_kernels.driver import device_attribute

    props = torch.cuda.get_device_properties(device)
    lanes = _FP32_LANES.get((props.major, props.minor))
    if lanes is None:
        return None
    clock_khz = device_attribute("CLOCK_RATE", device)
    return props.multi_processor_count * lanes * 2 * clock_khz * 1e3 / 1e12


def time_on_device(fn: Callable[[int], object], warmup: int, reps: int, budget_s: float) -> dict:
    """Median (and min, max) milliseconds of ``fn(i)`` by CUDA events; ``i`` counts calls, for rotation.

    Warm-up calls first; then up to ``reps`` timed calls, fewer (at least 3) if they would take more than
    ``budget_s`` at the warm-up's pace.
    """
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    first = None
    for i in range(max(warmup, 1)):
        start.record()
        fn(i)
        end.record()
        end.synchronize()
        first = start.elapsed_time(end) if first is None else min(first, start.elapsed_time(end))
    reps = max(3, min(reps, int(budget_s * 1e3 / max(first, 1e-3))))
    pairs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for i, (a, b) in enumerate(pairs):
        a.record()
        fn(warmup + i)
        b.record()
    torch.cuda.synchronize()
    times = [a.elapsed_time(b) for a, b in pairs]
    return {"time_ms": statistics.median(times), "time_ms_min": min(times), "time_ms_max": max(times), "reps": reps}


def measure_ceilings() -> dict:
    """The device's measured ceilings: copy bandwidth (read + write), fp32 (TF32 off), TF32 and fp64 GEMM."""
    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda").uniform_()  # 1 GiB
    dst = torch.empty_like(src)
    copy = time_on_device(lambda i: dst.copy_(src), 2, 10, 5.0)
    out = {"copy_TBps": 2 * src.numel() * 4 / copy["time_ms"] / 1e9}
    n = 8192
    for name, dtype, tf32 in (
        ("fp32", torch.float32, False),
        ("tf32", torch.float32, True),
        ("fp64", torch.float64, False),
    ):
        a = torch.rand(n, n, dtype=dtype, device="cuda")
        b = torch.rand(n, n, dtype=dtype, device="cuda")
        with backends.tf32(matmul=tf32):
            t = time_on_device(lambda i, a=a, b=b: a @ b, 2, 10, 5.0)
        out[f"gemm_{name}_tflops"] = 2 * n**3 / t["time_ms"] / 1e9
    return out


def _conv_torch(spec, x, w, b, epilogue: EpilogueSpec | None, m):
    """Return PyTorch's conv of ``x`` (weights ``w``, bias ``b``), through the epilogue where there is one."""
    conv = F.conv2d if spec.spatial_dims == 2 else F.conv3d
    y = conv(x, w, b, spec.stride, torch_padding_arg(spec), spec.dilation, spec.groups)
    if epilogue is not None:
        y = F.gelu(F.leaky_relu(y * m, epilogue.negative_slope), approximate=epilogue.approximate.value)
    return y


def _cudnn(spec, epilogue, inputs, dtype: torch.dtype, tf32: bool):
    """A callable for PyTorch's own op (cuDNN) in ``dtype``, TF32 on or off, over the rotating inputs.
    The inputs are cast to ``dtype`` once, here: the fp64 row times the convolution, not the cast."""
    cast = [tuple(t.to(dtype) if t is not None else None for t in s) for s in inputs]

    def run(i):
        with backends.tf32(conv=tf32):
            x, w, b, m = cast[i % len(cast)]
            return _conv_torch(spec, x, w, b, epilogue, m)

    return run


def _reference64(spec, epilogue, inputs):
    """The fast fp64 reference: fpa_kernels.reference.conv_fp64 (fp64 tensor cores), then the epilogue in
    float64 with torch."""
    from fpa_kernels.reference import conv_fp64

    def run(i):
        x, w, b, m = inputs[i % len(inputs)]
        y = conv_fp64(spec, x, w, b)
        if epilogue is not None:
            y = F.gelu(F.leaky_relu(y * m.double(), epilogue.negative_slope), approximate=epilogue.approximate.value)
        return y

    return run


def _variant(variant, spec, inputs, slope, kernel=None):
    """Return a callable for ``variant`` (on ``kernel``, None: its general one) over the rotating inputs."""
    from fpa_kernels import run_variant

    def run(i):
        x, w, b, m = inputs[i % len(inputs)]
        return run_variant(variant, spec, x, w, b, m, slope, kernel=kernel)

    return run


def default_variants(op: str) -> list:
    """The variants ``fpa bench`` times of the kernels' ``op`` (``fpa_kernels.Op``): every tiled variant, the
    direct sequential fmaf baseline, and the tensor-core variants (direct and tiled)."""
    from fpa_kernels.variants import TensorCore, VariantSpec, tiled_variants

    from ..numerics.orders import AccumulationSpec

    variants = [VariantSpec(Op(op), AccumulationSpec())]
    variants += tiled_variants(op)
    if op == "conv2d":
        variants += [VariantSpec(Op(op), tensor_core=tc) for tc in (TensorCore.TF32, TensorCore.TF32X3)]
    return variants


def _error_row(y: torch.Tensor, ref: torch.Tensor) -> dict:
    """Return the error columns of ``y`` against ``ref``: max and mean |error| (inf where ``y`` is not finite) and
    the fraction failing allclose(1e-4, 1e-4)."""
    diff = (y.double() - ref).abs_()
    fail = (diff > 1e-4 + 1e-4 * ref.abs()).double().mean().item()
    finite = bool(torch.isfinite(y).all())
    return {
        "max_abs_err_vs_fp64": diff.max().item() if finite else math.inf,
        "mean_abs_err_vs_fp64": diff.mean().item() if finite else math.inf,
        "allclose_1e-4_fail_frac": fail,
    }


@dataclass(frozen=True)
class BenchOptions:
    """What ``bench`` times and how, checked when made (a bad value is a ``ParameterError`` naming it).

    The problem: the preset at ``batch`` (None: its full size) drawn from ``seed``. The timing
    (``time_on_device``): ``rotate`` input sets used in turn, ``warmup`` untimed calls, then up to ``reps`` timed
    calls, fewer for a row slower than ``budget_s`` seconds. ``match``: only the kernel rows whose label contains
    it (None: all). ``measure_device_ceilings``: measure the copy bandwidth and GEMM rates in the same run.
    """

    batch: int | None = None
    seed: int = 0
    rotate: int = 3
    warmup: int = 2
    reps: int = 20
    budget_s: float = 10.0
    match: str | None = None
    measure_device_ceilings: bool = True

    def __post_init__(self):
        for name, value, low in (("rotate", self.rotate, 1), ("warmup", self.warmup, 0), ("reps", self.reps, 3)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ParameterError(f"{name} must be an integer >= {low}, got {value!r}")


def bench(
    op: str,
    variants: list | None = None,
    options: BenchOptions | None = None,
    *,
    kernels_tree: str | None = None,
    log: Callable[[str], None] | None = None,
) -> BenchResult:
    """Return the timed rows of ``op`` (one of PRESET_NAMES) on its preset under ``options`` (``BenchOptions()``)
    and the run's context: ``variants`` (default ``default_variants``) beside cuDNN fp32, TF32 and fp64 (rows
    ``cudnn_fp32``, ``cudnn_tf32``, ``cudnn_fp64``) and the fast fp64 reference (``reference_fp64``), all on the
    same input sets; each tiled variant on every kernel that takes the conv (``fpa_kernels.variant_runs``).
    ``kernels_tree`` is recorded in the context; ``log`` sees a line per row. Needs a CUDA GPU and nvcc."""
    preset = check_op(op)
    op = PRESET_KERNEL_OPS[preset]  # the records and files are named by the kernels' op
    if not torch.cuda.is_available():
        raise ParameterError("fpa bench needs a CUDA GPU: torch.cuda.is_available() is False on this machine")
    options = BenchOptions() if options is None else options
    log = log or (lambda s: None)
    problem = make_problem(preset, seed=options.seed, batch=options.batch)
    inputs = _input_sets(problem, options.rotate, options.seed)
    meta = _context(preset, problem, inputs, options, kernels_tree)
    if options.measure_device_ceilings:
        meta["ceilings"] = measure_ceilings()
        log(f"ceilings: {meta['ceilings']}")
    _add_floors(meta)
    result = BenchResult(op, meta)
    spec, epilogue = problem.spec, problem.epilogue
    rows = _Rows(result, _reference64(spec, epilogue, inputs), options, log)
    _time_references(rows, spec, epilogue, inputs)
    chosen = variants if variants is not None else default_variants(op)
    slope = epilogue.negative_slope if epilogue is not None else 0.01
    for label, variant, kernel in variant_runs(chosen, spec, tuple(inputs[0][0].shape)):
        if options.match is None or options.match in label:
            extra = {"twinned": variant.twinned, "kernel": kernel or general_kernel(variant).name}
            rows.add(label, "fpa", _variant(variant, spec, inputs, slope, kernel), extra)
    return result


def _input_sets(problem, rotate: int, seed: int) -> list[tuple]:
    """Return ``rotate`` input sets (x, weight, bias, multiplier) on the GPU: the problem's own first, then inputs
    drawn from ``seed`` + 1 with the same weights."""
    gen = torch.Generator().manual_seed(seed + 1)
    inputs = []
    for i in range(rotate):
        x = problem.x if i == 0 else torch.rand(problem.x.shape, generator=gen)
        inputs.append(
            tuple(t.cuda() if t is not None else None for t in (x, problem.weight, problem.bias, problem.multiplier))
        )
    return inputs


def _context(preset: str, problem, inputs: list[tuple], options: BenchOptions, kernels_tree: str | None) -> dict:
    """Return the run's context (``BenchResult.meta``): the problem's sizes, its flops and the fewest bytes it must
    move, the device and its fp32 peak, the library versions, the kernels tree and the date."""
    out_shape = problem.spec.output_shape(tuple(problem.x.shape))
    K = problem.weight[0].numel()
    in_bytes = sum(t.numel() * 4 for t in inputs[0] if t is not None)
    return {
        "preset": preset,
        "input_shape": list(problem.x.shape),
        "output_shape": list(out_shape),
        "K": K,
        "flops": 2 * math.prod(out_shape) * K,
        "min_bytes": in_bytes + math.prod(out_shape) * 4,
        "seed": options.seed,
        "rotate": options.rotate,
        "device": torch.cuda.get_device_name(),
        "sm_count": torch.cuda.get_device_properties(0).multi_processor_count,
        "fp32_peak_tflops": fp32_peak_tflops(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "kernels_tree": kernels_tree,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def _add_floors(meta: dict) -> None:
    """Add to ``meta`` the times no row can beat, where known: its flops at the fp32 peak (``flop_floor_ms``) and
    its fewest bytes at the measured copy bandwidth (``byte_floor_ms``)."""
    peak = meta["fp32_peak_tflops"]
    if peak:
        meta["flop_floor_ms"] = meta["flops"] / (peak * 1e12) * 1e3
    if meta.get("ceilings"):
        meta["byte_floor_ms"] = meta["min_bytes"] / (meta["ceilings"]["copy_TBps"] * 1e12) * 1e3


class _Rows:
    """The rows of a ``BenchResult``, each a callable's error on input set 0 and its time over the input sets."""

    def __init__(self, result: BenchResult, reference, options: BenchOptions, log: Callable[[str], None]):
        self.result, self.options, self.log = result, options, log
        self.reference = reference  # the fast fp64 reference: the truth of every row but its own
        self.truth = reference(0)
        torch.cuda.synchronize()

    def add(self, name: str, kind: str, fn, extra: dict | None = None, truth: torch.Tensor | None = None) -> None:
        """Append the row of ``fn``: its error against ``truth`` (the fp64 reference's output) on input set 0,
        ``extra``, its time (``time_on_device``), TFLOP/s and percentage of the fp32 peak; log it."""
        op, flops, peak = self.result.op, self.result.meta["flops"], self.result.meta["fp32_peak_tflops"]
        y = fn(0)
        row = {"op": op, "variant": name, "kind": kind}
        row.update(_error_row(y, self.truth if truth is None else truth))
        row.update(extra or {})
        del y
        row.update(time_on_device(fn, self.options.warmup, self.options.reps, self.options.budget_s))
        row["tflops"] = flops / row["time_ms"] / 1e9
        row["pct_fp32_peak"] = 100 * row["tflops"] / peak if peak else None
        self.result.records.append(row)
        self.log(
            f"{op:11s} {name:45s} {row['time_ms']:9.3f} ms  {row['tflops']:7.2f} TFLOP/s  "
            f"max err {row['max_abs_err_vs_fp64']:.3g}"
        )


def _time_references(rows: _Rows, spec, epilogue: EpilogueSpec | None, inputs: list[tuple]) -> None:
    """Add the reference rows: the fast fp64 reference (its error against cuDNN's fp64), cuDNN in fp64, fp32 and
    TF32, and for conv3d_kk1 PyTorch users' conv2d rewrite."""
    cudnn64 = _cudnn(spec, epilogue, inputs, torch.float64, False)
    y64 = cudnn64(0)
    scale = rows.truth.abs().max().item()
    rows.add("reference_fp64", "reference", rows.reference, {"max_abs_ref": scale}, truth=y64)
    del y64
    rows.add("cudnn_fp64", "cudnn", cudnn64)
    rows.add("cudnn_fp32", "cudnn", _cudnn(spec, epilogue, inputs, torch.float32, False))
    rows.add("cudnn_tf32", "cudnn", _cudnn(spec, epilogue, inputs, torch.float32, True))
    if rows.result.op == "conv3d_kk1":
        rows.add("cudnn_fp32_as_conv2d", "cudnn", _as_conv2d(spec, inputs))


def _as_conv2d(spec, inputs):
    """conv3d with a (k, k, 1) kernel as PyTorch users rewrite it: depth into the batch (a copy, timed), one
    conv2d (fp32), the result returned as a permuted view (not copied back)."""
    if spec.kernel_size[2] != 1 or spec.stride[2] != 1 or spec.padding[2] != (0, 0):
        raise ParameterError("the conv2d rewrite needs kernel depth 1, stride 1 and no depth padding")
    if any(before != after for before, after in spec.padding[:2]):
        raise ParameterError(f"the conv2d rewrite needs symmetric padding, got {spec.padding}")
    padding = tuple(before for before, _ in spec.padding[:2])

    def run(i):
        x, w, b, _ = inputs[i % len(inputs)]
        n, c, h, wd, d = x.shape
        with backends.tf32(conv=False):
            x2 = x.permute(0, 4, 1, 2, 3).reshape(n * d, c, h, wd)
            y = F.conv2d(x2, w[..., 0], b, spec.stride[:2], padding, spec.dilation[:2], spec.groups)
        return y.reshape(n, d, *y.shape[1:]).permute(0, 2, 3, 4, 1)

    return run


def pareto_front(records: list[dict]) -> list[dict]:
    """Rows no other row beats on both time and error (lower is better on each)."""
    front = []
    for r in records:
        dominated = any(
            o["time_ms"] <= r["time_ms"]
            and o["max_abs_err_vs_fp64"] <= r["max_abs_err_vs_fp64"]
            and (o["time_ms"] < r["time_ms"] or o["max_abs_err_vs_fp64"] < r["max_abs_err_vs_fp64"])
            for o in records
        )
        if not dominated:
            front.append(r)
    return sorted(front, key=lambda r: r["time_ms"])


def plot_pareto(result: BenchResult, path) -> None:
    """Accuracy–speed scatter (log–log) with the Pareto front, written as a PNG. Each point carries a number
    and a key beside the axes names it (variant, time, error): names written at the points overlap where
    kernels cluster in time and error."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    rows = sorted(
        (r for r in result.records if math.isfinite(r["max_abs_err_vs_fp64"])),
        key=lambda r: (r["time_ms"], r["max_abs_err_vs_fp64"]),
    )
    nonzero = [r["max_abs_err_vs_fp64"] for r in rows if r["max_abs_err_vs_fp64"] > 0]
    floor = min(nonzero) / 10 if nonzero else 1e-17  # fp64 rows that agree exactly sit on the floor
    fig, (ax, key) = plt.subplots(1, 2, figsize=(14, 6.5), gridspec_kw={"width_ratios": [1.6, 1]})
    sns.scatterplot(
        x=[r["time_ms"] for r in rows],
        y=[max(r["max_abs_err_vs_fp64"], floor) for r in rows],
        hue=[r["kind"] for r in rows],
        palette={"fpa": "tab:blue", "cudnn": "tab:orange", "reference": "tab:green"},  # the same in every plot
        s=60,
        ax=ax,
    )
    front = pareto_front(rows)
    on_front = {id(r) for r in front}
    lines, width = [], max((len(r["variant"]) for r in rows), default=0)
    for i, r in enumerate(rows, start=1):
        ax.annotate(
            str(i),
            (r["time_ms"], max(r["max_abs_err_vs_fp64"], floor)),
            fontsize=7,
            xytext=(4, 3 + 7 * (i % 2)),  # alternating heights: neighbours' numbers stay apart
            textcoords="offset points",
        )
        mark = "*" if id(r) in on_front else " "
        lines.append(f"{i:2d}{mark} {r['variant']:{width}s} {r['time_ms']:9.3f}  {r['max_abs_err_vs_fp64']:9.2e}")
    ax.plot(
        [r["time_ms"] for r in front],
        [max(r["max_abs_err_vs_fp64"], floor) for r in front],
        "k--",
        lw=0.8,
        label="Pareto front",
    )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("median time per call (ms, CUDA events)")
    ax.set_ylabel(f"max |error| vs fp64 (fp64 rows: vs each other; floor {floor:.0e})")
    m = result.meta
    ax.set_title(f"{result.op} ({m['preset']}, {'×'.join(map(str, m['input_shape']))}) on {m['device']}")
    ax.legend(loc="best", fontsize=8)
    key.axis("off")
    key.text(
        0,
        1,
        "\n".join([f"    {'variant (* on the Pareto front)':{width}s}      time ms  max |err|", *lines]),
        family="monospace",
        fontsize=6.5,
        va="top",
        transform=key.transAxes,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def load(path: pathlib.Path, op: str) -> BenchResult:
    """One op's rows and context from a results file written by ``save`` (``op``: one of PRESET_NAMES)."""
    op = PRESET_KERNEL_OPS[check_op(op)]
    data = json.loads(pathlib.Path(path).read_text())
    if op not in data.get("ops", {}):
        raise ParameterError(f"{path} has no rows for op={op!r}; it has {sorted(data.get('ops', {}))}")
    return BenchResult(op, data["ops"][op], [r for r in data["records"] if r["op"] == op])


def gpu_slug(name: str) -> str:
    """A short file-name form of a GPU's name: 'NVIDIA H100 80GB HBM3' → 'h100'."""
    found = re.search(r"\b([a-z]{1,2}\d{2,4}[a-z]?)\b", name.lower())
    return found.group(1) if found else re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def kernels_tree_of_checkout() -> str | None:
    """``git rev-parse HEAD:kernels`` of the checkout fpa_kernels was imported from, if it is one."""
    import fpa_kernels

    root = pathlib.Path(fpa_kernels.__file__).resolve().parents[1]
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD:kernels"], capture_output=True, text=True, cwd=root)
    except OSError:
        return None
    tree = done.stdout.strip()
    return tree if done.returncode == 0 and len(tree) == 40 else None


def save(result: BenchResult, path: pathlib.Path) -> dict:
    """Merge ``result`` into the JSON file at ``path`` (one file per GPU: every op's rows), atomically.

    Rows of the same op are replaced; rows measured on another kernels tree are dropped, so the file
    always describes one version of kernels/.
    """
    path = pathlib.Path(path)
    data = json.loads(path.read_text()) if path.exists() else {}
    tree = result.meta.get("kernels_tree")
    if data.get("kernels_tree") != tree:
        data = {}
    data["kernels_tree"] = tree
    data["device"] = result.meta["device"]
    data.setdefault("ops", {})[result.op] = result.meta
    data["records"] = [r for r in data.get("records", []) if r["op"] != result.op] + result.records
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=float) + "\n")
    os.replace(tmp, path)
    return data
