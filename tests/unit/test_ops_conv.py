"""ConvSpec validation and shapes against PyTorch, and gathered terms against torch's own convolution."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given
from hypothesis import strategies as st

from fp_analysis.errors import DtypeError, FpaError, ParameterError, ShapeError
from fp_analysis.ops.conv import (
    ConvGeometry,
    ConvSpec,
    conv2d_spec,
    conv3d_kk1_spec,
    conv_spec,
    conv_transpose1d_spec,
    conv_transpose2d_spec,
)
from fp_analysis.ops.reference import abs_dot_at, fp64_at
from fp_analysis.ops.terms import TermOrder, gather_terms, sample_output_indices, term_permutation

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")

# (constructor, args, input shape). Awkward on purpose: primes, 1s, non-square, depthwise, asymmetric 'same'.
CONFIGS = [
    ("2d", dict(in_channels=3, out_channels=5, kernel_size=3), (2, 3, 7, 11)),
    ("2d", dict(in_channels=4, out_channels=6, kernel_size=(2, 5), stride=(2, 3), padding=(1, 2)), (1, 4, 13, 17)),
    (
        "2d",
        dict(in_channels=6, out_channels=4, kernel_size=(4, 3), padding="same", dilation=(1, 2), groups=2),
        (2, 6, 9, 10),
    ),
    ("2d", dict(in_channels=5, out_channels=5, kernel_size=(2, 2), padding="same", groups=5), (3, 5, 5, 7)),
    ("2d", dict(in_channels=5, out_channels=10, kernel_size=3, padding=1, groups=5, bias=False), (1, 5, 1, 9)),
    (
        "2d",
        dict(in_channels=7, out_channels=3, kernel_size=(5, 9), padding=(2, 4), dilation=(2, 3), bias=False),
        (1, 7, 19, 31),
    ),
    ("2d", dict(in_channels=2, out_channels=3, kernel_size=(1, 1), stride=(3, 2)), (2, 2, 8, 5)),
    ("2d", dict(in_channels=3, out_channels=2, kernel_size=(3, 2), padding="valid", dilation=(3, 1)), (1, 3, 11, 4)),
    ("2d", dict(in_channels=1, out_channels=1, kernel_size=(6, 1), padding="same", dilation=(3, 1)), (1, 1, 2, 3)),
    (
        "2d",
        dict(in_channels=8, out_channels=12, kernel_size=3, stride=2, padding=3, dilation=2, groups=4),
        (2, 8, 10, 13),
    ),
    ("3d", dict(in_channels=3, out_channels=4, kernel_size=3), (2, 3, 7, 9, 5)),
    ("3d", dict(in_channels=4, out_channels=6, kernel_size=(2, 3, 1), padding="same", groups=2), (1, 4, 6, 5, 3)),
    (
        "3d",
        dict(in_channels=3, out_channels=5, kernel_size=(3, 2, 1), stride=(2, 1, 3), padding=(1, 0, 2), bias=False),
        (1, 3, 9, 7, 11),
    ),
    (
        "3d",
        dict(in_channels=2, out_channels=2, kernel_size=3, dilation=(2, 1, 4), padding=(2, 1, 1), groups=2),
        (2, 2, 7, 5, 2),
    ),
]


def _builder(kind: str):
    return conv2d_spec if kind == "2d" else conv3d_kk1_spec


def _torch_conv(kind: str, args: dict, x, w, b):
    conv = F.conv2d if kind == "2d" else F.conv3d
    return conv(
        x,
        w,
        b,
        stride=args.get("stride", 1),
        padding=args.get("padding", 0),
        dilation=args.get("dilation", 1),
        groups=args.get("groups", 1),
    )


def _random_operands(spec: ConvSpec, input_shape, seed: int):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(input_shape, generator=gen)
    w = torch.randn(spec.weight_shape, generator=gen)
    b = torch.randn(spec.out_channels, generator=gen) if spec.bias else None
    return x, w, b


@pytest.mark.parametrize(("kind", "args", "input_shape"), CONFIGS)
def test_output_shape_matches_torch(kind, args, input_shape):
    spec = _builder(kind)(**args)
    x, w, b = _random_operands(spec, input_shape, 0)
    expected = _torch_conv(kind, args, x, w, b).shape
    assert spec.output_shape(input_shape) == tuple(expected)


@pytest.mark.parametrize(("kind", "args", "input_shape"), CONFIGS)
def test_gathered_terms_sum_to_torch_fp64_conv(kind, args, input_shape):
    """Σ w·x (+b) in fp64 over the gathered terms equals torch's fp64 conv to ~1e-12 on sampled outputs.

    Both sides add exact fp64 products of the same fp32 values, so they differ only by fp64 summation
    order: ≤ γ_K(fp64)·Σ|w·x| ≈ 1e-14 for these K; a wrong index would miss by O(1).
    """
    spec = _builder(kind)(**args)
    x, w, b = _random_operands(spec, input_shape, 1)
    expected = _torch_conv(kind, args, x.double(), w.double(), None if b is None else b.double()).numpy()
    index = sample_output_indices(expected.shape, 40, seed=2)
    terms = gather_terms(spec, x, w, b, index)

    assert terms.w.shape == terms.x.shape == (len(index), spec.K)
    assert terms.w.dtype == terms.x.dtype == np.float32
    values = (terms.w.astype(np.float64) * terms.x).sum(axis=1)
    if b is not None:
        values += terms.bias
    np.testing.assert_allclose(values, expected[tuple(index.T)], rtol=0, atol=1e-12)
    # row m of w is weight[o] flattened, bit for bit
    np.testing.assert_array_equal(terms.w, w.numpy().reshape(spec.out_channels, -1)[index[:, 1]])


@pytest.mark.parametrize(("kind", "args", "input_shape"), [c for c in CONFIGS if c[0] == "2d"])
def test_gathered_inputs_equal_unfold_columns_bitwise(kind, args, input_shape):
    """x terms equal torch's im2col (F.unfold) columns exactly: same K order, zeros in the padding."""
    spec = conv2d_spec(**args)
    x, w, b = _random_operands(spec, input_shape, 3)
    out_shape = spec.output_shape(input_shape)
    padded = F.pad(x, [p for pair in reversed(spec.padding) for p in pair])  # unfold pads symmetrically only
    columns = F.unfold(padded, spec.kernel_size, dilation=spec.dilation, stride=spec.stride)
    index = sample_output_indices(out_shape, 10**6, seed=0)  # every output
    terms = gather_terms(spec, x, w, b, index)

    n, o, i, j = index.T
    group = o // spec.out_channels_per_group
    cin_g = spec.in_channels_per_group
    columns = columns.numpy().reshape(out_shape[0], spec.in_channels, spec.taps, -1)
    position = i * out_shape[3] + j
    channel = group[:, None] * cin_g + np.arange(cin_g)[None, :]
    expected = columns[n[:, None], channel, :, position[:, None]].reshape(len(index), spec.K)
    np.testing.assert_array_equal(terms.x, expected)


