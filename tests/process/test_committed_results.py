"""The committed GPU results describe the committed kernels/ (its tree read with ``git rev-parse``):
experiments/results/gpu_validation.json says the validation passed, bench_h200.json has every row.

kernels/ may have grown since they ran, by kernels they do not validate (``_only_grown``): new files, and registry
rows for those files alone, nothing of the validated tree removed or changed.
"""

from __future__ import annotations

import json
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT)


def _only_grown(recorded: str, tree: str) -> list[str]:
    """Why kernels/ at ``tree`` is not the validated ``recorded`` tree grown by new kernels alone ([] where it is):
    every file of ``recorded`` is unchanged but for lines added to registry.py, and those lines name only sources
    that ``recorded`` did not have (rows for the new kernels: the validated kernels' rows, builds and launches are
    the recorded ones)."""
    numstat = _git("diff", "--numstat", recorded, tree)
    status = _git("diff", "--name-status", recorded, tree)
    if _git("cat-file", "-e", recorded).returncode:
        pytest.skip(f"the validated tree {recorded} is not in this clone (a shallow one): it cannot be compared")
    if numstat.returncode or status.returncode:
        return [f"git cannot compare {recorded} with {tree}: {numstat.stderr.strip()}"]
    added = {line.split("\t")[1] for line in status.stdout.splitlines() if line.startswith("A\t")}
    problems = []
    for line in numstat.stdout.splitlines():
        _, minus, name = line.split("\t")
        if minus != "0":
            problems.append(f"{name}: {minus} line(s) of the validated tree removed or changed")
        elif name not in added and name != "registry.py":
            problems.append(f"{name}: a validated file with lines added")
    registry = _git("diff", "-U0", recorded, tree, "--", "registry.py").stdout
    new_lines = [line[1:] for line in registry.splitlines() if line.startswith("+") and not line.startswith("+++")]
    named = set(re.findall(r'"([\w.]+\.cuh?)"', "\n".join(new_lines)))
    problems += [f"registry.py: an added row names {source}, a validated source" for source in named - added]
    return problems


def test_committed_gpu_artifact_describes_committed_kernels():
    """If a validation artifact is committed, it must validate the kernels in this tree and say it passed."""
    path = ROOT / "experiments" / "results" / "gpu_validation.json"
    if not path.exists():
        pytest.skip("no GPU validation artifact committed yet")
    data = json.loads(path.read_text())
    git = _git("rev-parse", "HEAD:kernels")
    tree = git.stdout.strip()
    if git.returncode == 0 and len(tree) == 40:  # in a git checkout: it must have validated the committed kernels/
        recorded = data["environment"]["kernels_tree"]
        if recorded != tree:
            problems = _only_grown(recorded, tree)
            assert not problems, f"kernels/ is {tree} but the GPU validation ran on {recorded}: re-run it ({problems})"

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
    git = _git("rev-parse", "HEAD:kernels")
    tree = git.stdout.strip()
    if git.returncode == 0 and len(tree) == 40 and data["kernels_tree"] != tree:
        problems = _only_grown(data["kernels_tree"], tree)
        assert not problems, f"kernels/ changed since the bench ran: re-run it ({problems})"
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
