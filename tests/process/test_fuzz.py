"""fpa fuzz: kernels with the bugs hand-written kernels get are caught with minimal configs; correct ones pass.
Each pair runs in the worker processes fuzz starts (fuzz_files, or the command line).
"""

from __future__ import annotations

import json
import math
import pathlib

import pytest
from typer.testing import CliRunner

from fp_analysis.cli.app import app
from fp_analysis.explain.jobs import fuzz_files

from ..cli_runs import fpa

CASES = pathlib.Path(__file__).parent.parent / "fuzz_cases"
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


# CI (two cores) runs a candidate that raises, a transposed conv and a whole Model with bugs, and a correct transposed
# conv (14 s; the correct whole Model takes 30 s there); the others are marked slow and run on the device
# (experiments/device_run.sh slowtests).
_CI_BUGS = {"bug_dilation_swapped", "convT2d_bug_output_padding", "conv_norm_affine_bug_bias_channel"}
_CI_CORRECT = {"convT2d_correct"}


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
    assert set(result["verdicts"]) <= {"identical", "accumulation_order", "gelu_approximation"}, result["verdicts"]
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
    # Seed 0's draws reach in_channels 2, on which the problem's Model() calls sys.exit(5): the problem's own
    # code failed (exit 3), named with the arguments it was built with.
    assert result.code == 3, result.stdout
    error = result.data["error"]
    assert (error["side"], error["fate"], error["status"]) == ("problem", "exited", 5), error
    assert error["message"] == "Model(...) called sys.exit(5)"
    assert json.loads(error["detail"].removeprefix("arguments "))["in_channels"] == 2


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


def test_the_search_reports_how_far_it_is_example_by_example():
    events = []
    result = fuzz_files(CASES / "conv2d_problem.py", CASES / "fewer_parameters.py", max_examples=12, device="cpu",
                        seed=0, on_event=events.append)  # fmt: skip
    steps = [e["step"] for e in events if e.get("event") == "progress" and "step" in e]
    counted = [int(step.split()[1]) for step in steps if step.startswith("example ")]
    assert all(step.startswith("example ") and " of 12" in step for step in steps), steps
    assert counted == sorted(counted) and counted[-1] == result["examples"], (counted, result["examples"])