def test_gather_terms_accepts_numpy_and_torch_alike():
    spec = conv2d_spec(3, 4, (3, 2), padding=1)
    x, w, b = _random_operands(spec, (2, 3, 5, 7), 4)
    index = sample_output_indices(spec.output_shape(x.shape), 13, seed=1)
    from_torch = gather_terms(spec, x, w, b, torch.from_numpy(index))
    from_numpy = gather_terms(spec, x.numpy(), w.numpy(), b.numpy(), index)
    for field in ("w", "x", "bias", "index"):
        np.testing.assert_array_equal(getattr(from_torch, field), getattr(from_numpy, field))


def test_padding_terms_are_zero_at_the_corner():
    spec = conv2d_spec(1, 1, 3, padding=1, bias=False)
    x = torch.arange(1, 10, dtype=torch.float32).reshape(1, 1, 3, 3)
    w = torch.ones(1, 1, 3, 3)
    terms = gather_terms(spec, x, w, None, np.array([[0, 0, 0, 0]]))
    # Top-left output: the window's first row and column fall in the padding.
    np.testing.assert_array_equal(terms.x[0], [0, 0, 0, 0, 1, 2, 0, 4, 5])
    assert terms.bias is None


# ----------------------------------------------------------------------------------------------
# Validation: our errors where torch errs, with the parameter named
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(in_channels=4, out_channels=8, kernel_size=3, groups=0), "groups must be a positive integer, got 0"),
        (dict(in_channels=4, out_channels=8, kernel_size=3, groups=3), "in_channels must be divisible by groups"),
        (dict(in_channels=4, out_channels=9, kernel_size=3, groups=2), "out_channels must be divisible by groups"),
        (dict(in_channels=4, out_channels=8, kernel_size=3, padding=-1), "padding must be .*>= 0"),
        (dict(in_channels=4, out_channels=8, kernel_size=3, padding="full"), "Invalid padding string 'full'"),
        (
            dict(in_channels=4, out_channels=8, kernel_size=3, padding="same", stride=2),
            "padding='same' is not supported",
        ),
        (dict(in_channels=0, out_channels=8, kernel_size=3), "in_channels must be a positive integer, got 0"),
        (dict(in_channels=4, out_channels=-1, kernel_size=3), "out_channels must be a positive integer"),
        (dict(in_channels=4, out_channels=8, kernel_size=0), "kernel_size must be .* >= 1"),
        (dict(in_channels=4, out_channels=8, kernel_size=(3, 3, 3)), "kernel_size must be .*3 entries"),
        (dict(in_channels=4, out_channels=8, kernel_size=3, stride=0), "stride must be"),
        (dict(in_channels=4, out_channels=8, kernel_size=3, dilation=(1, 0)), "dilation must be"),
        (dict(in_channels=4, out_channels=8, kernel_size=3, padding=(1, 2, 3)), "padding must be .*3 entries"),
        (dict(in_channels=4, out_channels=8, kernel_size=3, padding=1.5), "padding must be .*float"),
        (dict(in_channels=4, out_channels=8, kernel_size=3.0), "kernel_size must be"),
        (dict(in_channels=4.0, out_channels=8, kernel_size=3), "in_channels must be a positive integer"),
        (dict(in_channels=4, out_channels=8, kernel_size=True), "kernel_size must be"),
        (dict(in_channels=4, out_channels=8, kernel_size=3, bias="yes"), "bias must be a bool"),
    ],
)
def test_conv2d_spec_rejects_bad_parameters(kwargs, match):
    # Out-of-range sizes raise ShapeError (a RuntimeError, as torch raises at the call); the rest ParameterError.
    with pytest.raises((ParameterError, ShapeError), match=match):
        conv2d_spec(**kwargs)


