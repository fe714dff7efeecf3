"""fp_analysis.fuzz.model_space: constructor arguments drawn like get_init_inputs() gives them; inputs from the conv."""

from __future__ import annotations

import inspect

import pytest
import torch
from hypothesis import find as hypothesis_find
from hypothesis import given, reject, settings
from hypothesis import strategies as st
from torch import nn

from fp_analysis.fuzz.model_space import ModelSpace, Refused, Role, TooLarge, conv_modules, describe_convs, role_of
from fp_analysis.ops.conv import spec_of_module


def find(strategy, condition):
    """Hypothesis's ``find`` without an example database: the shrunk minimum of the condition, not an example another
    test stored under the same key (which made a fresh clone's run find 64 where the minimum is 9)."""
    return hypothesis_find(strategy, condition, settings=settings(database=None, max_examples=5000))


class KK1(nn.Module):
    """Seed-001 form: an int kernel_size made (k, k, 1)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=False):
        super().__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, (kernel_size, kernel_size, 1), stride, padding, bias=bias)

    def forward(self, x):
        return self.conv3d(x)


class Epilogue(nn.Module):
    """Conv2d with groups, GroupNorm(num_groups), a (C, 1, 1) bias parameter, a clamp between two floats."""

    def __init__(self, in_channels, out_channels, kernel_size, groups, num_groups, bias_shape, lo, hi, dim=1):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, groups=groups)
        self.norm = nn.GroupNorm(num_groups, out_channels)
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.lo, self.hi, self.dim = lo, hi, dim

    def forward(self, x):
        return torch.clamp(self.norm(self.conv(x)) + self.bias, self.lo, self.hi).sum(self.dim)


class Transposed(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, scale):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride, padding, output_padding)
        self.scale = scale

    def forward(self, x):
        return self.conv(x) * self.scale


def _inputs(data, space: ModelSpace, model: nn.Module) -> list:
    try:
        return data.draw(space.inputs_strategy(model))
    except TooLarge:  # fpa fuzz rejects these draws too (and counts them)
        reject()


def _space(model_class, init, inputs) -> ModelSpace:
    return ModelSpace(inspect.signature(model_class.__init__), init, inputs, model_class(*init))


KK1_SPACE = (KK1, [3, 64, 3], [torch.rand(2, 3, 8, 8, 4)])
EPILOGUE_SPACE = (Epilogue, [8, 16, 3, 2, 4, (16, 1, 1), -0.5, 2.0], [torch.rand(2, 8, 10, 10)])
TRANSPOSED_SPACE = (Transposed, [4, 8, (3, 3, 1), (2, 2, 1), 1, (1, 1, 0), 0.5], [torch.rand(2, 4, 5, 5, 3)])


@pytest.mark.parametrize(
    ("name", "value", "role"),
    [
        ("in_channels", 3, Role.IN_CHANNELS),
        ("out_channels", 64, Role.OUT_CHANNELS),
        ("kernel_size", 3, Role.KERNEL),
        ("kernel_size", (3, 5, 7), Role.KERNEL),
        ("pool_kernel_size", 2, Role.KERNEL),
        ("maxpool_size", 2, Role.KERNEL),
        ("stride", 2, Role.STRIDE),
        ("output_padding", 1, Role.OUTPUT_PADDING),
        ("padding", (1, 2), Role.PADDING),
        ("padding", "same", Role.KEPT),
        ("dilation", 2, Role.DILATION),
        ("groups", 4, Role.GROUPS),
        ("num_groups", 8, Role.NORM_GROUPS),
        ("bias_shape", (16, 1, 1), Role.SHAPE),
        ("scaling_factor", 2.0, Role.SCALAR),
        ("bias", True, Role.FLAG),
        ("dim", 1, Role.KEPT),
        ("features", None, Role.KEPT),
    ],
)
def test_roles_are_read_from_names_and_types(name, value, role):
    assert role_of(name, value) is role


@settings(max_examples=150)
@given(st.data())
def test_arguments_keep_their_types_and_the_constraints_between_them(data):
    space = _space(*EPILOGUE_SPACE)
    values = data.draw(space.arguments_strategy())
    assert all(type(values[k]) is int for k in ("in_channels", "out_channels", "kernel_size", "groups", "num_groups"))
    assert values["in_channels"] % values["groups"] == 0
    assert values["out_channels"] % values["groups"] == 0 and values["out_channels"] % values["num_groups"] == 0
    # The (C, 1, 1) parameter follows the drawn output channels; a tuple keeps its length and type.
    assert values["bias_shape"] == (values["out_channels"], 1, 1)
    # Floats keep their sign and their order; what has no known meaning keeps its value.
    assert values["lo"] < 0 < values["hi"] and type(values["lo"]) is float
    assert values["dim"] == 1
    Epilogue(*space.call(values)[0])  # the problem's own constructor takes every draw


@settings(max_examples=150)
@given(st.data())
def test_a_transposed_conv_gets_output_padding_it_accepts_and_a_kk1_kernel_keeps_its_depth(data):
    space = _space(*TRANSPOSED_SPACE)
    values = data.draw(space.arguments_strategy())
    assert isinstance(values["kernel_size"], tuple) and len(values["kernel_size"]) == 3
    assert values["kernel_size"][2] == 1  # an extent of 1 in a kernel tuple is its form
    for op, s in zip(values["output_padding"], values["stride"], strict=True):
        assert 0 <= op < s  # dilation is 1 here: PyTorch refuses output_padding >= max(stride, dilation)
    model = Transposed(*space.call(values)[0])
    shapes = _inputs(data, space, model)
    assert shapes[0][1] == values["in_channels"]
    model(torch.zeros(shapes[0]))  # the drawn input is one the conv accepts


def test_the_seed_001_form_gets_ints_and_the_simplest_draw_is_the_problems_form_at_small_sizes():
    space = _space(*KK1_SPACE)
    simplest = find(space.arguments_strategy(), lambda v: True)
    assert simplest["kernel_size"] == 3 and simplest["stride"] == 1 and simplest["padding"] == 0
    assert simplest["in_channels"] == 1 and simplest["out_channels"] == 1  # sizes shrink towards small
    model = KK1(*space.call(simplest)[0])
    assert conv_modules(model)[0][1].kernel_size == (3, 3, 1)
    shapes = find(space.inputs_strategy(model), lambda s: True)
    assert shapes == [(1, 1, 3, 3, 1)]  # batch 1, the conv's in_channels, the smallest extents it takes


def test_wider_configurations_are_drawn_too():
    space = _space(*KK1_SPACE)
    # Each is drawn, and shrinks to the simplest draw (above) with only what the property needs changed.
    simplest = {"in_channels": 1, "out_channels": 1, "kernel_size": 3, "stride": 1, "padding": 0, "bias": False}
    wide = find(space.arguments_strategy(), lambda v: v["out_channels"] > 8)
    # 9, the smallest past 8 of the sizes drawn; or the problem's own 64, a branch of its own that shrinking does not
    # leave once in it (whether the search meets it first depends on what Hypothesis saw before: under xdist it may)
    assert wide in ({**simplest, "out_channels": 9}, {**simplest, "out_channels": 64}), wide
    own = find(space.arguments_strategy(), lambda v: v["out_channels"] == 64)  # the problem's own count
    assert own == {**simplest, "out_channels": 64}
    strided = find(space.arguments_strategy(), lambda v: v["stride"] == 3 and v["padding"] == 2 and v["bias"])
    assert strided == {**simplest, "stride": 3, "padding": 2, "bias": True}
    model = KK1(1, 1, 3)
    shapes = find(space.inputs_strategy(model), lambda s: s[0][2] > 16 or s[0][3] > 16)  # 3-d: past 16-wide tiles
    assert shapes == [(1, 1, 3, 17, 1)]


def test_only_the_arguments_get_init_inputs_gives_are_passed_when_defaults_are_not_drawn():
    space = _space(*KK1_SPACE)
    space.drawn -= set(space.defaulted())
    args, kwargs = space.call({"in_channels": 2})
    assert args == [2, 64, 3] and kwargs == {}
    assert space.defaulted() == []


def test_convs_are_described_in_conv_terms_and_a_refused_output_padding_is_a_refusal():
    model = Transposed(4, 8, 3, 2, 1, 1, 0.5)
    (line,) = describe_convs(model, (1, 4, 2, 2, 2))
    assert line.startswith("ConvTranspose3d `conv`: 4→8 channels, kernel (3, 3, 3), stride (2, 2, 2)")
    assert "output_padding (1, 1, 1)" in line and "input (1, 4, 2, 2, 2) → output (1, 8, 4, 4, 4)" in line
    space = _space(*TRANSPOSED_SPACE)
    refused = Transposed(4, 8, 3, 1, 1, 1, 0.5)  # output_padding 1 with stride 1: PyTorch refuses it on forward
    with pytest.raises(Refused, match="output padding must be smaller"):
        find(space.inputs_strategy(refused), lambda s: True)
    assert spec_of_module(model.conv).transposed


CONV_KINDS = {
    "Conv1d": (nn.Conv1d, 1), "Conv2d": (nn.Conv2d, 2), "Conv3d": (nn.Conv3d, 3),
    "ConvTranspose1d": (nn.ConvTranspose1d, 1), "ConvTranspose2d": (nn.ConvTranspose2d, 2),
    "ConvTranspose3d": (nn.ConvTranspose3d, 3),
}  # fmt: skip


class AnyConv(nn.Module):
    """One conv of any kind, every parameter an argument; a ReLU after it."""

    def __init__(self, kind, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1):  # fmt: skip
        super().__init__()
        module, _ = CONV_KINDS[kind]
        extra = {"output_padding": output_padding} if kind.startswith("ConvTranspose") else {}
        self.conv = module(in_channels, out_channels, kernel_size, stride=stride, padding=padding, groups=groups,
                           bias=bias, dilation=dilation, **extra)  # fmt: skip

    def forward(self, x):
        return torch.relu(self.conv(x))


@pytest.mark.parametrize("kind", list(CONV_KINDS))
@settings(max_examples=40)
@given(data=st.data())
def test_every_conv_kind_gets_configurations_its_module_accepts(kind, data):
    nd = CONV_KINDS[kind][1]
    space = _space(AnyConv, [kind, 4, 6, 3, 2, 1, 1, 2], [torch.rand(2, 4, *[7] * nd)])
    values = data.draw(space.arguments_strategy())
    assert values["kind"] == kind  # a string keeps its value
    model = AnyConv(*space.call(values)[0])
    shapes = _inputs(data, space, model)  # output_padding below stride or dilation: never refused
    out = model(torch.rand(shapes[0]))
    assert out.shape == spec_of_module(model.conv).output_shape(shapes[0])


class Depthwise(nn.Module):
    """groups=in_channels (a depthwise conv), a GroupNorm whose count is an argument called groups, a pool
    stride beside the conv's stride, and a second input added to the conv's output."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, output_padding, pool_stride, groups):
        super().__init__()
        self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride, 1, output_padding,
                                       groups=in_channels)  # fmt: skip
        self.norm = nn.GroupNorm(groups, out_channels)
        self.pool = nn.MaxPool2d(2, pool_stride)

    def forward(self, x, residual):
        return self.pool(self.norm(self.conv(x) + residual))


