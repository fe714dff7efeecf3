"""The GPU validation of every kernel variant: seeded, fuzzed configs of each op and, on each, every variant on
every kernel that takes it — the output fully written, bit for bit the CPU twin (twinned variants), within
the bound it answers to (``variant_bound``) of fp64 — beside cuDNN's fp32 conv and the fast fp64 reference;
compute-sanitizer's memcheck and racecheck on a subset; the full-size seed-000 conv; cold and warm build times
and a probe of CUDA's math functions with and without fast-math. ``validate_all`` is the whole run (what
experiments/gpu_validation.py writes to experiments/results/gpu_validation.json); it needs a CUDA device.
"""

from __future__ import annotations

import datetime
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

from fp_analysis.errors import FpaError
from fp_analysis.numerics import backends
from fp_analysis.numerics.arith import add32
from fp_analysis.numerics.bounds import gamma, term_sums
from fp_analysis.numerics.metrics import ulp
from fp_analysis.numerics.orders import AccumulationSpec, accumulate
from fp_analysis.ops.conv import conv2d_spec, conv3d_kk1_spec
from fp_analysis.ops.epilogue import EpilogueSpec
from fp_analysis.ops.modules import torch_padding_arg
from fp_analysis.ops.presets import make_problem
from fp_analysis.ops.reference import fp64_full
from fp_analysis.ops.terms import gather_terms, sample_output_indices

from .call import ConvCall
from .driver import load_kernel
from .launch import run_call, run_variant, tiled_kernel, variant_runs
from .mathprobe import MATH_PROBE_ROWS, cuda_math_probe
from .reference import conv_fp64
from .registry import build_all, general_kernel, variant_build
from .twin import all_output_indices, twin_from_terms
from .variants import (
    CUDA_FAST_MATH_GELU_ULPS,
    GeluImpl,
    Op,
    Schedule,
    TensorCore,
    VariantSpec,
    variant_bound,
    variant_matrix,
)

__all__ = ["fast_math_probe", "make_configs", "make_inputs", "seed000_full", "validate_all", "validate_config"]

SLOPE = 0.01
SIZES = [1, 2, 3, 5, 7, 11, 13, 17, 19, 23]
_FIELDS = (
    "in_channels",
    "out_channels",
    "kernel_size",
    "stride",
    "padding",
    "dilation",
    "groups",
    "bias",
    "input_shape",
)
# Configs every run covers, before the random ones: (in, out, kernel, stride, padding, dilation, groups, bias, input)
_FORCED = {
    Op.CONV3D_KK1: [
        (3, 4, 3, 1, 0, 1, 1, False, (1, 3, 7, 9, 1)),
        (2, 3, (3, 3, 1), (1, 2, 3), (1, 0, 2), (2, 1, 3), 1, True, (1, 2, 5, 6, 40)),
        (6, 9, (2, 3, 1), 1, "same", (1, 2, 1), 3, True, (2, 6, 5, 7, 33)),
        (4, 4, 3, 2, 1, 1, 4, False, (1, 4, 9, 8, 3)),
    ],
    Op.CONV2D: [
        (32, 8, (5, 9), 1, (2, 4), (2, 3), 1, False, (1, 32, 13, 29)),  # the dilated seed's conv, small
        (8, 8, 3, 1, 1, 1, 8, True, (2, 8, 9, 11)),  # depthwise
        (64, 5, 1, 1, 0, 1, 1, False, (1, 64, 7, 5)),
        (4, 6, 3, 2, 0, 1, 2, True, (1, 4, 9, 13)),
        (3, 5, (3, 5), 1, (1, 4), (1, 2), 1, True, (2, 3, 3, 300)),  # conv_rows's blocks run on into the next row
        (3, 10, (4, 2), 1, "same", 2, 1, True, (1, 3, 10, 7)),
    ],
}
_FORCED[Op.CONV_GELU] = _FORCED[Op.CONV2D]