@pytest.mark.parametrize(
    ("kernel_size", "match"),
    [((3, 3, 2), "last entry is 1"), ((3, 3), "last entry is 1"), ("3", "kernel_size must be"), (0, "positive")],
)
def test_conv3d_kk1_spec_rejects_kernels_not_ending_in_1(kernel_size, match):
    with pytest.raises(ParameterError, match=match):
        conv3d_kk1_spec(3, 4, kernel_size)


def test_conv3d_kk1_spec_expands_int_and_allows_depth_padding_and_stride():
    spec = conv3d_kk1_spec(3, 4, 5, stride=(1, 2, 3), padding=(0, 1, 2))
    assert spec.kernel_size == (5, 5, 1)
    assert spec.padding == ((0, 0), (1, 1), (2, 2))
    assert spec.K == 3 * 25
    x = torch.rand(1, 3, 6, 7, 8)
    expected = F.conv3d(x, torch.rand(4, 3, 5, 5, 1), stride=(1, 2, 3), padding=(0, 1, 2)).shape
    assert spec.output_shape(x.shape) == tuple(expected)


def test_same_padding_puts_the_smaller_half_before():
    """PyTorch's 'same' splits an odd total dilation·(k−1) as total//2 before, the rest after."""
    spec = conv2d_spec(1, 1, (4, 2), padding="same", dilation=(1, 3))
    assert spec.padding == ((1, 2), (1, 2))
    assert torch.nn.Conv2d(1, 1, (4, 2), padding="same", dilation=(1, 3))._reversed_padding_repeated_twice == [
        1,
        2,
        1,
        2,
    ]


