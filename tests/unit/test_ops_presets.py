"""Seed presets, KernelBench-protocol problems, reference modules and the GELU epilogue's constants."""

from __future__ import annotations

import dataclasses
import importlib
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import fp_analysis.ops as ops
from fp_analysis.errors import ParameterError, ShapeError
from fp_analysis.numerics.bounds import GELU_LIPSCHITZ
from fp_analysis.ops.conv import conv2d_spec, conv3d_kk1_spec
from fp_analysis.ops.epilogue import (
    EpilogueSpec,
    GeluForm,
    epilogue_torch,
    gelu_derivative_extremum,
    gelu_derivative_max,
    gelu_tanh_vs_erf_extremum,
    gelu_tanh_vs_erf_max,
)
from fp_analysis.ops.modules import ConvMultLeakyGelu, reference_module, torch_padding_arg
from fp_analysis.ops.presets import PRESETS, make_problem

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")

SMALL_SHAPES = {
    "dilated_conv2d": (1, 32, 11, 29),  # smallest odd sizes the (dilated 9×25) kernel fits, non-square
    "conv3d_kk1": (1, 3, 5, 7, 2),
    "conv_gelu": (1, 64, 5, 6),
}


def test_ops_all_lists_exactly_the_public_names():
    public = {name for name in dir(ops) if not name.startswith("_")}
    modules = {"conv", "epilogue", "modules", "presets", "reference", "terms", "annotations"}
    assert set(ops.__all__) == public - modules
    for name in ops.__all__:  # each name is the object its submodule defines, imported on first use
        defining = importlib.import_module(f"fp_analysis.ops.{ops._EXPORTS[name]}")
        assert getattr(ops, name) is getattr(defining, name), name


def test_presets_hold_the_seed_problems():
    dilated, kk1, gelu = PRESETS["dilated_conv2d"], PRESETS["conv3d_kk1"], PRESETS["conv_gelu"]
    assert dilated.spec == conv2d_spec(32, 64, (5, 9), padding=(2, 4), dilation=(2, 3), bias=False)
    assert dilated.input_shape == (8, 32, 512, 512)
    assert kk1.spec == conv3d_kk1_spec(3, 64, 3, bias=False) and kk1.spec.kernel_size == (3, 3, 1)
    assert kk1.input_shape == (16, 3, 256, 256, 10)
    assert gelu.spec == conv2d_spec(64, 64, 3) and gelu.spec.bias
    assert gelu.epilogue == EpilogueSpec(0.01, GeluForm.NONE) and gelu.multiplier_shape == (64, 1, 1)
    assert [p.spec.K for p in PRESETS.values()] == [32 * 45, 3 * 9, 64 * 9]


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_full_preset_output_shapes_match_torch_without_allocating(name):
    preset = PRESETS[name]
    module = reference_module(preset.spec, preset.epilogue, preset.multiplier_shape).to("meta")
    expected = module(torch.empty(preset.input_shape, device="meta")).shape
    assert preset.spec.output_shape(preset.input_shape) == tuple(expected)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_make_problem_follows_kernelbench_protocol(name):
    """Seed, build the module (conv init, then the multiplier's randn), then x = torch.rand(shape)."""
    preset = PRESETS[name]
    problem = make_problem(name, seed=3, input_shape=SMALL_SHAPES[name])

    torch.manual_seed(3)
    conv_cls = nn.Conv2d if preset.spec.spatial_dims == 2 else nn.Conv3d
    conv = conv_cls(
        preset.spec.in_channels,
        preset.spec.out_channels,
        preset.spec.kernel_size,
        padding=tuple(p for p, _ in preset.spec.padding),
        dilation=preset.spec.dilation,
        bias=preset.spec.bias,
    )
    multiplier = torch.randn(preset.multiplier_shape) if preset.multiplier_shape else None
    x = torch.rand(SMALL_SHAPES[name])

    assert torch.equal(problem.weight, conv.weight.detach())
    assert (problem.bias is None) == (conv.bias is None)
    if conv.bias is not None:
        assert torch.equal(problem.bias, conv.bias.detach())
    assert (problem.multiplier is None) == (multiplier is None)
    if multiplier is not None:
        assert torch.equal(problem.multiplier, multiplier)
    assert torch.equal(problem.x, x) and problem.x.dtype == torch.float32
    assert not problem.weight.requires_grad