def _spec(op: Op, cfg: dict):
    args = {k: v for k, v in cfg.items() if k != "input_shape"}
    return (conv3d_kk1_spec if op is Op.CONV3D_KK1 else conv2d_spec)(**args)


def _random_config(op: Op, rng: np.random.Generator) -> dict:
    nd = 3 if op is Op.CONV3D_KK1 else 2
    while True:
        depthwise = rng.random() < 0.15
        groups = int(rng.integers(1, 9)) if depthwise else int(rng.choice([1, 1, 1, 2, 3, 4]))
        cg, og = (1, int(rng.integers(1, 3))) if depthwise else (int(rng.integers(1, 7)), int(rng.integers(1, 6)))
        kernel = [int(rng.integers(1, 6)) for _ in range(2)] + ([1] if nd == 3 else [])
        stride = [int(rng.integers(1, 4)) for _ in range(nd)]
        dilation = [int(rng.integers(1, 4)) for _ in range(nd)]
        kind = rng.choice(["int", "tuple", "same", "valid"])
        padding = {
            "int": int(rng.integers(0, 3)),
            "tuple": tuple(int(rng.integers(0, 4)) for _ in range(nd)),
            "same": "same",
            "valid": "valid",
        }[kind]
        if padding == "same":
            stride = [1] * nd
        spatial = [int(rng.choice(SIZES)) for _ in range(2)] + (
            [int(rng.choice([1, 2, 5, 10, 33, 37]))] if nd == 3 else []
        )
        cfg = dict(
            in_channels=groups * cg,
            out_channels=groups * og,
            kernel_size=tuple(kernel),
            stride=tuple(stride),
            padding=padding,
            dilation=tuple(dilation),
            groups=groups,
            bias=bool(rng.random() < 0.5),
            input_shape=(int(rng.choice([1, 1, 2, 3])), groups * cg, *spatial),
        )
        try:
            spec = _spec(op, cfg)
            out = spec.output_shape(cfg["input_shape"])
        except FpaError:
            continue
        if 0 < int(np.prod(out)) <= 40_000 and spec.K <= 200:
            return cfg


def make_configs(op: Op, count: int, seed: int) -> list[dict]:
    """The forced coverage configs, then seeded random ones, ``count`` in all (≥ the forced ones)."""
    rng = np.random.default_rng([seed, list(Op).index(op)])
    configs = [dict(zip(_FIELDS, row, strict=True)) for row in _FORCED[op]]
    while len(configs) < count:
        configs.append(_random_config(op, rng))
    return configs


def make_inputs(op: Op, cfg: dict, index: int, seed: int) -> dict:
    """Seeded CPU tensors: torch.rand inputs (as KernelBench) or, every third config, zero-mean ones."""
    spec = _spec(op, cfg)
    gen = torch.Generator().manual_seed(seed * 1000 + index)
    x = torch.rand(cfg["input_shape"], generator=gen)
    if index % 3 == 2:
        x = x * 2 - 1
    w = torch.randn(spec.weight_shape, generator=gen) / np.sqrt(spec.K)
    b = torch.randn(spec.out_channels, generator=gen) * 0.1 if spec.bias else None
    m = torch.randn(spec.out_channels, 1, 1, generator=gen) if op is Op.CONV_GELU else None
    return dict(spec=spec, x=x, w=w, b=b, m=m)


def environment(kernels_tree: str) -> dict:
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout.strip().splitlines()[-1:]
    return {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "nvcc": nvcc[0] if nvcc else None,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "kernels_tree": kernels_tree,
    }