def test_direct_construction_is_validated():
    with pytest.raises(ShapeError, match="padding must be"):
        ConvSpec(2, 2, (3, 3), (1, 1), ((1, -1), (0, 0)), (1, 1))
    with pytest.raises(ParameterError, match="kernel_size must be a tuple of 1, 2 or 3"):
        ConvSpec(2, 2, (3, 3, 3, 3), (1,) * 4, ((0, 0),) * 4, (1,) * 4)
    with pytest.raises(ParameterError, match="output_padding is for transposed"):
        ConvSpec(2, 2, (3,), (2,), ((0, 0),), (1,), output_padding=(1,))


def _torch_error(fn) -> Exception:
    with pytest.raises(RuntimeError) as info:
        fn()
    return info.value


def test_channel_mismatch_message_is_pytorchs():
    spec = conv2d_spec(4, 4, 3)
    expected = _torch_error(lambda: F.conv2d(torch.rand(1, 3, 8, 8), torch.rand(4, 4, 3, 3)))
    with pytest.raises(ShapeError) as info:
        spec.output_shape((1, 3, 8, 8))
    assert str(info.value) == str(expected)
    assert "expected input[1, 3, 8, 8] to have 4 channels, but got 3 channels instead" in str(info.value)


@pytest.mark.parametrize(
    ("spec_args", "input_shape"),
    [
        (dict(kernel_size=3), (1, 4, 2, 2)),
        (dict(kernel_size=3, dilation=2, padding=1), (1, 4, 2, 9)),
        (dict(kernel_size=(1, 5), padding=(0, 1)), (1, 4, 6, 2)),
    ],
)
def test_kernel_larger_than_input_message_is_pytorchs(spec_args, input_shape):
    spec = conv2d_spec(4, 4, **spec_args)
    weight = torch.rand(spec.weight_shape)
    expected = _torch_error(
        lambda: F.conv2d(
            torch.rand(input_shape),
            weight,
            padding=spec_args.get("padding", 0),
            dilation=spec_args.get("dilation", 1),
        )
    )
    with pytest.raises(ShapeError) as info:
        spec.output_shape(input_shape)
    assert str(info.value) == str(expected)


@pytest.mark.parametrize(
    ("input_shape", "match"),
    [
        ((4, 8, 8), r"Expected 4D \(batched\) input"),
        ((1, 4, 8, 8, 1), r"Expected 4D \(batched\) input"),
        ((1, 4, 0, 8), "Only zero batch or zero channel inputs are supported"),
        ((1, 4, 8.0, 8), "input_shape must be a sequence of 4 integers"),
        ((1, 4, -2, 8), "negative sizes"),
    ],
)
def test_output_shape_rejects_bad_input_shapes(input_shape, match):
    with pytest.raises(ShapeError, match=match):
        conv2d_spec(4, 4, 3).output_shape(input_shape)


def test_zero_batch_is_allowed_as_in_pytorch():
    assert conv2d_spec(4, 2, 3).output_shape((0, 4, 5, 5)) == (0, 2, 3, 3)


