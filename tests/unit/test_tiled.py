"""The tiled kernels without a GPU: which variants exist, the term table against the gather the twins
use, the padded-input layout, the fast fp64 reference's argument checks, which kernel takes which conv.
Their builds are in process/test_kernel_builds.py; on a GPU, gpu/test_tiled.py runs every tiled kernel
against its twin or its bound.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from fpa_kernels import (
    Op,
    Schedule,
    TensorCore,
    VariantSpec,
    general_kernel,
    tiled_variants,
    variant_build,
    variant_matrix,
)
from fpa_kernels.general import term_table
from fpa_kernels.launch import padded_input_shape
from fpa_kernels.reference import conv_fp64

from fp_analysis.errors import DtypeError, ParameterError, ShapeError
from fp_analysis.numerics.orders import AccumulationSpec, Order
from fp_analysis.ops.conv import ConvSpec, conv2d_spec, conv3d_kk1_spec
from fp_analysis.ops.terms import gather_terms, sample_output_indices

from ..tiled_cases import CASES


def test_tiled_variants_are_in_the_matrix_with_twins_where_expected():
    for op in Op:
        tiled = tiled_variants(op)
        assert set(tiled) <= set(variant_matrix(op))
        assert all(v.schedule is Schedule.TILED and " tiled" in v.label for v in tiled)
        for v in tiled:
            assert v.twinned == (v.tensor_core is TensorCore.NONE)
            assert general_kernel(v).name == ("conv_tiled" if v.tensor_core is TensorCore.NONE else "conv_mma_tiled")
    assert {v.tensor_core for v in tiled_variants("conv2d")} == set(TensorCore)


def test_a_tiled_variant_has_the_same_twin_as_its_direct_counterpart():
    direct = VariantSpec("conv2d", AccumulationSpec(Order.FP64), fast_math=True)
    tiled = VariantSpec("conv2d", AccumulationSpec(Order.FP64), fast_math=True, schedule="tiled")
    assert tiled.twin_accumulation() == direct.twin_accumulation() and tiled.term_order is direct.term_order
    assert tiled.defines() == direct.defines()  # the same arithmetic; only the source file differs


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(accumulation=AccumulationSpec(Order.KAHAN)), "'sequential' and 'fp64' orders"),
        (dict(accumulation=AccumulationSpec(Order.SPLIT_K, splits=4)), "'sequential' and 'fp64' orders"),
        (dict(term_order="tap_outer"), "input channel outermost"),
        (dict(schedule="blocked"), "schedule='blocked'"),
    ],
)
def test_tiled_spec_rejects_what_the_tiled_kernels_cannot_do(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        VariantSpec("conv2d", **{"schedule": "tiled", **kwargs})


@pytest.mark.parametrize(("spec", "shape"), CASES)
def test_term_table_addresses_the_inputs_the_twins_gather(spec, shape):
    """x_padded[corner(pixel, group) + table[k]] is term k's input of that output, for every k."""
    gen = torch.Generator().manual_seed(1)
    x = torch.rand(shape, generator=gen) + 0.5  # no zeros: a wrong address cannot hide in the padding
    w = torch.rand(spec.weight_shape, generator=gen)
    padded = padded_input_shape(spec, shape)
    pads = [p for before, after in reversed(spec.padding) for p in (before, after)]
    flat = F.pad(x, pads).reshape(-1).numpy()
    assert tuple(F.pad(x, pads).shape) == padded
    table = term_table(spec, padded).numpy()
    K = spec.K
    assert table.shape[0] % 16 == 0 and table.shape[0] >= K and not table[K:].any()
    out_shape = spec.output_shape(shape)
    index = sample_output_indices(out_shape, 60, 2)
    terms = gather_terms(spec, x, w, torch.zeros(spec.out_channels) if spec.bias else None, index)
    d = list(padded[2:]) + [1] * (5 - len(padded))
    stride = list(spec.stride) + [1] * (3 - len(spec.stride))
    cg, og = spec.in_channels // spec.groups, spec.out_channels // spec.groups
    for row, (n, o, *z) in enumerate(index):
        z = list(z) + [0] * (3 - len(z))
        g = o // og
        corner = ((n * spec.in_channels + g * cg) * d[0] * d[1] * d[2]) + (
            (z[0] * stride[0] * d[1] + z[1] * stride[1]) * d[2] + z[2] * stride[2]
        )
        np.testing.assert_array_equal(flat[corner + table[:K]], terms.x[row])


