"""`fpa bench`'s pieces that need no GPU: file names, the Pareto front, the merged results file, the plot, its
refusals and the replot. The committed H200 results are checked in process/test_committed_results.py.
"""

from __future__ import annotations

import json

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from fp_analysis.cli.app import app
from fp_analysis.errors import ParameterError
from fp_analysis.study.bench import BenchResult, bench, gpu_slug, pareto_front, plot_pareto, save


def _row(op: str, variant: str, time_ms: float, err: float) -> dict:
    return {"op": op, "variant": variant, "kind": "fpa", "time_ms": time_ms, "max_abs_err_vs_fp64": err}


def test_gpu_slug_is_a_short_file_name():
    assert gpu_slug("NVIDIA H100 80GB HBM3") == "h100"
    assert gpu_slug("NVIDIA H200") == "h200"
    assert gpu_slug("Some Card (rev 2)") == "some_card_rev_2"


@given(st.lists(st.tuples(st.floats(0.1, 100), st.floats(1e-9, 1e-3)), min_size=1, max_size=30))
def test_pareto_front_is_exactly_the_undominated_rows(points):
    rows = [_row("conv2d", str(i), t, e) for i, (t, e) in enumerate(points)]
    front = pareto_front(rows)

    def dominates(a, b):
        better_or_equal = a["time_ms"] <= b["time_ms"] and a["max_abs_err_vs_fp64"] <= b["max_abs_err_vs_fp64"]
        return better_or_equal and (a["time_ms"], a["max_abs_err_vs_fp64"]) != (b["time_ms"], b["max_abs_err_vs_fp64"])

    on_front = {r["variant"] for r in front}
    for r in rows:
        assert (r["variant"] in on_front) == (not any(dominates(o, r) for o in rows))
    assert [r["time_ms"] for r in front] == sorted(r["time_ms"] for r in front)


def test_save_merges_ops_and_drops_rows_of_other_kernels(tmp_path):
    path = tmp_path / "bench_x.json"
    meta = {"device": "GPU", "kernels_tree": "a" * 40}
    save(BenchResult("conv2d", meta, [_row("conv2d", "v1", 1.0, 1e-6)]), path)
    save(BenchResult("conv_gelu", meta, [_row("conv_gelu", "v1", 2.0, 1e-6)]), path)
    data = save(BenchResult("conv2d", meta, [_row("conv2d", "v2", 3.0, 1e-6)]), path)
    assert sorted((r["op"], r["variant"]) for r in data["records"]) == [("conv2d", "v2"), ("conv_gelu", "v1")]
    assert json.loads(path.read_text()) == data and not list(tmp_path.glob("*.tmp"))
    data = save(BenchResult("conv3d_kk1", {**meta, "kernels_tree": "b" * 40}, [_row("conv3d_kk1", "v", 1, 0)]), path)
    assert [r["op"] for r in data["records"]] == ["conv3d_kk1"] and list(data["ops"]) == ["conv3d_kk1"]


def test_plot_pareto_writes_a_png(tmp_path):
    meta = {"preset": "dilated_conv2d", "input_shape": [1, 2, 3, 4], "device": "GPU"}
    rows = [_row("conv2d", "a", 1.0, 1e-6), _row("conv2d", "b", 2.0, 0.0), _row("conv2d", "c", 0.5, 1e-3)]
    plot_pareto(BenchResult("conv2d", meta, rows), tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_refuses_bad_input_and_machines_without_a_gpu():
    with pytest.raises(ParameterError, match="op='conv1d'"):
        bench("conv1d")
    # One vocabulary: every command takes the presets' names, and the kernels' name of one says which it is.
    result = CliRunner().invoke(app, ["bench", "conv2d"])
    assert result.exit_code == 2 and "'conv2d' is what the kernels call 'dilated_conv2d'" in result.output
    if not torch.cuda.is_available():
        with pytest.raises(ParameterError, match="needs a CUDA GPU"):
            bench("dilated_conv2d")
        result = CliRunner().invoke(app, ["bench", "dilated_conv2d"])
        assert result.exit_code == 2 and "needs a CUDA GPU" in result.output


def test_replot_redraws_from_a_results_file_without_a_gpu(tmp_path):
    meta = {"device": "NVIDIA H100 80GB HBM3", "kernels_tree": "a" * 40, "preset": "p", "input_shape": [1, 2, 3, 4]}
    save(
        BenchResult("conv2d", meta, [_row("conv2d", "a", 1.0, 1e-6), _row("conv2d", "b", 2.0, 0.0)]),
        tmp_path / "b.json",
    )
    runner = CliRunner()
    result = runner.invoke(
        app, ["bench", "dilated_conv2d", "--replot", str(tmp_path / "b.json"), "--figure", str(tmp_path / "f.png")]
    )
    assert result.exit_code == 0 and (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    result = runner.invoke(app, ["bench", "conv_gelu", "--replot", str(tmp_path / "b.json")])
    assert result.exit_code == 2 and "no rows for op='conv_gelu'" in result.output