@given(
    kernel=st.tuples(st.integers(1, 5), st.integers(1, 5)),
    stride=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    padding=st.one_of(st.tuples(st.integers(0, 3), st.integers(0, 3)), st.sampled_from(["same", "valid"])),
    dilation=st.tuples(st.integers(1, 3), st.integers(1, 3)),
    size=st.tuples(st.integers(1, 12), st.integers(1, 12)),
)
def test_output_shape_or_error_agrees_with_torch(kernel, stride, padding, dilation, size):
    """Where torch computes a shape we compute the same one; where torch raises, we raise an FpaError."""
    try:
        spec = conv2d_spec(2, 3, kernel, stride=stride, padding=padding, dilation=dilation)
    except ParameterError:
        with pytest.raises(ValueError):
            torch.nn.Conv2d(2, 3, kernel, stride=stride, padding=padding, dilation=dilation)
        return
    # Real (tiny) CPU tensors, not "meta": torch 2.11's meta kernel skips the kernel-size check.
    x = torch.zeros((1, 2, *size))
    w = torch.zeros(spec.weight_shape)
    try:
        expected = F.conv2d(x, w, stride=stride, padding=padding, dilation=dilation).shape
    except RuntimeError:
        with pytest.raises(FpaError):
            spec.output_shape(x.shape)
        return
    assert spec.output_shape(x.shape) == tuple(expected)


@pytest.mark.parametrize(
    ("change", "error", "match"),
    [
        (dict(x=torch.rand(1, 3, 6, 6, dtype=torch.float64)), DtypeError, "x must have dtype float32"),
        (dict(weight=np.zeros((4, 3, 3, 3))), DtypeError, "weight must have dtype float32"),
        (dict(x=[[1.0]]), DtypeError, "x must be a torch.Tensor or numpy.ndarray"),
        (dict(weight=torch.rand(4, 3, 3, 2)), ShapeError, r"weight must have shape \[4, 3, 3, 3\]"),
        (dict(bias=torch.rand(5)), ShapeError, r"bias must have shape \[4\]"),
        (dict(bias=None), ParameterError, "bias is None but spec.bias is True"),
        (dict(out_index=np.array([[0, 4, 0, 0]])), ShapeError, r"out_index row 0 = \[0, 4, 0, 0\] is outside"),
        (dict(out_index=np.array([[0, 0, -1, 0]])), ShapeError, "outside the output shape"),
        (dict(out_index=np.array([[0, 0, 0]])), ShapeError, r"out_index must have shape \(M, 4\)"),
        (dict(out_index=np.array([[0.0, 0, 0, 0]])), DtypeError, "out_index must hold integers"),
        (dict(x=torch.rand(1, 2, 6, 6)), ShapeError, "to have 3 channels"),
    ],
)
def test_gather_terms_rejects_bad_operands(change, error, match):
    spec = conv2d_spec(3, 4, 3)
    args = dict(
        x=torch.rand(1, 3, 6, 6), weight=torch.rand(4, 3, 3, 3), bias=torch.rand(4), out_index=np.zeros((1, 4), int)
    )
    args.update(change)
    with pytest.raises(error, match=match):
        gather_terms(spec, args["x"], args["weight"], args["bias"], args["out_index"])


def test_gather_terms_refuses_bias_for_a_biasless_spec():
    spec = conv2d_spec(3, 4, 3, bias=False)
    with pytest.raises(ParameterError, match=r"spec\.bias is False"):
        gather_terms(spec, torch.rand(1, 3, 6, 6), torch.rand(4, 3, 3, 3), torch.rand(4), np.zeros((1, 4), int))


# ----------------------------------------------------------------------------------------------
# Term orders and sampling
# ----------------------------------------------------------------------------------------------


def test_term_permutation_channel_outer_is_identity_and_tap_outer_transposes():
    spec = conv2d_spec(6, 4, (2, 3), groups=2)  # 3 channels per group, 6 taps
    np.testing.assert_array_equal(term_permutation(spec, "channel_outer"), np.arange(18))
    perm = term_permutation(spec, TermOrder.TAP_OUTER)
    assert sorted(perm.tolist()) == list(range(18))
    weight = np.arange(4 * 3 * 2 * 3).reshape(4, 3, 2, 3)
    tap_outer = weight[1].reshape(3, 6).T.reshape(-1)  # taps outermost, then channel
    np.testing.assert_array_equal(weight[1].reshape(-1)[perm], tap_outer)