def test_make_problem_is_reproducible_and_seed_sensitive():
    a = make_problem("conv3d_kk1", seed=0, input_shape=SMALL_SHAPES["conv3d_kk1"])
    b = make_problem("conv3d_kk1", seed=0, input_shape=SMALL_SHAPES["conv3d_kk1"])
    c = make_problem("conv3d_kk1", seed=1, input_shape=SMALL_SHAPES["conv3d_kk1"])
    assert torch.equal(a.x, b.x) and torch.equal(a.weight, b.weight)
    assert not torch.equal(a.weight, c.weight)


def test_make_problem_batch_overrides_n_only():
    small = dataclasses.replace(PRESETS["conv3d_kk1"], input_shape=(16, 3, 4, 5, 2))
    problem = make_problem(small, batch=2)
    assert problem.input_shape == (2, 3, 4, 5, 2) and problem.x.shape == (2, 3, 4, 5, 2)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(preset="conv4d"), ParameterError, "preset must be a Preset or one of"),
        (dict(preset="conv_gelu", seed=-1), ParameterError, r"seed must be an integer in \[0, 4294967295\]"),
        (dict(preset="conv_gelu", batch=0), ParameterError, "batch must be a positive integer"),
        (dict(preset="conv_gelu", batch=1, input_shape=(1, 64, 5, 5)), ParameterError, "not both"),
        (dict(preset="conv_gelu", input_shape=(1, 3, 5, 5)), ShapeError, "to have 64 channels"),
        (dict(preset="conv_gelu", input_shape=(1, 64, 2, 5)), ShapeError, "Kernel size can't be greater"),
        (dict(preset="conv_gelu", input_shape=(0, 64, 5, 5)), ParameterError, "batch size >= 1"),
    ],
)
def test_make_problem_validates(kwargs, error, match):
    with pytest.raises(error, match=match):
        make_problem(**kwargs)


def test_conv_gelu_module_equals_epilogue_torch_on_the_conv_output_bitwise():
    """The module and epilogue_torch run the same fp32 ops in the same order, so agree bit for bit."""
    problem = make_problem("conv_gelu", seed=0, input_shape=SMALL_SHAPES["conv_gelu"])
    with torch.no_grad():
        y = F.conv2d(problem.x, problem.weight, problem.bias)
        expected = problem.module(problem.x)
    assert isinstance(problem.module, ConvMultLeakyGelu)
    assert torch.equal(epilogue_torch(y, problem.multiplier, problem.epilogue), expected)


@pytest.mark.parametrize("form", list(GeluForm))
def test_epilogue_torch_applies_multiplier_then_leaky_then_gelu(form):
    spec = EpilogueSpec(negative_slope=0.2, approximate=form)
    y = torch.tensor([[[[-3.0, -0.5, 0.0, 2.0]]]], dtype=torch.float64)
    m = torch.tensor([[[-2.0]]], dtype=torch.float64)
    z = torch.tensor([6.0, 1.0, 0.0, -0.8], dtype=torch.float64)  # y·m, then slope 0.2 on the negative one
    expected = F.gelu(z, approximate=form.value).reshape(1, 1, 1, 4)
    assert torch.equal(epilogue_torch(y, m, spec), expected)