def build_times() -> dict:
    """Cold build of each op's variant matrix into a fresh cache, then a warm build + load of all of them."""
    result = {}
    saved = os.environ.get("FPA_KERNEL_CACHE")
    for op in Op:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ["FPA_KERNEL_CACHE"] = tmp
            start = time.perf_counter()
            build_all(variant_build(v) for v in variant_matrix(op))
            result[f"{op.value}_cold_s"] = time.perf_counter() - start
    if saved is None:
        os.environ.pop("FPA_KERNEL_CACHE")
    else:
        os.environ["FPA_KERNEL_CACHE"] = saved
    everything = [variant_build(v) for op in Op for v in variant_matrix(op)]
    build_all(everything)
    torch.zeros(1, device="cuda")
    start = time.perf_counter()
    for build, path in build_all(everything).items():
        load_kernel(path, build.kernel, torch.cuda.current_device())
    result["all_ops_warm_load_s"] = time.perf_counter() - start
    result["variants"] = {op.value: len(variant_matrix(op)) for op in Op}
    return result


def prebuild(count: int, seed: int) -> float:
    """Build, in parallel, every geometry-specialised cubin (conv_rows, conv_wgmma) the configs' runs and the
    full-size seed need, which run_variant would otherwise build one at a time; returns the seconds."""
    specs = [(op, _spec(op, cfg), cfg["input_shape"]) for op in Op for cfg in make_configs(op, count, seed)]
    seed_problem = make_problem("dilated_conv2d", seed=0, batch=1)
    specs.append((Op.CONV2D, seed_problem.spec, tuple(seed_problem.x.shape)))
    builds = {
        variant_build(variant, spec, kernel, shape)
        for op, spec, shape in specs
        for _, variant, kernel in variant_runs(variant_matrix(op), spec, shape)
        if kernel in ("conv_rows", "conv_wgmma")
    }
    start = time.perf_counter()
    build_all(builds)
    return time.perf_counter() - start


def fast_math_probe() -> dict:
    """Max error in fp32 ulps of the fp64 value, precise and --use_fast_math, over [-10, 10] and specials."""
    x = torch.cat([torch.linspace(-10, 10, 1 << 20), torch.tensor([0.0, -0.0, 1e-30, -1e-30, 1e-40, 88.0, -87.0])])
    x = x.cuda()
    names = MATH_PROBE_ROWS
    outs = {fast: cuda_math_probe(x, fast) for fast in (False, True)}
    v = x.double()
    ref = [
        torch.erf(v),
        torch.tanh(v),
        torch.exp(v),
        1 / v,
        0.5 * v * (1 + torch.erf(v / np.sqrt(2))),
        0.5 * v * (1 + torch.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v**3))),
    ]
    result = {}
    for i, name in enumerate(names):
        r = ref[i].cpu().numpy()
        finite = np.isfinite(r) & np.isfinite(outs[False][i]) & (np.abs(r) < 3e38)
        u = ulp(r[finite])
        precise = np.abs(outs[False][i][finite] - r[finite]) / u
        fast = np.abs(outs[True][i][finite] - r[finite]) / u
        scale = np.abs(x.double().cpu().numpy()[finite]) * 2.0**-24  # u·|v|: GELU's own scale, |GELU(v)| ≤ |v|
        scale = np.maximum(scale, 2.0**-149)
        result[name] = {
            "precise_max_err_over_u_v": float((np.abs(outs[False][i][finite] - r[finite]) / scale).max()),
            "fast_max_err_over_u_v": float((np.abs(outs[True][i][finite] - r[finite]) / scale).max()),
            "precise_max_ulp": float(precise.max()),
            "fast_max_ulp": float(fast.max()),
            "fast_differs_fraction": float(np.mean(outs[False][i].view(np.uint32) != outs[True][i].view(np.uint32))),
        }
    return result


def _gelu_eval_within_variant_bound(probe: dict) -> dict:
    """Whether the GELU error this device's CUDA erff/tanhf make (the probe, in u·|v|) stays inside what
    ``variant_bound`` charges for them: 4 for the formula's roundings plus the function's error, within
    ``epilogue_bound``'s default 6 without fast-math and ``CUDA_FAST_MATH_GELU_ULPS`` with it."""
    precise = 6.0  # epilogue_bound's default gelu_eval_ulps
    return {
        form: {
            "precise": 4.0 + probe[form]["precise_max_err_over_u_v"] <= precise,
            "fast_math": 4.0 + probe[form]["fast_max_err_over_u_v"] <= CUDA_FAST_MATH_GELU_ULPS,
        }
        for form in ("gelu_erf", "gelu_tanh")
    }


