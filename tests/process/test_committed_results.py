"""The committed GPU results describe the committed kernels/ (its tree read with ``git rev-parse``):
experiments/results/gpu_validation.json says the validation passed, bench_h200.json has every row.
"""

from __future__ import annotations

import json
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_committed_gpu_artifact_describes_committed_kernels():
    """If a validation artifact is committed, it must validate the kernels in this tree and say it passed."""
    path = ROOT / "experiments" / "results" / "gpu_validation.json"
    if not path.exists():
        pytest.skip("no GPU validation artifact committed yet")
    data = json.loads(path.read_text())
    git = subprocess.run(["git", "rev-parse", "HEAD:kernels"], capture_output=True, text=True, cwd=ROOT)
    tree = git.stdout.strip()
    if git.returncode == 0 and len(tree) == 40:  # in a git checkout: it must have validated the committed kernels/
        recorded = data["environment"]["kernels_tree"]
        assert recorded == tree, f"kernels/ is {tree} but the GPU validation ran on {recorded}: re-run it"

    summary = data["summary"]
    assert summary["twinned_bitwise_equal"] == summary["twinned_records"]
    assert all(n >= 50 for n in summary["configs_per_op"].values())
    assert summary["all_within_bound"] and summary["all_written"] and summary["sanitizer_clean"]
    assert data["seed000_full"]["twin_bitwise_equal_on_2000_samples"]


REQUIRED = {"op", "variant", "kind", "time_ms", "max_abs_err_vs_fp64", "tflops", "reps"}


def _committed(name: str) -> dict:
    path = ROOT / "experiments" / "results" / name
    if not path.exists():
        pytest.skip(f"no {name} committed yet")
    return json.loads(path.read_text())


def test_committed_bench_describes_committed_kernels_and_has_every_row():
    data = _committed("bench_h200.json")
    git = subprocess.run(["git", "rev-parse", "HEAD:kernels"], capture_output=True, text=True, cwd=ROOT)
    if git.returncode == 0 and len(git.stdout.strip()) == 40:
        assert data["kernels_tree"] == git.stdout.strip(), "kernels/ changed since the bench ran: re-run it"
    assert data["kernels_tree"] == _committed("gpu_validation.json")["environment"]["kernels_tree"]
    for op in ("conv2d", "conv3d_kk1", "conv_gelu"):
        rows = {r["variant"]: r for r in data["records"] if r["op"] == op}
        assert {"cudnn_fp32", "cudnn_tf32", "cudnn_fp64", "reference_fp64"} <= set(rows)
        assert any(v.endswith("tiled") for v in rows)
        assert all(REQUIRED <= set(r) for r in rows.values())
        assert (ROOT / "experiments" / "figures" / f"bench_{op}_h200.png").exists()
        # The fast fp64 reference must agree with cuDNN's fp64 to fp64 rounding (relative 1e-12 is far above it).
        ref = rows["reference_fp64"]
        assert ref["max_abs_err_vs_fp64"] <= 1e-12 * max(1.0, ref["max_abs_ref"])
