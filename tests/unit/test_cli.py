"""fpa's commands that start no worker (report, tolerance, the op names every command takes) and
assert_equivalent, which names the cause of a failed comparison in this process.
"""

from __future__ import annotations

import json

import pytest
import torch
from typer.testing import CliRunner

from fp_analysis import assert_equivalent
from fp_analysis.cli.app import app
from fp_analysis.store import read_store

runner = CliRunner()


@pytest.fixture(autouse=True)
def _store(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path / "store"))


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