DEPTHWISE_SPACE = (Depthwise, [8, 16, 3, 2, 1, 3, 4], [torch.rand(2, 8, 6, 6), torch.rand(2, 16, 12, 12)])


@settings(max_examples=100)
@given(st.data())
def test_counts_that_follow_arguments_are_read_from_the_model_and_later_inputs_follow_the_conv(data):
    space = _space(*DEPTHWISE_SPACE)
    assert space.conv_groups == ("argument", "in_channels") and space.norm_groups == [("argument", "groups")]
    values = data.draw(space.arguments_strategy())
    assert values["out_channels"] % values["in_channels"] == 0 and values["out_channels"] % values["groups"] == 0
    assert values["output_padding"] < max(values["stride"], 1)  # the conv's stride bounds it, not pool_stride
    model = Depthwise(*space.call(values)[0])
    x_shape, residual_shape = _inputs(data, space, model)
    conv_out = spec_of_module(model.conv).output_shape(x_shape)
    assert residual_shape == conv_out  # shaped like the conv's output in the problem, so in every draw
    try:
        model(torch.rand(x_shape), torch.rand(residual_shape))
    except (ValueError, RuntimeError) as error:  # GroupNorm over one value, a pool larger than its input
        assert "value per channel" in str(error) or "Output size is too small" in str(error)