def test_reference_module_passes_same_for_asymmetric_padding():
    spec = conv2d_spec(2, 3, (4, 2), padding="same", dilation=(1, 3), bias=False)
    module = reference_module(spec)
    assert module.padding == "same" and module.bias is None
    assert torch_padding_arg(conv2d_spec(2, 3, 3, padding=(1, 2))) == (1, 2)
    x = torch.rand(1, 2, 7, 9)
    padded = F.pad(x, [p for pair in reversed(spec.padding) for p in pair])
    with torch.no_grad():
        assert torch.allclose(module(x), F.conv2d(padded, module.weight, dilation=(1, 3)), atol=1e-6)


def test_reference_module_refuses_padding_torch_cannot_express():
    spec = ops.ConvSpec(2, 3, (3, 3), (1, 1), ((0, 1), (1, 1)), (1, 1))
    with pytest.raises(ParameterError, match="cannot express it"):
        reference_module(spec)


def test_reference_module_validates_epilogue_arguments():
    spec = conv2d_spec(4, 6, 3)
    with pytest.raises(ParameterError, match="multiplier_shape was given without an epilogue"):
        reference_module(spec, multiplier_shape=(6, 1, 1))
    with pytest.raises(ParameterError, match="multiplier_shape is required"):
        reference_module(spec, EpilogueSpec())
    with pytest.raises(ParameterError, match=r"multiplier_shape must be \(6, 1, 1\)"):
        reference_module(spec, EpilogueSpec(), multiplier_shape=(6,))
    module = reference_module(spec, EpilogueSpec(0.1, "tanh"), (6, 1, 1))
    assert module.leaky_relu.negative_slope == 0.1 and module.gelu.approximate == "tanh"
    assert isinstance(reference_module(conv3d_kk1_spec(2, 2, 3)), nn.Conv3d)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(negative_slope=float("nan")), "negative_slope must be a finite real number"),
        (dict(negative_slope="0.01"), "negative_slope must be a finite real number"),
        (dict(negative_slope=True), "negative_slope must be a finite real number"),
        (dict(approximate="erf"), "approximate must be one of 'none', 'tanh'"),
    ],
)
def test_epilogue_spec_validates(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        EpilogueSpec(**kwargs)


def test_gelu_derivative_max_is_at_sqrt2_and_above_a_dense_scan():
    """GELU′ = Φ + xφ peaks where GELU″ = φ·(2 − x²) = 0, i.e. at √2, at Φ(√2) + √2·φ(√2) ≈ 1.12890."""
    x_star, value = gelu_derivative_extremum()
    assert x_star == pytest.approx(math.sqrt(2.0), abs=1e-15)
    grid = np.linspace(-10, 10, 200_001)
    phi = np.exp(-(grid**2) / 2) / math.sqrt(2 * math.pi)
    cdf = 0.5 * (1 + torch.special.erf(torch.from_numpy(grid / math.sqrt(2))).numpy())
    scan_max = (cdf + grid * phi).max()
    assert scan_max <= value + 1e-15 and value - scan_max < 1e-9
    assert gelu_derivative_max() == value == pytest.approx(1.1289, abs=1e-4)
    assert GELU_LIPSCHITZ == pytest.approx(value, rel=4e-16)  # the bounds' closed form: the same maximum


def test_gelu_tanh_vs_erf_max_refines_the_scan():
    """The two GELU forms differ by at most ≈ 4.73e-4 (at |x| ≈ 2.70); the refined max tops the scan."""
    x_star, value = gelu_tanh_vs_erf_extremum()
    x = torch.linspace(-12, 12, 240_001, dtype=torch.float64)
    scan = (F.gelu(x, approximate="tanh") - F.gelu(x)).abs()
    assert float(scan.max()) <= value + 1e-15
    assert value - float(scan.max()) < 1e-10  # grid step 1e-4: the scan misses the peak by O(h²)
    assert abs(x_star - float(x[scan.argmax()].abs())) < 1e-3
    assert gelu_tanh_vs_erf_max() == value == pytest.approx(4.732e-4, abs=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PRESETS))
def test_full_size_presets_construct(name):
    problem = make_problem(name)
    assert problem.x.shape == PRESETS[name].input_shape
