"""Kernel variants without a GPU: spec validation, the registry against the sources, the generated header,
twins within their bounds, launch-time checks, the validation configs and the fast-math GELU constant.

The builds (nvcc) are in process/test_kernel_builds.py; on a GPU, gpu/test_kernels.py runs each variant
against its twin, and experiments/gpu_validation.py runs the full matrix on the device and writes
experiments/results/gpu_validation.json.
"""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pytest
import torch
from fpa_kernels import (
    KERNELS,
    ConvCall,
    GeluImpl,
    Op,
    TensorCore,
    VariantSpec,
    all_output_indices,
    generated_header,
    run_call,
    run_variant,
    twin,
    variant_build,
    variant_matrix,
)

from fp_analysis.errors import DtypeError, ParameterError, ShapeError
from fp_analysis.numerics.orders import AccumulationSpec
from fp_analysis.ops.conv import conv2d_spec, conv3d_kk1_spec
from fp_analysis.ops.terms import gather_terms

from ..kernel_cases import every_build

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNEL_DIR = ROOT / "kernels"


def test_every_variant_is_distinct_and_labelled():
    for op in Op:
        matrix = variant_matrix(op)
        assert len(matrix) >= 30
        assert len({v.label for v in matrix}) == len(matrix)
        assert len({variant_build(v) for v in matrix}) == len(matrix)  # no two variants build the same cubin


def _source_text(name: str) -> str:
    """A kernel source and the headers it includes (not the generated one), comments and strings removed."""
    text = (KERNEL_DIR / name).read_text()
    for include in re.findall(r'#include "([^"]+)"', text):
        if include != "fpa_generated.cuh":
            text += "\n" + _source_text(include)
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)


def test_the_registry_and_the_sources_agree():
    """Every FPA_ name a kernel's source reads is generated (a code, a tile size, a GELU constant), defined or
    defaulted in the source itself, or one of the defines the registry says the build gives it; and the
    builds of every variant on every kernel that takes it give exactly those."""
    for kernel in KERNELS.values():
        text = _source_text(kernel.source)
        used = set(re.findall(r"\bFPA_[A-Z0-9_]+\b", text))
        own = set(re.findall(r"#\s*define\s+(FPA_[A-Z0-9_]+)", text))
        generated = set(re.findall(r"#define\s+(FPA_[A-Z0-9_]+)", generated_header(kernel.source, kernel.reads)))
        assert used - own - generated == set(kernel.reads), kernel.name
        assert not own & generated, kernel.name  # a source redefining a generated name would shadow it
    for build in every_build():
        assert {name for name, _ in build.defines} == set(KERNELS[build.kernel].reads), build


def test_the_generated_header_guards_each_define_a_source_reads():
    reads = KERNELS["conv_rows"].reads
    header = generated_header("conv_rows.cu", reads)
    for define in reads:
        assert f"#ifndef {define}\n#error" in header
    assert "#define FPA_ORDER_KAHAN 2" in header and "#define FPA_OPROUND_TF32 1" in header