def test_term_table_refuses_what_the_kernels_cannot_address():
    deep = ConvSpec(2, 2, (3, 3, 2), (1, 1, 1), ((0, 0),) * 3, (1, 1, 1))  # a kernel two deep
    with pytest.raises(ShapeError, match=r"\(kh, kw, 1\)"):
        term_table(deep, (1, 2, 9, 9, 9))
    with pytest.raises(ShapeError, match="32-bit offsets"):
        term_table(conv2d_spec(64, 1, 1), (1, 64, 8192, 8192))


def test_fast_fp64_reference_checks_its_arguments_first():
    spec = conv2d_spec(3, 4, 3, bias=True)
    x, w, b = torch.rand(1, 3, 6, 6), torch.rand(4, 3, 3, 3), torch.rand(4)
    with pytest.raises(ParameterError, match="bias=True but bias is None"):
        conv_fp64(spec, x, w)
    with pytest.raises(ShapeError, match=r"weight must have shape \[4, 3, 3, 3\]"):
        conv_fp64(spec, x, w[:, :2], b)
    with pytest.raises(DtypeError, match="x must be float32"):
        conv_fp64(spec, x.double(), w, b)
    with pytest.raises(ParameterError, match="bias=False but a bias tensor"):
        conv_fp64(conv2d_spec(3, 4, 3, bias=False), x, w, b)
    with pytest.raises(DtypeError, match="x must be on a CUDA device"):
        conv_fp64(spec, x, w, b)


SEED = conv2d_spec(32, 64, (5, 9), padding=(2, 4), dilation=(2, 3), bias=False)


TILED = VariantSpec("conv2d", schedule="tiled")
TF32_OPERANDS = VariantSpec("conv2d", AccumulationSpec(operand_rounding="tf32"), schedule="tiled")
SEPARATE = VariantSpec("conv2d", AccumulationSpec(contraction="separate"), schedule="tiled")
TF32X3 = VariantSpec("conv2d", tensor_core="3xtf32", schedule="tiled")
TF32 = VariantSpec("conv2d", tensor_core="tf32_mma", schedule="tiled")


@pytest.mark.parametrize(
    ("variant", "spec", "kernels"),
    [
        (TILED, SEED, ["conv_rows", "conv_tiled"]),
        (TF32_OPERANDS, SEED, ["conv_rows", "conv_tiled"]),
        (SEPARATE, SEED, ["conv_rows", "conv_tiled"]),
        (VariantSpec("conv2d", AccumulationSpec(Order.FP64), schedule="tiled"), SEED, ["conv_tiled"]),
        (VariantSpec("conv_gelu", schedule="tiled"), conv2d_spec(64, 64, 3), ["conv_rows", "conv_tiled"]),
        (TILED, conv2d_spec(4, 4, 3, stride=(1, 2)), ["conv_tiled"]),
        (TILED, conv2d_spec(4, 4, (3, 9), dilation=(1, 6)), ["conv_tiled"]),
        (VariantSpec("conv3d_kk1", schedule="tiled"), conv3d_kk1_spec(3, 5, (3, 3, 1)), ["conv_tiled"]),
        (TF32X3, SEED, ["conv_wgmma", "conv_mma_tiled"]),
        (TF32, conv2d_spec(4, 4, 3, groups=2), ["conv_mma_tiled"]),
    ],
)
def test_tiled_kernels_lists_what_takes_the_conv_fastest_first(variant, spec, kernels):
    from fpa_kernels import tiled_kernel, tiled_kernels

    assert tiled_kernels(variant, spec) == kernels and tiled_kernel(variant, spec) == kernels[0]


def test_the_fast_kernels_say_why_they_refuse_a_conv():
    from fpa_kernels.rows import rows_unsupported
    from fpa_kernels.wgmma import wgmma_unsupported

    plain, tc = VariantSpec("conv2d", schedule="tiled"), VariantSpec("conv2d", tensor_core="3xtf32", schedule="tiled")
    assert "stride 1 along W" in rows_unsupported(plain, conv2d_spec(4, 4, 3, stride=(1, 2)))
    assert "register window" in rows_unsupported(plain, conv2d_spec(4, 4, (3, 9), dilation=(1, 6)))
    assert "2-d" in rows_unsupported(VariantSpec("conv3d_kk1", schedule="tiled"), conv3d_kk1_spec(3, 5, (3, 3, 1)))
    assert "sequential order" in rows_unsupported(VariantSpec("conv2d", AccumulationSpec(Order.FP64)), SEED)
    assert rows_unsupported(plain, SEED) is None and wgmma_unsupported(tc, SEED) is None
    assert "one group" in wgmma_unsupported(tc, conv2d_spec(4, 4, 3, groups=2))
    assert "stride 1 along W" in wgmma_unsupported(tc, conv2d_spec(4, 4, 3, stride=(1, 2)))
    assert "shared memory" in wgmma_unsupported(tc, conv2d_spec(64, 8, (1, 200), dilation=(1, 8)))
    assert "tensor-core kernel" in wgmma_unsupported(plain, SEED)


