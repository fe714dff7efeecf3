"""fpa explain end to end on KernelBench-style cases built to have known causes: each must get the right
verdict on the CPU, through the worker processes the command starts.
"""

from __future__ import annotations

import pathlib

import pytest
from typer.testing import CliRunner

from fp_analysis.cli.app import app
from fp_analysis.model.verdict import CAUSES

from ..cli_runs import explain_args, fpa

CASES = pathlib.Path(__file__).parent.parent / "kernelbench_cases"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _store(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path / "store"))


def _explain(problem: str, solution: str, *extra: str):
    run = fpa(*explain_args(CASES / f"{problem}.py", CASES / f"{solution}.py", "--json", *extra))
    return run.code, run.data if run.data is not None else run.stdout + run.stderr


@pytest.mark.parametrize(
    ("problem", "solution", "extra", "verdict", "code"),
    [
        ("conv_problem", "conv_correct_fp32", ["--reference-mode", "tf32"], "reference_tf32", 0),  # the seed-000 story
        # These three verdicts are also in tests/unit/test_engine.py's in-process suite: end to end, on the device.
        pytest.param("conv_problem", "conv_other_order", [], "accumulation_order", 0, marks=pytest.mark.slow),
        pytest.param("conv_problem", "conv_bf16", [], "candidate_bf16", 0, marks=pytest.mark.slow),
        ("conv_problem", "conv_off_by_one", [], "bug", 1),
        pytest.param("gelu_problem", "gelu_tanh", [], "gelu_approximation", 0, marks=pytest.mark.slow),
        ("gelu_problem", "gelu_rng_order", [], "parameter_mismatch", 1),
    ],
)
def test_explain_names_the_cause(problem, solution, extra, verdict, code):
    exit_code, data = _explain(problem, solution, *extra)
    assert exit_code == code, data
    assert data["verdict"] == verdict
    assert data["explained"] is (code == 0)
    assert [c["name"] for c in data["causes"]] == [verdict]
    assert all(c["name"] in CAUSES and isinstance(c["residual_max"], float) for c in data["causes"])
    assert set(data) >= {
        "explained",
        "causes",
        "mismatch",
        "candidate_vs_fp64",
        "reference_vs_fp64",
        "recommended_tolerance",
        "trials",
    }
    assert len(data["trials"]) == 5 and {"max_abs", "mean_abs", "allclose_fail_fraction"} <= set(data["mismatch"])


@pytest.mark.parametrize(
    ("problem", "solution", "extra", "verdict", "code", "words"),
    [
        # a real kernel's init (kaiming a=2.236, not √5) under a TF32 reference: both causes, each with its share
        ("conv_problem", "conv_init_scaled", ["--reference-mode", "tf32"], "parameter_mismatch + reference_tf32", 1,
         "max relative difference 2.5"),
        # a GroupNorm written without its affine parameters (1 and 0 in the reference): right, whatever it holds
        ("norm_problem", "norm_without_affine", [], "accumulation_order", 0, "norm.weight (16,) has no candidate"),
        # the weight held in bf16, transposed, as a buffer: an arithmetic, not a mismatch
        ("linear_problem", "linear_bf16_weights", [], "candidate_bf16", 0, "rounded to bf16"),
        # 5e-5 too large in one channel, under a GroupNorm and a SiLU: a bug, located
        ("norm_problem", "norm_channel_bug", [], "bug", 1, "(channel 5: "),
        # CUDA autocast written out: bf16 conv results, the norm in fp32
        ("norm_problem", "norm_autocast", [], "candidate_bf16", 0, "torch.autocast(bfloat16)"),
        # a reference run under autocast, an fp32 kernel
        ("conv_problem", "conv_correct_fp32", ["--reference-mode", "autocast-bf16"], "reference_bf16", 0,
         "torch.autocast(bfloat16)"),
    ],
)  # fmt: skip
def test_parameters_are_evidence_and_a_small_bug_in_a_slice_is_located(problem, solution, extra, verdict, code, words):
    exit_code, data = _explain(problem, solution, *extra)
    assert (exit_code, data["verdict"], data["explained"]) == (code, verdict, code == 0), data
    text = " ".join([c["evidence"] for c in data["causes"]] + data["notes"])
    assert words in text, text


def test_tf32_story_numbers_and_tolerance():
    _, data = _explain("conv_problem", "conv_correct_fp32", "--reference-mode", "tf32")
    assert data["mismatch"]["failed_trials"] == 5  # fails the check, like the seed-000 kernel
    assert data["candidate_vs_fp64"]["max_abs"] < 1e-6 < data["reference_vs_fp64"]["max_abs"]
    tol = data["recommended_tolerance"]
    assert tol["rtol"] == 0.0 and tol["atol"] > data["mismatch"]["max_abs"]  # the principled tolerance passes it