def test_generated_header_carries_the_gelu_tables():
    header = generated_header("conv_direct.cu", KERNELS["conv_direct"].reads)
    assert "fpa_erf_coeffs[16][8]" in header and "fpa_tanh_coeffs[38][8]" in header
    # Only the sources with the fused epilogue get them: the tensor-core kernels' cubins carry no unused tables.
    assert "fpa_erf_coeffs" not in generated_header("conv_wgmma.cu", KERNELS["conv_wgmma"].reads)
    literal = next(line.split()[2] for line in header.splitlines() if line.startswith("#define FPA_SQRT1_2 "))
    assert float.fromhex(literal.rstrip("f")) == float(np.float32(2**-0.5))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(op="conv4d"), "op='conv4d'"),
        (dict(op="conv2d", accumulation=AccumulationSpec("tree")), "kernels implement only"),
        (dict(op="conv2d", accumulation=AccumulationSpec(operand_rounding="bf16")), "kernels offer only"),
        (dict(op="conv2d", accumulation=AccumulationSpec(ftz=True)), "fast_math=True"),
        (dict(op="conv3d_kk1", tensor_core="tf32_mma"), "conv2d' only"),
        (dict(op="conv2d", gelu_impl="cuda"), "op='conv_gelu' only"),
        (dict(op="conv2d", tensor_core="3xtf32", term_order="tap_outer"), "leave accumulation"),
        (dict(op="conv_gelu", gelu="sigmoid"), "gelu='sigmoid'"),
    ],
)
def test_variant_spec_rejects_what_the_kernels_cannot_do(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        VariantSpec(**kwargs)


def test_twinned_flags():
    assert VariantSpec("conv2d").twinned
    assert not VariantSpec("conv2d", tensor_core=TensorCore.TF32).twinned
    assert not VariantSpec("conv_gelu", gelu_impl=GeluImpl.CUDA).twinned
    with pytest.raises(ParameterError, match="no bit-exact CPU twin"):
        twin(
            VariantSpec("conv2d", tensor_core="3xtf32"),
            conv2d_spec(1, 1, 1),
            torch.rand(1, 1, 2, 2),
            torch.rand(1, 1, 1, 1),
        )


@pytest.mark.parametrize("op", list(Op))
def test_twins_stay_within_their_bounds(op):
    """Every twinned variant of every op (conv_gelu with its epilogue) within ``variant_bound`` of the exact
    result of its inputs: the bound report, fuzz and the GPU validation judge the kernels by."""
    from fpa_kernels import variant_bound

    from fp_analysis.numerics.bounds import term_sums
    from fp_analysis.ops.epilogue import EpilogueSpec, epilogue_torch

    spec = (
        conv3d_kk1_spec(4, 6, (3, 2, 1), stride=(1, 2, 2), padding=(1, 0, 1), groups=2)
        if op is Op.CONV3D_KK1
        else conv2d_spec(4, 6, (3, 2), stride=(2, 1), padding="valid", groups=2)
    )
    shape = (2, 4, 7, 9, 5) if op is Op.CONV3D_KK1 else (2, 4, 7, 9)
    gen = torch.Generator().manual_seed(0)
    x, w, b = torch.rand(shape, generator=gen), torch.randn(spec.weight_shape, generator=gen), torch.randn(6)
    m = torch.randn(6, 1, 1, generator=gen) if op is Op.CONV_GELU else None
    terms = gather_terms(spec, x, w, b, all_output_indices(spec.output_shape(shape)))
    conv = (terms.w.astype(np.float64) * terms.x).sum(axis=1) + terms.bias
    per_output = m.reshape(-1).numpy().astype(np.float64)[terms.index[:, 1]] if m is not None else None
    sums = term_sums(terms.w, terms.x, terms.bias)
    checked = 0
    for variant in variant_matrix(op):
        if not variant.twinned:
            continue
        exact = conv
        if m is not None:
            epilogue = EpilogueSpec(0.01, variant.gelu)
            exact = epilogue_torch(torch.from_numpy(conv), torch.from_numpy(per_output), epilogue).numpy()
        got = twin(variant, spec, x, w, b, m).reshape(-1)
        bound = variant_bound(variant, sums, conv=conv, multiplier=per_output).deterministic
        assert np.all(np.abs(got - exact) <= bound * (1 + 1e-9) + 1e-12), variant.label
        checked += 1
    assert checked >= 30


def test_launch_checks_arguments_before_anything_runs():
    spec = conv2d_spec(4, 6, 3, bias=True)
    v = VariantSpec("conv2d")
    x, w, b = torch.rand(1, 4, 5, 5), torch.rand(6, 4, 3, 3), torch.rand(6)
    with pytest.raises(ShapeError, match=r"weight must have shape \[6, 4, 3, 3\]"):
        run_variant(v, spec, x, torch.rand(6, 4, 3, 2), b)
    with pytest.raises(DtypeError, match="x must be float32"):
        run_variant(v, spec, x.double(), w, b)
    with pytest.raises(ShapeError, match="contiguous"):
        run_variant(v, spec, x.transpose(2, 3), w, b)
    with pytest.raises(ParameterError, match="bias=True but bias is None"):
        run_variant(v, spec, x, w)
    with pytest.raises(ShapeError, match="expected input"):
        run_variant(v, spec, torch.rand(1, 3, 5, 5), w, b)
    with pytest.raises(ParameterError, match="needs multiplier"):
        run_variant(VariantSpec("conv_gelu"), spec, x, w, b)
    with pytest.raises(ParameterError, match="needs a 3-d conv spec"):
        run_variant(VariantSpec("conv3d_kk1"), spec, x, w, b)
    with pytest.raises(DtypeError, match="x must be on a CUDA device"):
        run_variant(v, spec, x, w, b)
    with pytest.raises(ShapeError, match=r"out must have shape \[1, 6, 3, 3\]"):
        run_call(v, ConvCall(spec, x, w, b, out=torch.empty(1, 6, 3, 4)))
    with pytest.raises(ParameterError, match="call must be a ConvCall"):
        run_call(v, (spec, x, w, b))


def test_the_kernels_package_depends_only_on_the_layers_below_the_commands():
    """fpa_kernels may import fp_analysis.errors, .numerics and .ops, never the commands above them (study,
    explain, cli...): they use the kernels, not the other way round."""
    import ast

    imported = set()
    for path in KERNEL_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {(path.name, alias.name) for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                imported.add((path.name, node.module))
    ours = {(file, name) for file, name in imported if name.split(".")[0] == "fp_analysis"}
    allowed = ("fp_analysis.errors", "fp_analysis.numerics", "fp_analysis.ops")
    assert ours and {(file, name) for file, name in ours if not name.startswith(allowed)} == set()


def test_the_gpu_validation_configs_are_seeded_valid_and_small():
    """fpa_kernels.validation's configs (what gpu_validation.json was measured on): the forced ones first, the
    same for the same seed, every one a conv its op takes; the random ones (after the forced) with at most
    40,000 outputs and K ≤ 200."""
    from fpa_kernels.validation import _FORCED, make_configs, make_inputs

    for op in Op:
        configs = make_configs(op, 50, seed=0)
        assert len(configs) == 50 and configs == make_configs(op, 50, seed=0) != make_configs(op, 50, seed=1)
        forced = (1, 3, 7, 9, 1) if op is Op.CONV3D_KK1 else (1, 32, 13, 29)
        assert configs[0]["input_shape"] == forced  # the forced coverage comes first
        for index, cfg in enumerate(configs[:16]):
            inputs = make_inputs(op, cfg, index, seed=0)
            spec = inputs["spec"]
            assert (spec.spatial_dims == 3) == (op is Op.CONV3D_KK1) and tuple(inputs["x"].shape) == cfg["input_shape"]
            assert (inputs["m"] is not None) == (op is Op.CONV_GELU)
            outputs = np.prod(spec.output_shape(cfg["input_shape"]))
            assert outputs > 0 and (index < len(_FORCED[op]) or (outputs <= 40_000 and spec.K <= 200))


def test_the_fast_math_gelu_constant_covers_the_committed_probe():
    """CUDA_FAST_MATH_GELU_ULPS is typed in from gpu_validation.json's probe: it must cover what the committed run
    measured for both GELU forms (4 for the formula's roundings + the functions' error), and epilogue_bound's
    default must cover the precise functions."""
    import inspect

    from fpa_kernels.variants import CUDA_FAST_MATH_GELU_ULPS

    from fp_analysis.numerics.bounds import epilogue_bound

    path = ROOT / "experiments" / "results" / "gpu_validation.json"
    if not path.exists():
        pytest.skip("no GPU validation artifact committed yet")
    probe = json.loads(path.read_text())["fast_math_probe"]
    default = inspect.signature(epilogue_bound).parameters["gelu_eval_ulps"].default
    for form in ("gelu_erf", "gelu_tanh"):
        assert 4.0 + probe[form]["fast_max_err_over_u_v"] <= CUDA_FAST_MATH_GELU_ULPS
        assert 4.0 + probe[form]["precise_max_err_over_u_v"] <= default