def validate_config(op: Op, cfg: dict, index: int, seed: int) -> tuple[list[dict], dict]:
    """(one record per variant run, the config's record) for config ``index`` of ``op`` (see the module doc)."""
    inputs = make_inputs(op, cfg, index, seed)
    spec, x, w, b, m = inputs["spec"], inputs["x"], inputs["w"], inputs["b"], inputs["m"]
    xg, wg = x.cuda(), w.cuda()
    bg = b.cuda() if b is not None else None
    mg = m.cuda() if m is not None else None
    out_shape = spec.output_shape(tuple(x.shape))
    terms = gather_terms(spec, x, w, b, all_output_indices(out_shape))
    sums = term_sums(terms.w, terms.x, terms.bias)
    conv64 = fp64_full(spec, xg, wg, bg).cpu().numpy().reshape(-1)
    refs = {}
    twins = {}
    records = []
    m_out = m.reshape(-1).numpy()[terms.index[:, 1]] if m is not None else None
    for label, variant, kernel in variant_runs(variant_matrix(op), spec, tuple(x.shape)):
        out = torch.full(out_shape, float("nan"), device="cuda")
        run_call(variant, ConvCall(spec, xg, wg, bg, mg, SLOPE, out), kernel)
        torch.cuda.synchronize()
        got = out.cpu().numpy().reshape(-1)
        if op is Op.CONV_GELU:
            if variant.gelu not in refs:
                epi = EpilogueSpec(negative_slope=SLOPE, approximate=variant.gelu)
                refs[variant.gelu] = fp64_full(spec, xg, wg, bg, epilogue=epi, multiplier=mg).cpu().numpy().reshape(-1)
            ref = refs[variant.gelu]
        else:
            ref = conv64
        bitwise = None
        if variant.twinned:
            key = (variant.twin_accumulation(), variant.term_order, variant.gelu)
            if key not in twins:
                twins[key] = twin_from_terms(variant, spec, terms, m, SLOPE)
            bitwise = bool(np.array_equal(got.view(np.uint32), twins[key].view(np.uint32)))
        bound = variant_bound(variant, sums, conv=conv64, multiplier=m_out, negative_slope=SLOPE).deterministic
        err = np.abs(got.astype(np.float64) - ref)
        records.append(
            {
                "op": op.value,
                "variant": label,
                "kernel": kernel or general_kernel(variant).name,
                "config_index": index,
                "config": _jsonable(cfg),
                "bitwise_equal": bitwise,
                "all_written": bool(not np.isnan(got).any()),
                "max_abs_err_vs_fp64": float(np.nanmax(err)) if err.size else 0.0,
                "bound": float(bound.max()),
                "within_bound": bool(np.all(err <= bound)),
                "max_err_over_bound": float(np.max(np.divide(err, bound, out=np.zeros_like(err), where=err > 0))),
                "sanitizer": "not run",
            }
        )
    # cuDNN fp32 (TF32 off) against the plain input-channel-outermost fmaf chain, on the conv alone.
    plain = VariantSpec(Op.CONV3D_KK1 if op is Op.CONV3D_KK1 else Op.CONV2D)
    ours = run_variant(plain, spec, xg, wg, bg)
    conv = F.conv3d if op is Op.CONV3D_KK1 else F.conv2d
    with backends.tf32(conv=False):
        cudnn = conv(xg, wg, bg, spec.stride, torch_padding_arg(spec), spec.dilation, spec.groups)
    cudnn_equal = bool(torch.equal(ours, cudnn))
    # cuDNN may add the bias after the sum instead of starting from it: the twin of that order, on the CPU.
    bias_last = None
    if b is not None:
        summed = add32(accumulate(terms.w, terms.x, AccumulationSpec()), terms.bias)
        bias_last = bool(np.array_equal(summed.view(np.uint32), cudnn.cpu().numpy().reshape(-1).view(np.uint32)))
    for r in records:
        r["cudnn_fp32_bitwise_equal"] = cudnn_equal
    # The fast fp64 reference (fp64 tensor cores) against torch's fp64 conv: equal up to fp64 rounding,
    # |difference| ≤ 2·γ_K(double)·Σ|w·x| + the bias rounding (Higham 2002, §3.1; both sides' bounds).
    fast64 = conv_fp64(spec, xg, wg, bg).cpu().numpy().reshape(-1)
    abs_sum = np.abs(terms.w.astype(np.float64) * terms.x).sum(axis=1)
    if terms.bias is not None:
        abs_sum += np.abs(terms.bias.astype(np.float64))
    u64 = 2.0**-53
    gamma_k = gamma(spec.K + 1, u64)
    ref_diff = np.abs(fast64 - conv64)
    return records, {
        "op": op.value,
        "config_index": index,
        "config": _jsonable(cfg),
        "cudnn_fp32_bitwise_equal": cudnn_equal,
        "cudnn_fp32_equals_bias_last_twin": bias_last,
        "reference_fp64_max_abs_diff": float(ref_diff.max()) if ref_diff.size else 0.0,
        "reference_fp64_within_fp64_bound": bool(np.all(ref_diff <= 2 * gamma_k * abs_sum + u64 * np.abs(conv64))),
        "outputs": int(np.prod(out_shape)),
        "K": spec.K,
    }