def test_bug_is_located_at_the_edge_it_touches():
    _, data = _explain("conv_problem", "conv_off_by_one")
    assert "columns" in data["causes"][0]["evidence"] and "of 0…13" in data["causes"][0]["evidence"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--problem", "missing.py", "--solution", str(CASES / "conv_bf16.py")], "not found"),
        (["--problem", str(CASES / "conv_bf16.py"), "--solution", str(CASES / "conv_bf16.py")], "does not define"),
        (
            [
                "--problem",
                str(CASES / "conv_problem.py"),
                "--solution",
                str(CASES / "conv_bf16.py"),
                "--reference-mode",
                "fp8",
            ],
            "reference_mode='fp8'",
        ),
    ],
)
def test_usage_errors_exit_2(args, message):
    result = runner.invoke(app, ["explain", *args, "--device", "cpu"])
    assert result.exit_code == 2 and message in result.output


def test_a_long_job_off_a_terminal_says_what_it_is_doing_now_and_then(tmp_path, monkeypatch):
    """With stderr a file or a pipe (no status line), a job longer than the heartbeat prints a line on stderr every
    heartbeat naming the call under way; stdout stays the JSON alone."""
    from fp_analysis.cli.worker import WorkerStatus

    monkeypatch.setattr(WorkerStatus, "HEARTBEAT_S", 0.2)
    slow = tmp_path / "slow.py"
    sleeping = "    def forward(self, x):\n        __import__('time').sleep(0.8)\n"
    slow.write_text((CASES / "conv_correct_fp32.py").read_text().replace("    def forward(self, x):\n", sleeping))
    run = fpa(*explain_args(CASES / "conv_problem.py", slow, "--json", "--trials", "1", "--timeout", "60"))
    assert run.code == 0 and run.data["verdict"] == "accumulation_order", run.stderr[-2000:]  # fp64, rounded once
    beats = [line for line in run.stderr.splitlines() if line.startswith("fpa: ")]
    assert any("running the solution's ModelNew.forward (trial 1 of 1)" in line for line in beats), run.stderr[-2000:]


_LINEAR_PROBLEM = """
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 4)

    def forward(self, x):
{body}
        return self.linear(x)


def get_inputs():
    x = torch.rand(3, 8)
    x[0, 0] = {first}
    return [x]


def get_init_inputs():
    return []
"""


def _linear_pair(tmp_path, body="        pass", first="0.5", solution=None):
    problem = tmp_path / "problem.py"
    problem.write_text(_LINEAR_PROBLEM.format(body=body, first=first))
    (tmp_path / "solution.py").write_text(solution or problem.read_text().replace("class Model(", "class ModelNew("))
    return fpa(*explain_args(problem, tmp_path / "solution.py", "--json", "--timeout", "60"))


def test_a_candidate_giving_the_references_nans_is_identical_not_another_order(tmp_path):
    """Found by a bad-input hunt: torch.equal calls two NaNs different, so the same code read as another order."""
    run = _linear_pair(tmp_path, first="float('nan')")
    assert run.code == 0 and run.data["verdict"] == "identical", run.stdout + run.stderr
    assert run.data["mismatch"]["nonfinite"]["nan_reference"] == run.data["mismatch"]["nonfinite"]["nan_actual"] > 0


def test_a_model_that_changes_its_own_parameters_in_forward_is_compared_as_built(tmp_path):
    """The reference's parameters are taken as built, like the candidate's, not after the trials' forwards."""
    clamp = "        with torch.no_grad():\n            self.linear.weight.clamp_(-0.1, 0.1)"
    run = _linear_pair(tmp_path, body=clamp)
    assert run.code == 0 and run.data["verdict"] == "identical", run.stdout + run.stderr


def test_a_lazy_candidate_is_explained_with_its_parameters_left_uncompared(tmp_path):
    lazy = _LINEAR_PROBLEM.format(body="        pass", first="0.5").replace("class Model(", "class ModelNew(")
    run = _linear_pair(tmp_path, solution=lazy.replace("nn.Linear(8, 4)", "nn.LazyLinear(4)"))
    # its weights are drawn at its first forward, from the seed the check set before it: the reference's own
    assert run.code == 0 and run.data["verdict"] == "identical", run.stdout + run.stderr
    assert any("parameters not compared: ModelNew's linear.bias, linear.weight" in n for n in run.data["notes"])