def test_the_simplest_depthwise_draw_is_small_and_keeps_the_problems_output_padding():
    space = _space(*DEPTHWISE_SPACE)
    simplest = find(space.arguments_strategy(), lambda v: True)
    assert simplest["in_channels"] == 1 and simplest["groups"] == 1 and simplest["output_padding"] == 1


class Odd(nn.Module):
    """A constructor with *args, and forward(scale, x, bias) whose first input is not a tensor."""

    def __init__(self, in_channels, out_channels, *rest):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, *rest)

    def forward(self, scale, x, bias):
        return self.conv(x) * scale + bias


def test_star_args_pass_through_and_inputs_that_are_not_tensors_keep_their_values():
    inputs = [2.0, torch.rand(2, 3, 9, 9), torch.tensor(0.5)]
    space = _space(Odd, [3, 4, 3, 2], inputs)
    assert space.var_args == (3, 2) and space.lead == 1
    values = find(space.arguments_strategy(), lambda v: True)
    args, _ = space.call(values)
    assert args[2:] == [3, 2]
    model = Odd(*args)
    shapes = find(space.inputs_strategy(model), lambda s: True)
    assert shapes[0] is None and shapes[1][1] == values["in_channels"] and shapes[2] == ()


class OneChannel(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape, dtype_name):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return self.conv(x) + self.bias


@settings(max_examples=60)
@given(st.data())
def test_a_base_channel_count_of_1_leaves_broadcast_dims_alone_and_kept_values_are_not_drawn(data):
    space = _space(OneChannel, [1, 16, 3, (16, 1, 1), torch.float32], [torch.rand(2, 1, 8, 8)])
    assert "dtype_name" not in space.drawn  # kept, so never drawn nor written into a replay
    values = data.draw(space.arguments_strategy())
    assert values["bias_shape"] == (values["out_channels"], 1, 1)
    assert values["dtype_name"] is torch.float32