def _jsonable(cfg: dict) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in cfg.items()}


def sanitizer_variants(op: Op) -> list[VariantSpec]:
    """The variants run under compute-sanitizer: every one without a twin, the first and last of the matrix, the
    other orders, a tap-outer one and every tiled one."""
    matrix = variant_matrix(op)
    keep = [v for v in matrix if v.tensor_core is not TensorCore.NONE or v.gelu_impl is GeluImpl.CUDA]
    first_others = [v for v in matrix if v.accumulation.order.value in ("split_k", "kahan", "fp64") and not v.fast_math]
    keep += [matrix[0], matrix[-1], *first_others[:4]]
    keep += [v for v in matrix if v.term_order.value == "tap_outer"][:1]
    keep += [v for v in matrix if v.schedule is Schedule.TILED]
    return list(dict.fromkeys(keep))


def sanitizer_child(count: int, seed: int, op: Op | str) -> None:
    """Run the sanitizer subset of one op (this process runs under compute-sanitizer)."""
    op = Op(op)
    for index, cfg in enumerate(make_configs(op, count, seed)[:10]):
        inputs = make_inputs(op, cfg, index, seed)
        spec = inputs["spec"]
        xg, wg = inputs["x"].cuda(), inputs["w"].cuda()
        bg = inputs["b"].cuda() if inputs["b"] is not None else None
        mg = inputs["m"].cuda() if inputs["m"] is not None else None
        for _, variant, kernel in variant_runs(sanitizer_variants(op), spec, tuple(xg.shape)):
            run_variant(variant, spec, xg, wg, bg, mg, SLOPE, kernel=kernel)
        conv_fp64(spec, xg, wg, bg)  # the fast fp64 reference's kernel too
        torch.cuda.synchronize()
        print(f"SANITIZED {op.value} {index}", flush=True)


