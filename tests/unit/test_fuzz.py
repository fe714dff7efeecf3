"""fpa fuzz's pieces that run in this process: the variants of our own ops hold their properties, the
strategies draw what they promise and what PyTorch accepts or refuses, the reference in each mode stays
within its derived tolerance, and the default example count follows the Hypothesis profile.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given

from fp_analysis.errors import FpaError
from fp_analysis.explain.kernelbench import emulated_reference
from fp_analysis.fuzz.variants import fuzz_op
from fp_analysis.ops.conv import conv2d_spec
from fp_analysis.strategies import config_spec, conv2d_configs, conv3d_kk1_configs, conv_inputs


@pytest.fixture(autouse=True)
def _fresh_database(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_HYPOTHESIS_DB", str(tmp_path / "hypothesis"))


@pytest.mark.parametrize("op", ["dilated_conv2d", "conv3d_kk1", "conv_gelu"])
def test_our_variants_hold_their_properties(op):
    result = fuzz_op(op, max_examples=40, device="cpu")
    assert result["failures"] == [] and result["examples"] == 40


@given(conv_inputs(conv2d_configs(max_outputs=2000)))
def test_pytorch_reference_in_each_mode_is_within_its_derived_tolerance(problem):
    """torch's CPU conv, with its operands emulated in TF32/bf16/fp16 or as it is, against fp64."""
    from fpa_kernels.twin import all_output_indices

    from fp_analysis.numerics.bounds import term_sums
    from fp_analysis.ops.reference import fp64_at
    from fp_analysis.ops.terms import gather_terms
    from fp_analysis.study.tolerance import side_bound

    config, x, w, b = problem
    spec = config_spec(config)
    module = torch.nn.Conv2d(
        spec.in_channels,
        spec.out_channels,
        spec.kernel_size,
        config["stride"],
        config["padding"],
        config["dilation"],
        spec.groups,
        spec.bias,
    )
    with torch.no_grad():
        module.weight.copy_(w)
        if b is not None:
            module.bias.copy_(b)
        terms = gather_terms(spec, x.contiguous(), w, b, all_output_indices(spec.output_shape(tuple(x.shape))))
        exact, sums = fp64_at(terms), term_sums(terms.w, terms.x, terms.bias)
        for mode in ("fp32", "tf32", "bf16", "fp16"):
            with emulated_reference(mode):
                y = module(x).reshape(-1).double().numpy()
            finite = torch.isfinite(torch.from_numpy(y)).numpy()
            bound = side_bound(sums, mode, y.size)
            assert (abs(y - exact)[finite] <= bound[finite] * 1.0001 + 1e-30).all(), mode


@given(conv2d_configs(max_outputs=500) | conv3d_kk1_configs(max_outputs=500))
def test_invalid_configs_raise_what_pytorch_raises(config):
    """Break one parameter; our spec and torch must both refuse, with the same kind of error."""
    broken = dict(config, groups=config["groups"] + 1) if config["in_channels"] > 1 else dict(config, padding=-1)
    ours = theirs = None
    try:
        spec = config_spec(broken)
        spec.output_shape(tuple(broken["input_shape"]))
    except FpaError as error:
        ours = error
    conv = torch.nn.Conv2d if len(config["input_shape"]) == 4 else torch.nn.Conv3d
    try:
        module = conv(
            broken["in_channels"],
            broken["out_channels"],
            broken["kernel_size"],
            broken["stride"],
            broken["padding"],
            broken["dilation"],
            broken["groups"],
            broken["bias"],
        )
        module(torch.zeros(broken["input_shape"]))
    except (ValueError, RuntimeError) as error:
        theirs = error
    if theirs is None:  # e.g. groups that still divide both channel counts: then we must accept it too
        assert ours is None
        return
    assert ours is not None and isinstance(ours, (ValueError, RuntimeError))
    assert isinstance(ours, ValueError) == isinstance(theirs, ValueError), (ours, theirs)
    named = [p for p in ("groups", "padding", "in_channels", "out_channels") if p in str(ours)]
    assert named, str(ours)


def test_strategies_cover_what_they_promise():
    from hypothesis import find

    find(conv2d_configs(), lambda c: c["groups"] == c["in_channels"] > 1)  # depthwise
    find(conv2d_configs(), lambda c: c["padding"] == "same")
    find(conv3d_kk1_configs(), lambda c: c["input_shape"][-1] > 32 and c["padding"] not in (0, "valid"))
    find(conv2d_configs(), lambda c: c["input_shape"][0] == 1 and c["input_shape"][2] != c["input_shape"][3])
    # the helper the strategies build on takes the smallest conv they draw (one channel, 1×1 kernel and image)
    assert conv2d_spec(1, 1, 1).output_shape((1, 1, 1, 1)) == (1, 1, 1, 1)


def test_fuzz_takes_its_default_example_count_from_the_hypothesis_profile(monkeypatch):
    from fp_analysis.explain.jobs import default_max_examples

    monkeypatch.setenv("HYPOTHESIS_PROFILE", "thorough")
    assert default_max_examples() == 2000
    monkeypatch.delenv("HYPOTHESIS_PROFILE")
    assert default_max_examples() == 200
