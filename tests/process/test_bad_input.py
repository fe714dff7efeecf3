"""Bad options and arguments of every command are refused before any work, with exit 2 and the message on
stderr and in ``--json``.
"""

from __future__ import annotations

import time

import pytest

from fp_analysis.errors import ExitCode

from ..usercode_runs import CASES, FUZZ, fpa_json


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path.parent / f"{tmp_path.name}-store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FPA_HYPOTHESIS_DB", raising=False)


def _explain_raises(*options: str) -> list[str]:
    """``fpa explain`` of the problem and the raising solution with ``options``: refused before anything runs."""
    return ["explain", "--problem", str(CASES / "problem.py"), "--solution", str(CASES / "raises.py"), *options]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            _explain_raises("--trials", "0"),
            "trials=0",
        ),
        (  # a typo's 10^9 trials would draw their seeds for minutes before any timeout applied
            _explain_raises("--trials", "1000000000"),
            r"trials=1000000000, but trials must be an integer >= 1 and <= 10000",
        ),
        (
            _explain_raises("--samples", "0"),
            "samples=0",
        ),
        (
            _explain_raises("--timeout", "0"),
            "timeout=0",
        ),
        (
            ["explain", "--problem", str(CASES / "nowhere.py"), "--solution", str(CASES / "raises.py")],
            "problem=",
        ),
        (
            ["explain", "--problem", str(CASES / "problem.py"), "--solution", str(CASES / "missing_model_new.py")],
            "does not define ModelNew",
        ),
        (["report", "dilated_conv2d", "--input-shape", "100000,32,512,512"], "needs about"),
        (["report", "dilated_conv2d", "--samples", "0"], "--samples 0"),
        (["report", "dilated_conv2d", "--csv", "/nonexistent-folder/rows.csv"], "does not exist"),
        (["tolerance", "conv3d_kk1", "--samples", "0"], "--samples 0"),
        (["fuzz", "dilated_conv2d", "--max-examples", "0"], "max_examples=0"),
        (
            [
                "fuzz",
                "--problem",
                str(FUZZ / "conv2d_problem.py"),
                "--solution",
                str(FUZZ / "correct_fp64.py"),
                "--replay",
                '{"config":{},"data":{}}',
            ],
            "input_shapes",
        ),
        (
            [
                "fuzz",
                "--problem",
                str(FUZZ / "conv2d_problem.py"),
                "--solution",
                str(FUZZ / "correct_fp64.py"),
                "--replay",
                "not json",
            ],
            "not JSON",
        ),
        (["report", "dilated_conv2d", "--input-shape", "8,x,4"], "--input-shape must look like"),
        (["explain", "--problem", str(CASES / "problem.py")], "Missing option '--solution'"),
    ],
)
def test_bad_options_are_refused_before_any_work_with_exit_2(args, message):
    start = time.monotonic()
    code, data, stderr = fpa_json(*args)
    assert code == ExitCode.USAGE == 2
    assert data["error"]["exit_code"] == 2 and message in data["error"]["message"], data
    assert message in stderr
    assert time.monotonic() - start < 30  # refused up front, not after the computation


@pytest.mark.parametrize(
    "args",
    [
        ["explain", "--problem", str(CASES / "problem.py"), "--solution", str(CASES / "raises.py"),
         "--seed", str(2**64)],
        ["report", "dilated_conv2d", "--seed", str(2**64)],
        ["tolerance", "dilated_conv2d", "--samples", "30000000"],
        ["fuzz", "dilated_conv2d", "--timeout", "inf"],
        ["fuzz", "dilated_conv2d", "--seed", "-1"],
        ["fuzz", "--problem", str(FUZZ / "conv2d_problem.py"), "--solution", str(FUZZ / "correct_fp64.py"),
         "--replay", '{"config":{"groups":0,"input_shapes":[[1,4,9,9]]},"data":{"kind":"uniform","seed":0,'
         '"layout":"contiguous"}}'],
        ["fuzz", "--problem", str(FUZZ / "conv2d_problem.py"), "--solution", str(FUZZ / "correct_fp64.py"),
         "--replay", '{"config":{"input_shapes":[[100000,4,1000,1000]]},"data":{"kind":"uniform","seed":0,'
         '"layout":"contiguous"}}'],
    ],
)  # fmt: skip
def test_more_bad_options_exit_2(args):
    code, data, _ = fpa_json(*args)
    assert code == 2 and data["error"]["kind"] == "usage", data


def test_with_its_stdout_and_stderr_closed_fpa_still_ends_with_the_documented_status(tmp_path):
    """``fpa … >&- 2>&-``: nothing to print to, and the exit status still the verdict's (0 explained, 1 a bug)."""
    import os
    import pathlib
    import shlex
    import subprocess
    import sys

    runs = pathlib.Path(__file__).resolve().parents[2] / "examples" / "runs"
    env = {**os.environ, "FPA_STORE": str(tmp_path / "store")}
    for folder, solution, code in (("gemm_gelu", "fused.py", ExitCode.OK), ("gemm_add_relu", "bias_off_by_one.py",
                                                                            ExitCode.NOT_EXPLAINED)):  # fmt: skip
        files = ["--problem", str(runs / folder / "problem.py"), "--solution", str(runs / folder / solution)]
        command = [
            sys.executable,
            "-m",
            "fp_analysis",
            "explain",
            *files,
            "--device",
            "cpu",
            "--trials",
            "1",
            "--no-store",
        ]
        closed = subprocess.run(["bash", "-c", f"{shlex.join(command)} >&- 2>&-"], env=env, timeout=120)
        assert closed.returncode == code, (solution, closed.returncode)