def run_sanitizers(count: int, seed: int) -> list[dict]:
    """memcheck and racecheck on each op's sanitizer subset, all six processes at once."""
    jobs = []
    for op in Op:
        for tool in ("memcheck", "racecheck"):
            command = [
                "compute-sanitizer",
                "--tool",
                tool,
                "--error-exitcode",
                "99",
                sys.executable,
                "-c",
                f"from fpa_kernels.validation import sanitizer_child; sanitizer_child({count}, {seed}, {op.value!r})",
            ]
            jobs.append(
                (
                    tool,
                    op,
                    time.perf_counter(),
                    subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True),
                )
            )
    results = []
    for tool, op, start, proc in jobs:
        try:
            output, _ = proc.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            proc.kill()
            output, _ = proc.communicate()
            output += "\n[killed after 300 s]"
        # memcheck ends "ERROR SUMMARY: N errors"; racecheck "RACECHECK SUMMARY: H hazards displayed (N errors"
        summary = re.findall(r"(?:ERROR SUMMARY: |SUMMARY: \d+ hazards? displayed \()(\d+) error", output)
        sanitized = sorted({int(i) for i in re.findall(rf"SANITIZED {op.value} (\d+)", output)})
        clean = proc.returncode == 0 and bool(summary) and all(int(n) == 0 for n in summary) and len(sanitized) == 10
        results.append(
            {
                "tool": tool,
                "op": op.value,
                "returncode": proc.returncode,
                "errors": [int(n) for n in summary],
                "configs": sanitized,
                "clean": clean,
                "seconds": time.perf_counter() - start,
                "variants": [v.label for v in sanitizer_variants(op)],
                "tail": "" if clean else output[-1500:],
            }
        )
    return results


def seed000_full() -> dict:
    """The dilated seed at full size: our channel-outer fmaf kernel against cuDNN fp32, TF32, fp64."""
    problem = make_problem("dilated_conv2d", seed=0)
    spec = problem.spec
    x, w = problem.x.cuda(), problem.weight.cuda()
    variant = VariantSpec(Op.CONV2D)
    ours = run_variant(variant, spec, x, w)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    ours = run_variant(variant, spec, x, w)
    stop.record()
    torch.cuda.synchronize()
    ours_ms = start.elapsed_time(stop)
    padding = torch_padding_arg(spec)
    with backends.tf32(conv=False):
        fp32 = F.conv2d(x, w, None, spec.stride, padding, spec.dilation)
    with backends.tf32(conv=True):
        tf32 = F.conv2d(x, w, None, spec.stride, padding, spec.dilation)
    fp64 = F.conv2d(x.double(), w.double(), None, spec.stride, padding, spec.dilation)
    tiled_variant = VariantSpec(Op.CONV2D, schedule=Schedule.TILED)
    tiled = run_variant(tiled_variant, spec, x, w)
    im2col = run_variant(tiled_variant, spec, x, w, kernel="conv_tiled")
    ref64 = conv_fp64(spec, x, w)
    index = sample_output_indices(tuple(ours.shape), 2000, 0)
    terms = gather_terms(spec, problem.x, problem.weight, None, index)
    twin_vals = twin_from_terms(variant, spec, terms)
    kernel_vals = ours.cpu().numpy()[tuple(index.T)]
    return {
        "shape": list(problem.x.shape),
        "variant": variant.label,
        "bitwise_equal_cudnn_fp32": bool(torch.equal(ours, fp32)),
        "max_abs_diff_cudnn_fp32": float((ours - fp32).abs().max()),
        "max_abs_diff_cudnn_default_tf32": float((ours - tf32).abs().max()),
        "ours_vs_fp64_max": float((ours.double() - fp64).abs().max()),
        "cudnn_tf32_vs_fp64_max": float((tf32.double() - fp64).abs().max()),
        "cudnn_fp32_vs_fp64_max": float((fp32.double() - fp64).abs().max()),
        "twin_bitwise_equal_on_2000_samples": bool(
            np.array_equal(twin_vals.view(np.uint32), kernel_vals.view(np.uint32))
        ),
        "ours_ms": ours_ms,
        "tiled_kernel": tiled_kernel(tiled_variant, spec),
        "tiled_bitwise_equal_direct": bool(torch.equal(tiled, ours)),
        "tiled_bitwise_equal_im2col_kernel": bool(torch.equal(tiled, im2col)),
        "tiled_bitwise_equal_cudnn_fp32": bool(torch.equal(tiled, fp32)),
        "reference_fp64_max_abs_diff_cudnn_fp64": float((ref64 - fp64).abs().max()),
    }