@pytest.mark.parametrize(
    ("spec", "shape"),
    [
        (conv3d_kk1_spec(3, 5, (3, 3, 1), padding=(1, 1, 0), dilation=(1, 2, 1)), (2, 3, 6, 9, 4)),
        (conv3d_kk1_spec(4, 6, (2, 3, 1), stride=(2, 1, 1), padding=(1, 2, 0), groups=2), (1, 4, 7, 5, 3)),
        (conv3d_kk1_spec(2, 3, 3, padding="same", dilation=(2, 1, 3)), (1, 2, 5, 6, 2)),  # 'same': no D padding
    ],
)
def test_a_kk1_conv3d_is_the_2d_conv_of_its_flattened_view_bit_for_bit(spec, shape):
    """rows_view's claim, on the CPU twins: the (N, C, H, W·D) view's 2-d conv has the 3-d conv's terms in the
    same order, so its fp32 chain gives the same bits at every output."""
    from fpa_kernels import twin
    from fpa_kernels.rows import rows_unsupported, rows_view

    gen = torch.Generator().manual_seed(2)
    x, w = torch.randn(shape, generator=gen), torch.randn(spec.weight_shape, generator=gen)
    b = torch.randn(spec.out_channels, generator=gen) if spec.bias else None
    view = rows_view(spec, shape)
    n, c, h, width, depth = shape
    flat = twin(VariantSpec("conv2d"), view, x.reshape(n, c, h, width * depth), w.reshape(*w.shape[:4]), b)
    direct = twin(VariantSpec("conv3d_kk1"), spec, x, w, b)
    assert flat.shape == (*direct.shape[:3], direct.shape[3] * direct.shape[4])
    assert np.array_equal(flat.reshape(direct.shape).view(np.uint32), direct.view(np.uint32))
    assert rows_unsupported(VariantSpec("conv3d_kk1", schedule="tiled"), spec, shape) is None


def test_conv_rows_takes_a_kk1_conv3d_only_with_its_shape_and_a_view_it_can_run():
    from fpa_kernels import tiled_kernels
    from fpa_kernels.rows import rows_unsupported

    tiled = VariantSpec("conv3d_kk1", schedule="tiled")
    spec = conv3d_kk1_spec(3, 64, 3, bias=False)  # the conv3d preset's spec
    assert tiled_kernels(tiled, spec, (16, 3, 256, 256, 10)) == ["conv_rows", "conv_lanes", "conv_tiled"]
    assert tiled_kernels(tiled, spec) == ["conv_tiled"]
    assert "input's (N, C, H, W, D) shape" in rows_unsupported(tiled, spec)
    too_deep = rows_unsupported(tiled, spec, (1, 3, 8, 8, 21))  # reach (3 − 1)·1·21 = 42
    assert "dilation[1] * D exceeds the 40 inputs" in too_deep
    strided = conv3d_kk1_spec(3, 4, 3, stride=(1, 1, 2))
    assert "stride 1 along W and D" in rows_unsupported(tiled, strided, (1, 3, 8, 8, 4))
    assert "no padding along D" in rows_unsupported(tiled, conv3d_kk1_spec(3, 4, 3, padding=1), (1, 3, 8, 8, 4))


def test_row_units_runs_a_block_on_into_the_next_row_only_where_a_row_holds_a_block():
    from fpa_kernels.rows import row_units

    assert row_units(496, 16, 16) == 31  # the seed: 31 groups, the last one the only one past the row's end
    assert row_units(256, 16, 16) == 16 and row_units(241, 16, 16) == 16
    assert row_units(240, 16, 16) == 16  # 15 groups: one block per row, its 16th group idle
    assert row_units(7, 16, 16) == 16 and row_units(300, 8, 16) == 38
    with pytest.raises(ParameterError, match="out_width, tpx and groups must be ≥ 1"):
        row_units(0, 16, 16)


