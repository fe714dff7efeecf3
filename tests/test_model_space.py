"""fp_analysis.model_space: constructor arguments drawn like get_init_inputs() gives them; inputs from the conv."""

from __future__ import annotations

import inspect

import pytest
import torch
from hypothesis import find, given, settings
from hypothesis import strategies as st
from torch import nn

from fp_analysis.model_space import ModelSpace, Refused, Role, conv_modules, describe_convs, role_of
from fp_analysis.ops.conv import spec_of_module


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
    shapes = data.draw(space.inputs_strategy(model))
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
    find(space.arguments_strategy(), lambda v: v["out_channels"] > 8)
    find(space.arguments_strategy(), lambda v: v["out_channels"] == 64)  # the problem's own count
    find(space.arguments_strategy(), lambda v: v["stride"] == 3 and v["padding"] == 2 and v["bias"])
    model = KK1(1, 1, 3)
    find(space.inputs_strategy(model), lambda s: s[0][2] > 32 or s[0][3] > 32)


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
    shapes = data.draw(space.inputs_strategy(model))  # output_padding below stride or dilation: never refused
    out = model(torch.rand(shapes[0]))
    assert out.shape == spec_of_module(model.conv).output_shape(shapes[0])