def test_term_permutation_rejects_unknown_order():
    with pytest.raises(ParameterError, match="order must be one of 'channel_outer', 'tap_outer'"):
        term_permutation(conv2d_spec(1, 1, 1), "diagonal")


def test_sample_output_indices_are_distinct_in_range_and_reproducible():
    shape = (3, 5, 7, 11)
    index = sample_output_indices(shape, 200, seed=7)
    assert index.dtype == np.int64 and index.shape == (200, 4)
    assert ((index >= 0) & (index < np.array(shape))).all()
    flat = np.ravel_multi_index(tuple(index.T), shape)
    assert len(np.unique(flat)) == 200
    np.testing.assert_array_equal(index, sample_output_indices(shape, 200, seed=7))
    assert not np.array_equal(index, sample_output_indices(shape, 200, seed=8))


def test_sample_output_indices_returns_everything_sorted_when_count_covers_all():
    index = sample_output_indices((2, 1, 3), 100, seed=0)
    np.testing.assert_array_equal(np.ravel_multi_index(tuple(index.T), (2, 1, 3)), np.arange(6))


def test_sample_output_indices_is_uniform():
    """Single draws over 6 cells, 1200 seeds: each cell expects 200; ±70 is > 5 standard deviations."""
    counts = np.zeros(6, int)
    for seed in range(1200):
        (row,) = sample_output_indices((2, 3), 1, seed=seed)
        counts[row[0] * 3 + row[1]] += 1
    assert (np.abs(counts - 200) < 70).all(), counts


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (((2, 3), 0, 0), "count must be an integer >= 1"),
        (((2, 3), 2.0, 0), "count must be an integer >= 1"),
        (((2, 0), 1, 0), "out_shape must be a non-empty sequence of positive integers"),
        (((2, 3), 1, -1), "seed must be a non-negative integer"),
    ],
)
def test_sample_output_indices_validates(args, match):
    with pytest.raises(ParameterError, match=match):
        sample_output_indices(*args)


def test_k_counts_terms_per_output():
    spec = conv2d_spec(32, 64, (5, 9), groups=4)
    assert spec.K == 8 * 45 == math.prod(spec.weight_shape[1:])


_FUNCTIONAL = {
    (1, False): F.conv1d,
    (2, False): F.conv2d,
    (3, False): F.conv3d,
    (1, True): F.conv_transpose1d,
    (2, True): F.conv_transpose2d,
    (3, True): F.conv_transpose3d,
}


@st.composite
def _family_case(draw):
    """Any conv-family op (1-3 spatial dims, transposed or not, groups, stride, dilation, output_padding)."""
    nd, transposed = draw(st.integers(1, 3)), draw(st.booleans())
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cin, cout = groups * draw(st.integers(1, 3)), groups * draw(st.integers(1, 3))
    kernel = tuple(draw(st.integers(1, 4)) for _ in range(nd))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(nd))
    dilation = tuple(draw(st.integers(1, 2)) for _ in range(nd))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(nd))
    output_padding = tuple(draw(st.integers(0, 2)) for _ in range(nd)) if transposed else (0,) * nd
    size = tuple(draw(st.integers(1, 7 if nd < 3 else 4)) for _ in range(nd))
    return nd, transposed, dict(
        in_channels=cin, out_channels=cout, kernel_size=kernel, stride=stride, padding=padding, dilation=dilation,
        groups=groups, bias=draw(st.booleans()), transposed=transposed, output_padding=output_padding,
    ), (draw(st.integers(1, 2)), cin, *size)  # fmt: skip