def validate_all(
    configs: int = 50,
    seed: int = 0,
    kernels_tree: str = "unknown",
    sanitize: bool = True,
    progress: Callable[[str], None] = print,
    partial: Callable[[dict], None] | None = None,
) -> dict:
    """The whole validation (see the module doc) as the JSON document experiments/results/gpu_validation.json
    holds; ``progress`` gets a line per step; ``partial`` the result so far before the sanitizers run (they may
    take minutes)."""
    t0 = time.perf_counter()
    result = {"environment": environment(kernels_tree), "build": build_times()}
    result["build"]["specialised_s"] = prebuild(configs, seed)
    progress(f"build {result['build']}")
    result["fast_math_probe"] = probe = fast_math_probe()
    result["gelu_eval_within_variant_bound"] = _gelu_eval_within_variant_bound(probe)
    progress(f"probe {probe}")
    records, config_records = [], []
    for op in Op:
        for index, cfg in enumerate(make_configs(op, configs, seed)):
            recs, conf = validate_config(op, cfg, index, seed)
            records += recs
            config_records.append(conf)
        progress(f"{op.value}: {configs} configs done at {time.perf_counter() - t0:.0f} s")
    result["seed000_full"] = seed000_full()
    progress(f"seed000 {result['seed000_full']}")
    sanitizer = []
    if sanitize:
        if partial is not None:
            partial({**result, "records": records, "configs": config_records, "partial": True})
        sanitizer = run_sanitizers(configs, seed)
        for s in sanitizer:
            progress(f"sanitizer { {k: v for k, v in s.items() if k != 'tail'} }")
        for r in records:
            runs = [
                s
                for s in sanitizer
                if s["op"] == r["op"]
                and r["config_index"] in s["configs"]
                and r["variant"].removesuffix(f" [{r['kernel']}]") in s["variants"]
            ]
            if runs:
                r["sanitizer"] = "clean" if all(s["clean"] for s in runs) else "error"
    result["sanitizer"] = sanitizer
    result["configs"] = config_records
    result["records"] = records
    result["summary"] = _summary(records, config_records, sanitizer, time.perf_counter() - t0)
    return result


def _summary(records: list[dict], configs: list[dict], sanitizer: list[dict], seconds: float) -> dict:
    twinned = [r for r in records if r["bitwise_equal"] is not None]
    return {
        "records": len(records),
        "configs_per_op": {op.value: sum(c["op"] == op.value for c in configs) for op in Op},
        "twinned_records": len(twinned),
        "twinned_bitwise_equal": sum(r["bitwise_equal"] for r in twinned),
        "twinned_bitwise_equal_by_kernel": {
            k: [sum(r["bitwise_equal"] for r in twinned if r["kernel"] == k), sum(r["kernel"] == k for r in twinned)]
            for k in sorted({r["kernel"] for r in twinned})
        },
        "within_bound_by_kernel": {
            k: [sum(r["within_bound"] for r in records if r["kernel"] == k), sum(r["kernel"] == k for r in records)]
            for k in sorted({r["kernel"] for r in records})
        },
        "all_within_bound": all(r["within_bound"] for r in records),
        "all_written": all(r["all_written"] for r in records),
        "cudnn_fp32_equal_configs": sum(c["cudnn_fp32_bitwise_equal"] for c in configs),
        "cudnn_fp32_equal_bias_last_configs": sum(bool(c["cudnn_fp32_equals_bias_last_twin"]) for c in configs),
        "reference_fp64_within_fp64_bound": all(c["reference_fp64_within_fp64_bound"] for c in configs),
        "sanitizer_clean": all(s["clean"] for s in sanitizer) if sanitizer else None,
        "seconds": seconds,
    }
