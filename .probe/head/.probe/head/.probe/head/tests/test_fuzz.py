"""fpa fuzz: kernels with the bugs hand-written kernels get are caught with minimal configs; correct ones pass."""

from __future__ import annotations

import json
import math
import pathlib

import pytest
import torch
from hypothesis import given
from typer.testing import CliRunner

from fp_analysis.cli.app import app
from fp_analysis.errors import FpaError
from fp_analysis.explain.jobs import fuzz_files
from fp_analysis.explain.kernelbench import emulated_reference
from fp_analysis.fuzz.variants import fuzz_op
from fp_analysis.ops.conv import conv2d_spec
from fp_analysis.strategies import config_spec, conv2d_configs, conv3d_kk1_configs, conv_inputs

from .cli_runs import fpa

CASES = pathlib.Path(__file__).parent / "fuzz_cases"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _fresh_database(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_HYPOTHESIS_DB", str(tmp_path / "hypothesis"))


def _fuzz(problem: str, solution: str, n: int = 150) -> dict:
    return fuzz_files(CASES / f"{problem}.py", CASES / f"{solution}.py", max_examples=n, device="cpu", seed=0)


def _per_axis(value, axis):
    return value if isinstance(value, int) else value[axis]


def _input(config):
    return config["input_shapes"][0]


# (problem, buggy solution, what its minimal config must show, whether the candidate raises there). Minimal:
# the parameter that matters at the smallest value that shows the bug, the rest at the problem's values or small.
BUGS = [
    ("conv2d_problem", "bug_group_offset", lambda c: c["groups"] == 2 and c["in_channels"] == 2, False),
    ("conv2d_problem", "bug_padding_width", lambda c: c["padding"] == 1 and c["groups"] == 1, False),
    ("conv2d_problem", "bug_edge_tile", lambda c: c["groups"] == 1 and _input(c)[0] == 1, False),
    (
        "conv2d_problem",
        "bug_dilation_swapped",
        lambda c: _per_axis(c["dilation"], 0) != _per_axis(c["dilation"], 1),
        True,  # swapped, the dilated kernel outgrows an input the reference takes: the candidate raises
    ),
    ("conv3d_problem", "bug_depth_padding", lambda c: c["padding"] == 1 and c["groups"] == 1, False),
    # Seed-001 form: kernel_size an int that the Model turns into (k, k, 1).
    ("kk1_int_problem", "kk1_int_bug_depth_padding", lambda c: c["padding"] == 1 and c["kernel_size"] == 3, False),
    ("kk1_int_problem", "kk1_int_bug_depth_stride", lambda c: c["stride"] == 2 and _input(c)[-1] >= 3, False),
    ("conv3d_full_problem", "conv3d_full_bug_group_offset", lambda c: c["groups"] == 2 == c["in_channels"], False),
    ("convT2d_problem", "convT2d_bug_output_padding", lambda c: c["output_padding"] == 1, False),
    ("convT3d_gelu_problem", "convT3d_gelu_bug_output_padding", lambda c: c["output_padding"] == 1, False),
    # An extra (C, 1, 1) parameter read one channel off: two channels show it, GroupNorm over one group. The
    # shrinker may stop at 4: C moves with both (C, 1, 1) shapes, and Hypothesis's draws include constants
    # of the local modules loaded (fp_analysis's own among them), so a change anywhere moves its path a little.
    (
        "conv_norm_affine_problem",
        "conv_norm_affine_bug_bias_channel",
        lambda c: c["out_channels"] in (2, 4) and c["bias_shape"] == [c["out_channels"], 1, 1] and c["num_groups"] == 1,
        False,
    ),
]


# CI (two cores) runs a candidate that raises, a transposed conv and a whole Model; the others are marked slow and
# run on the device (experiments/device_run.sh slowtests).
_CI_BUGS = {"bug_dilation_swapped", "convT2d_bug_output_padding", "conv_norm_affine_bug_bias_channel"}
_CI_CORRECT = {"conv_norm_affine_fused"}


def _cases(cases: list, in_ci: set) -> list:
    return [pytest.param(*c, id=c[1], marks=() if c[1] in in_ci else pytest.mark.slow) for c in cases]


@pytest.mark.parametrize(("problem", "solution", "minimal", "raises"), _cases(BUGS, _CI_BUGS))
def test_buggy_kernels_are_caught_with_a_minimal_config(problem, solution, minimal, raises):
    result = _fuzz(problem, solution)
    assert len(result["failures"]) == 1
    failure = result["failures"][0]
    config = failure["config"]
    assert minimal(config), config
    assert failure["explanation"]["verdict"] == "bug" and bool(failure["user_code"]) is raises
    # Shrunk, not just found: one batch item, few channels, a small input.
    assert _input(config)[0] == 1 and config["in_channels"] <= 2 and math.prod(_input(config)) <= 64, config
    assert failure["convs"] and failure["convs"][0].startswith("Conv"), failure["convs"]
    # The one-line command replays the same failure.
    args = failure["command"].split(" ", 2)[2]
    replay = json.loads(args.split("--replay ", 1)[1].strip("'"))
    result = fpa("fuzz", "--problem", CASES / f"{problem}.py", "--solution", CASES / f"{solution}.py",
                 "--device", "cpu", "--replay", json.dumps(replay))  # fmt: skip
    assert result.code == (3 if raises else 1)  # 3: the candidate's code failed on the example


CORRECT = [
    ("conv2d_problem", "correct_fp64", {"accumulation_order"}),
    ("conv3d_problem", "correct_conv3d_reshape", {"accumulation_order"}),
    ("kk1_int_problem", "kk1_int_correct", {"accumulation_order"}),
    ("conv3d_full_problem", "conv3d_full_correct", {"accumulation_order"}),
    ("convT2d_problem", "convT2d_correct", {"accumulation_order"}),
    ("convT3d_gelu_problem", "convT3d_gelu_tanh", {"gelu_approximation"}),
    ("conv_norm_affine_problem", "conv_norm_affine_fused", {"accumulation_order"}),
]


@pytest.mark.long
@pytest.mark.parametrize(("problem", "solution", "differences"), _cases(CORRECT, _CI_CORRECT))
def test_correct_kernels_pass(problem, solution, differences):
    """200 examples each; the candidates differ from the reference by arithmetic only, and some examples show it
    (not all equal bit for bit), so the explain machinery judged them."""
    result = _fuzz(problem, solution, n=200)
    assert result["failures"] == [] and result["examples"] == 200
    assert sum(result["verdicts"].values()) == 200 and differences <= set(result["verdicts"]), result["verdicts"]
    assert set(result["verdicts"]) <= {"equal", "accumulation_order", "gelu_approximation"}, result["verdicts"]
    assert result["refused"] + result["too_large"] < 200 / 4, result  # the draws fit the Model: few are refused


def test_defaults_the_candidate_does_not_take_are_not_drawn():
    result = _fuzz("conv2d_problem", "fewer_parameters", n=30)
    assert result["failures"] == [] and result["examples"] == 30
    assert result["drawn"] == ["dilation", "in_channels", "kernel_size", "out_channels", "padding", "stride"]


def test_a_problem_that_refuses_most_configurations_is_no_pass_and_its_own_exit_is_named():
    picky = CASES / "picky_problem.py", CASES / "correct_fp64.py"
    result = fpa("fuzz", "--problem", picky[0], "--solution", picky[1], "--device", "cpu", "--max-examples", "30",
                 "--json")  # fmt: skip
    # Every draw but in_channels 4 is refused or ends the problem's process: never "30 examples, no failure".
    assert result.code in (2, 3), result.stdout
    message = result.data["error"]["message"]
    if result.code == 2:
        assert "examples could be run" in message and "4 channels only" in message, message
    else:
        assert result.data["error"]["side"] == "problem" and "sys.exit(5)" in message, message


@pytest.mark.gpu
def test_gpu_fuzz_judges_candidates_on_the_device():
    """On a GPU the reference runs as PyTorch's default has it (cuDNN TF32 allowed): arithmetic, not a failure."""
    result = fuzz_files(CASES / "conv_norm_affine_problem.py", CASES / "conv_norm_affine_fused.py", max_examples=60,
                        device="cuda", seed=0)  # fmt: skip
    assert result["failures"] == [] and result["examples"] == 60, result
    found = fuzz_files(CASES / "convT2d_problem.py", CASES / "convT2d_bug_output_padding.py", max_examples=60,
                       device="cuda", seed=0)  # fmt: skip
    assert found["failures"][0]["explanation"]["verdict"] == "bug" and found["failures"][0]["command"].count("cuda")


@pytest.mark.parametrize("op", ["dilated_conv2d", "conv3d_kk1", "conv_gelu"])
def test_our_variants_hold_their_properties(op):
    result = fuzz_op(op, max_examples=40, device="cpu")
    assert result["failures"] == [] and result["examples"] == 40


def test_cli_fuzz_json_and_exit_codes():
    result = runner.invoke(
        app,
        [
            "fuzz",
            "--problem",
            str(CASES / "conv2d_problem.py"),
            "--solution",
            str(CASES / "bug_edge_tile.py"),
            "--device",
            "cpu",
            "--max-examples",
            "50",
            "--json",
        ],
    )
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert set(data) == {"failures", "examples", "shrink_steps", "refused", "too_large", "refusals", "drawn",
                         "verdicts", "max_examples", "notes", "worker"}  # fmt: skip
    assert {"config", "convs", "command", "max_abs", "explanation", "not_from_get_init_inputs", "user_code"} <= set(
        data["failures"][0]
    )
    assert runner.invoke(app, ["fuzz", "--problem", str(CASES / "conv2d_problem.py")]).exit_code == 2
    assert runner.invoke(app, ["fuzz", "conv5d"]).exit_code == 2


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
    assert conv2d_spec(1, 1, 1)  # the helper the strategies build on
