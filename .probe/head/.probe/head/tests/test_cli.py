"""fpa on KernelBench-style cases built to have known causes: each must get the right verdict on the CPU."""

from __future__ import annotations

import json
import pathlib

import pytest
import torch
from typer.testing import CliRunner

from fp_analysis import assert_equivalent
from fp_analysis.cli.app import app
from fp_analysis.model.verdict import CAUSES
from fp_analysis.store import read_store

from .cli_runs import explain_args, fpa

CASES = pathlib.Path(__file__).parent / "kernelbench_cases"
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
        # These three verdicts are also in tests/test_engine.py's in-process suite: end to end, on the device.
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


def test_report_json_csv_and_store(tmp_path):
    shape = "1,32,24,40"
    result = runner.invoke(app, ["report", "dilated_conv2d", "--input-shape", shape, "--samples", "300", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    rows = {r["variant"]: r for r in data["rows"]}
    assert rows["sequential/fma/none"]["max_abs"] < 1e-5 < rows["pytorch_tf32"]["max_abs"]
    assert rows["sequential/fma/none"]["error_over_bound"] <= 1 and rows["tf32_mma"]["max_abs"] is None
    csv_path = tmp_path / "rows.csv"
    assert (
        runner.invoke(
            app, ["report", "conv3d_kk1", "--batch", "1", "--samples", "200", "--csv", str(csv_path)]
        ).exit_code
        == 0
    )
    assert csv_path.read_text().splitlines()[0].startswith("variant,")
    stored = read_store(command="report").to_pylist()
    assert {r["variant"] for r in stored} >= {"pytorch_fp32", "pytorch_tf32"}
    assert all(r["meta_command"] == "report" and r["meta_seed"] == 0 for r in stored)


def test_tolerance_prints_its_reasoning():
    result = runner.invoke(app, ["tolerance", "conv3d_kk1", "--mode", "bf16", "--json"])
    data = json.loads(result.stdout)
    assert data["atol"] > data["measured_max"] > 0 and data["rtol"] == 0.0 and len(data["reasoning"]) >= 4
    assert runner.invoke(app, ["tolerance", "conv3d_kk1", "--mode", "int8"]).exit_code == 2


def test_assert_equivalent_adds_the_cause():
    torch.manual_seed(0)
    model = torch.nn.Conv2d(8, 4, 3, padding=1, bias=False)
    x = torch.rand(1, 8, 12, 12)
    with torch.no_grad():
        exact = torch.nn.functional.conv2d(x.double(), model.weight.double(), padding=1).float()
        tf32 = torch.nn.functional.conv2d(
            x.to(torch.bfloat16).float(), model.weight.to(torch.bfloat16).float(), padding=1
        )
    assert_equivalent(exact, exact.clone(), model=model, inputs=(x,))
    with pytest.raises(AssertionError, match="Mismatched elements") as info:
        assert_equivalent(tf32, exact, atol=1e-5, rtol=1e-5, model=model, inputs=(x,))
    assert "candidate_bf16" in str(info.value)
    with pytest.raises(AssertionError, match="Pass model="):
        assert_equivalent(tf32, exact, atol=1e-5, rtol=1e-5)


def test_assert_equivalent_takes_assert_closes_other_options():
    from fp_analysis import CloseOptions

    nan = torch.tensor([1.0, float("nan")])
    with pytest.raises(AssertionError, match="Pass model="):
        assert_equivalent(nan, nan.clone())
    assert_equivalent(nan, nan.clone(), close=CloseOptions(equal_nan=True))
    with pytest.raises(AssertionError, match="dtype"):
        assert_equivalent(nan.double(), nan, close=CloseOptions(equal_nan=True))
    assert_equivalent(nan.double(), nan, close=CloseOptions(equal_nan=True, check_dtype=False))
    with pytest.raises(AssertionError, match=r"^not equal\n"):
        assert_equivalent(torch.ones(2), torch.zeros(2), close=CloseOptions(msg="not equal"))


def test_a_reference_equal_to_the_cudnn_twin_is_recognised_bit_for_bit():
    """On a GPU with TF32 off, cuDNN's output is the fmaf chain; the engine must say so (residual exactly 0)."""
    from fpa_kernels import VariantSpec, twin

    from fp_analysis.model.engine import analyse_model
    from fp_analysis.ops.conv import spec_of_module

    torch.manual_seed(1)
    model = torch.nn.Conv2d(6, 4, 3, padding=1)
    x = torch.rand(1, 6, 9, 10)
    as_cudnn = torch.from_numpy(twin(VariantSpec("conv2d"), spec_of_module(model), x, model.weight, model.bias))
    with torch.no_grad():
        exact = torch.nn.functional.conv2d(x.double(), model.weight.double(), model.bias.double(), padding=1).float()
    analysis = analyse_model(model, [x], as_cudnn, exact)
    assert analysis.explained and [c.name for c in analysis.causes] == ["accumulation_order"]
    assert any(h.get("bitwise_equal") and h["side"] == "reference" for h in analysis.hypotheses)
    assert "bit for bit" in analysis.causes[0].evidence


def test_report_table_prints_labels_verbatim():
    """Variant labels carry brackets ("[tap_outer]"): the table must show them, not read them as markup."""
    result = runner.invoke(
        app, ["report", "dilated_conv2d", "--input-shape", "1,32,20,30", "--samples", "100", "--no-store"]
    )
    assert result.exit_code == 0, result.output
    assert "sequential/fma/none [tap_outer]" in result.output


@pytest.mark.parametrize(
    "argv",
    [["report", "conv2d"], ["tolerance", "conv2d", "--mode", "tf32"], ["fuzz", "conv2d"], ["bench", "conv2d"],
     ["orders", "--preset", "conv2d"]],
    ids=lambda argv: argv[0],
)  # fmt: skip
def test_every_command_takes_one_vocabulary_of_ops(argv):
    """report, tolerance, orders, fuzz and bench take the same op names (the presets'); the kernels' name for the
    dilated seed is refused with the name to use."""
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert "the only valid ops are 'dilated_conv2d', 'conv3d_kk1', 'conv_gelu'" in " ".join(result.output.split())
    assert "'conv2d' is what the kernels call 'dilated_conv2d'" in " ".join(result.output.split())


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
