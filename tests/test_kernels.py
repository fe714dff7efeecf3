"""Kernel variants: spec validation, the build of every variant (nvcc, no GPU), twins, launch-time checks.

GPU tests (marked ``gpu``) run each variant against its twin; experiments/gpu_validation.py runs the
full matrix on the device and writes experiments/results/gpu_validation.json.
"""

from __future__ import annotations

import json
import pathlib
import subprocess

import numpy as np
import pytest
import torch
from fpa_kernels import (
    GeluImpl,
    Op,
    TensorCore,
    VariantSpec,
    all_output_indices,
    build_all,
    find_nvcc,
    generated_header,
    run_variant,
    twin,
    variant_matrix,
)

from fp_analysis.bounds import dot_bound
from fp_analysis.errors import DtypeError, ParameterError, ShapeError
from fp_analysis.ops.conv import conv2d_spec, conv3d_kk1_spec, gather_terms
from fp_analysis.orders import AccumulationSpec

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_variant_is_distinct_and_labelled():
    for op in Op:
        matrix = variant_matrix(op)
        assert len(matrix) >= 30
        assert len({v.label for v in matrix}) == len(matrix)
        assert len({(repr(sorted(v.defines().items())), tuple(v.nvcc_flags()), v.source) for v in matrix}) == len(
            matrix
        )


@pytest.mark.skipif(find_nvcc() is None, reason="no CUDA compiler (nvcc) on this machine: the build check is skipped")
def test_every_variant_compiles_for_sm90(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_KERNEL_CACHE", str(tmp_path))
    everything = [v for op in Op for v in variant_matrix(op)]
    paths = build_all(everything)
    assert len(paths) == len(everything)
    for path in set(paths.values()):
        assert path.stat().st_size > 1000 and path.read_bytes()[:4] == b"\x7fELF"  # a cubin is an ELF image


def test_generated_header_carries_the_gelu_tables():
    header = generated_header()
    assert "fpa_erf_coeffs[16][8]" in header and "fpa_tanh_coeffs[38][8]" in header
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
    spec = (
        conv3d_kk1_spec(4, 6, (3, 2, 1), stride=(1, 2, 2), padding=(1, 0, 1), groups=2)
        if op is Op.CONV3D_KK1
        else conv2d_spec(4, 6, (3, 2), stride=(2, 1), padding="valid", groups=2)
    )
    shape = (2, 4, 7, 9, 5) if op is Op.CONV3D_KK1 else (2, 4, 7, 9)
    gen = torch.Generator().manual_seed(0)
    x, w, b = torch.rand(shape, generator=gen), torch.randn(spec.weight_shape, generator=gen), torch.randn(6)
    terms = gather_terms(spec, x, w, b, all_output_indices(spec.output_shape(shape)))
    exact = (terms.w.astype(np.float64) * terms.x).sum(axis=1) + terms.bias
    for variant in variant_matrix(Op.CONV2D if op is Op.CONV_GELU else op):
        if not variant.twinned:
            continue
        got = twin(variant, spec, x, w, b).reshape(-1)
        bound = dot_bound(terms.w, terms.x, variant.twin_accumulation(), terms.bias).deterministic
        assert np.all(np.abs(got - exact) <= bound * (1 + 1e-9) + 1e-12), variant.label


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


@pytest.mark.gpu
@pytest.mark.parametrize("op", list(Op))
def test_kernels_equal_their_twins_on_the_gpu(op):
    spec = (
        conv3d_kk1_spec(4, 6, (3, 2, 1), stride=(1, 2, 2), padding=(1, 0, 1), groups=2)
        if op is Op.CONV3D_KK1
        else conv2d_spec(4, 6, (3, 2), stride=(2, 1), padding=1, groups=2, bias=True)
    )
    shape = (2, 4, 7, 9, 5) if op is Op.CONV3D_KK1 else (3, 4, 11, 9)
    x, w = torch.rand(shape), torch.randn(spec.weight_shape)
    b = torch.randn(6) if spec.bias else None
    m = torch.randn(6, 1, 1) if op is Op.CONV_GELU else None
    cuda = [t.cuda() if t is not None else None for t in (x, w, b, m)]
    for variant in variant_matrix(op):
        if variant.twinned:
            got = run_variant(variant, spec, *cuda).cpu().numpy()
            assert np.array_equal(got.view(np.uint32), twin(variant, spec, x, w, b, m).view(np.uint32)), variant.label


def test_committed_gpu_artifact_describes_committed_kernels():
    """If a validation artifact is committed, it must validate the kernels in this tree and say it passed."""
    path = ROOT / "experiments" / "results" / "gpu_validation.json"
    if not path.exists():
        pytest.skip("no GPU validation artifact committed yet")
    data = json.loads(path.read_text())
    git = subprocess.run(["git", "rev-parse", "HEAD:kernels"], capture_output=True, text=True, cwd=ROOT)
    tree = git.stdout.strip()
    if git.returncode == 0 and len(tree) == 40:  # in a git checkout: it must have validated the committed kernels/
        recorded = data["environment"]["kernels_tree"]
        assert recorded == tree, f"kernels/ is {tree} but the GPU validation ran on {recorded}: re-run it"

    summary = data["summary"]
    assert summary["twinned_bitwise_equal"] == summary["twinned_records"]
    assert all(n >= 50 for n in summary["configs_per_op"].values())
    assert summary["all_within_bound"] and summary["all_written"] and summary["sanitizer_clean"]
    assert data["seed000_full"]["twin_bitwise_equal_on_2000_samples"]
