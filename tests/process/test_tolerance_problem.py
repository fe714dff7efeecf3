"""``fpa tolerance --problem`` as a user runs it: the ``fpa`` script in a process of its own, the problem's code in
fpa's worker process."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
# the project's venv's script where there is one, else the one installed beside this interpreter
FPA = next((p for p in (ROOT / ".venv" / "bin" / "fpa", pathlib.Path(sys.executable).with_name("fpa")) if p.exists()),
           None)  # fmt: skip

PROBLEM = """
import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.softmax(self.linear(x), dim=-1)


def get_inputs():
    return [torch.randn(8, 32)]


def get_init_inputs():
    return [32, 16]
"""


def _fpa(tmp_path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "FPA_STORE": str(tmp_path / "store")}
    return subprocess.run([str(FPA), *args], capture_output=True, text=True, env=env, timeout=120)


def test_fpa_tolerance_problem_prints_every_precisions_tolerance_and_the_checks_power(tmp_path):
    problem = tmp_path / "problem.py"
    problem.write_text(PROBLEM)
    done = _fpa(tmp_path, "tolerance", "--problem", str(problem), "--json", "--device", "cpu")
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert [row["precision"] for row in result["needed"]] == ["fp32", "tf32", "bf16", "fp16"]
    atol = {row["precision"]: row["atol"] for row in result["needed"]}
    assert 0 < atol["fp32"] < atol["tf32"] < atol["bf16"]  # a Linear: each format rounds its operands
    assert (result["atol"], result["rtol"]) == (0.01, 0.01)  # KernelBench's check by default
    assert [p["name"] for p in result["power"]] == ["zeros", "first input", "mean"]
    assert result["power"][1]["why_not"].startswith("n/a: shape differs")  # 8×32 in, 8×16 out
    assert result["blind"] is False and result["shape"] == [8, 16]
    assert result["context"]["problem"] == str(problem.resolve()) and result["context"]["seed"] == 42
    assert result["worker"]["seconds"] > 0


def test_a_missing_problem_file_is_a_usage_error_naming_it(tmp_path):
    missing = tmp_path / "nowhere.py"
    done = _fpa(tmp_path, "tolerance", "--problem", str(missing), "--json")
    assert done.returncode == 2
    error = json.loads(done.stdout)["error"]
    assert error["kind"] == "usage" and f"problem={str(missing)!r}" in error["message"]
    assert "not found" in error["message"] and "not found" in done.stderr and "Traceback" not in done.stderr


def test_the_command_and_its_launcher_import_no_torch():
    """The supervising process stays light: the problem (and torch) are the worker's."""
    code = "import sys, fp_analysis.cli.tolerance, fp_analysis.study.problem_tolerance; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