def _spec_of(nd: int, transposed: bool, args: dict) -> ConvSpec:
    """``conv_spec`` of a drawn case's torch arguments."""
    geometry = ConvGeometry(*(args[k] for k in ("kernel_size", "stride", "padding", "dilation", "output_padding")))
    cin, cout = args["in_channels"], args["out_channels"]
    return conv_spec(nd, cin, cout, geometry, args["groups"], args["bias"], transposed=transposed)


@given(_family_case(), st.integers(0, 2**31 - 1))
def test_every_conv_kind_agrees_with_torch_on_shape_error_and_exact_terms(case, seed):
    """Shape or refusal as torch's; where torch computes, the gathered terms summed exactly are torch's fp64 output."""
    nd, transposed, args, shape = case
    fn = _FUNCTIONAL[(nd, transposed)]
    generator = torch.Generator().manual_seed(seed)
    call = {k: args[k] for k in ("stride", "padding", "dilation", "groups")}
    if transposed:
        call["output_padding"] = args["output_padding"]
    weight_shape = (
        (args["in_channels"], args["out_channels"] // args["groups"], *args["kernel_size"])
        if transposed
        else (args["out_channels"], args["in_channels"] // args["groups"], *args["kernel_size"])
    )
    x, w = torch.randn(shape, generator=generator), torch.randn(weight_shape, generator=generator)
    b = torch.randn(args["out_channels"], generator=generator) if args["bias"] else None
    try:
        expected = fn(x.double(), w.double(), None if b is None else b.double(), **call)
    except RuntimeError:
        with pytest.raises(FpaError):
            _spec_of(nd, transposed, args).output_shape(shape)
        return
    spec = _spec_of(nd, transposed, args)
    assert spec.weight_shape == weight_shape and spec.name == f"{'ConvTranspose' if transposed else 'Conv'}{nd}d"
    out_shape = spec.output_shape(shape)
    assert out_shape == tuple(expected.shape)
    index = np.stack(np.unravel_index(np.arange(math.prod(out_shape)), out_shape), axis=1)
    terms = gather_terms(spec, x, w, b, index)
    assert terms.K == spec.K
    scale = abs_dot_at(terms)
    got = fp64_at(terms)
    np.testing.assert_array_less(np.abs(got - expected.numpy().reshape(-1)), 1e-12 * (scale + 1))


def test_a_transposed_spec_is_refused_as_pytorch_refuses_it():
    with pytest.raises(ShapeError, match="output padding must be smaller than either stride or dilation"):
        conv_transpose2d_spec(4, 6, ConvGeometry(3, stride=2, output_padding=2))
    with pytest.raises(ParameterError, match="takes an integer or a tuple"):
        conv_transpose2d_spec(4, 6, ConvGeometry(3, padding="same"))
    with pytest.raises(ShapeError, match="Output size is too small"):
        conv_transpose2d_spec(4, 6, ConvGeometry(3, padding=5)).output_shape((1, 4, 5, 5))
    with pytest.raises(ParameterError, match="out_channels must be divisible by groups"):
        conv_transpose1d_spec(4, 6, ConvGeometry(3), groups=4)
    with pytest.raises(ParameterError, match="geometry must be a ConvGeometry"):
        conv_spec(2, 4, 6, 3)


def test_the_torch_constructors_are_conv_spec_of_their_geometry():
    geometry = ConvGeometry((5, 9), padding=(2, 4), dilation=(2, 3))
    assert conv2d_spec(32, 64, (5, 9), padding=(2, 4), dilation=(2, 3), bias=False) == conv_spec(
        2, 32, 64, geometry, bias=False
    )
    assert conv3d_kk1_spec(3, 8, 3, stride=2) == conv_spec(3, 3, 8, ConvGeometry((3, 3, 1), 2))
    transposed = conv_transpose2d_spec(4, 6, ConvGeometry(3, stride=2, padding=1, output_padding=1), groups=2)
    assert transposed == conv_spec(2, 4, 6, ConvGeometry(3, 2, 1, 1, 1), 2, transposed=True)
    assert transposed.output_padding == (1, 1) and transposed.padding == ((1, 1), (1, 1))