def test_run_variant_checks_the_kernel_it_is_asked_for_first():
    from fpa_kernels import run_variant

    x, w = torch.rand(1, 32, 20, 40), torch.rand(64, 32, 5, 9)
    with pytest.raises(ParameterError, match=r"allow only \['conv_rows', 'conv_tiled'\]"):
        run_variant(VariantSpec("conv2d", schedule="tiled"), SEED, x, w, kernel="conv_wgmma")
    with pytest.raises(ParameterError, match="kernel= applies to tiled variants only"):
        run_variant(VariantSpec("conv2d"), SEED, x, w, kernel="conv_tiled")


def test_variant_runs_names_every_kernel_and_variant_build_its_cubin():
    from fpa_kernels import variant_runs

    runs = variant_runs([VariantSpec("conv2d"), *tiled_variants("conv2d")], SEED)
    labels = {label: kernel for label, _, kernel in runs}
    assert labels["sequential/fma/none"] is None
    assert labels["sequential/fma/none tiled"] == "conv_rows"
    assert labels["sequential/fma/none tiled [conv_tiled]"] == "conv_tiled"
    assert labels["3xtf32 tiled"] == "conv_wgmma" and labels["3xtf32 tiled [conv_mma_tiled]"] == "conv_mma_tiled"
    assert len(labels) == len(runs)
    build = variant_build(VariantSpec("conv2d", schedule="tiled"), SEED, "conv_rows")
    defines = dict(build.defines)
    assert (build.source, defines["FPA_ROWS_KW"], defines["FPA_ROWS_DW"], build.arch) == ("conv_rows.cu", 9, 3, "sm_90")
    build = variant_build(VariantSpec("conv2d", tensor_core="3xtf32", schedule="tiled"), SEED, "conv_wgmma")
    assert (build.source, dict(build.defines), build.arch) == (
        "conv_wgmma.cu",
        {"FPA_TC_SPLIT": 3, "FPA_WG_CK": 32},
        "sm_90a",
    )
    build = variant_build(
        VariantSpec("conv2d", tensor_core="tf32_mma", schedule="tiled"), conv2d_spec(3, 4, 3), "conv_wgmma"
    )
    assert dict(build.defines)["FPA_WG_CK"] == 8  # 3 channels: one K step of 8, five of them zeros
    with pytest.raises(ParameterError, match="conv_wgmma cannot run 'sequential/fma/none tiled'"):
        variant_build(VariantSpec("conv2d", schedule="tiled"), SEED, "conv_wgmma")
    with pytest.raises(ParameterError, match="Got kernel='conv_fast'"):
        variant_build(VariantSpec("conv2d"), SEED, "conv_fast")


def test_conv_lanes_takes_few_terms_per_output_and_says_why_not_otherwise():
    """conv_lanes.cu takes what conv_rows.cu takes (stride 1 along W of the 2-d view, a reach of 40) with K ≤ 32: it
    stages every term of a block at once. The same order as conv_rows, so it comes after it until the device says
    it is faster (PERF_NOTES.md)."""
    from fpa_kernels import tiled_kernels
    from fpa_kernels.lanes import lanes_defines, lanes_unsupported

    tiled = VariantSpec("conv2d", schedule="tiled")
    small = conv2d_spec(3, 80, 3, padding=1)  # K = 27, two 64-channel tiles
    assert tiled_kernels(tiled, small, (1, 3, 9, 70)) == ["conv_rows", "conv_lanes", "conv_tiled"]
    assert "K ≤ 32 terms per output, got 36" in lanes_unsupported(tiled, conv2d_spec(4, 8, 3), (1, 4, 9, 9))
    assert "stride 1 along W" in lanes_unsupported(tiled, conv2d_spec(3, 8, 3, stride=2), (1, 3, 9, 9))
    wide = conv2d_spec(1, 8, (1, 5), dilation=(1, 30))  # what conv_rows refuses, it refuses
    assert "exceeds the 40 inputs" in lanes_unsupported(tiled, wide, (1, 1, 1, 300))
    assert "sequential order on the CUDA cores" in lanes_unsupported(VariantSpec("conv2d", tensor_core="tf32_mma",
                                                                                 schedule="tiled"), small)  # fmt: skip
    spec = conv3d_kk1_spec(3, 64, 3, bias=False)  # the conv3d preset: its view's taps are D = 10 inputs apart
    defines = lanes_defines(VariantSpec("conv3d_kk1", schedule="tiled"), spec, (16, 3, 256, 256, 10))
    assert (defines["FPA_LANES_KW"], defines["FPA_LANES_DW"]) == (3, 10)
