"""The `fpa` command line run in tests (in this process, through typer's runner): one helper for every test file.

``fpa(*args)`` returns the exit code, stdout parsed as strict JSON (None when it is not JSON), and both
streams; ``explain_args`` spells the usual explain invocation on the CPU.
"""

from __future__ import annotations

import pathlib
from typing import NamedTuple

from typer.testing import CliRunner

from fp_analysis.cli.app import app
from fp_analysis.records import loads_strict

_runner = CliRunner()


class Run(NamedTuple):
    code: int
    data: dict | None
    stdout: str
    stderr: str


def fpa(*args: str) -> Run:
    result = _runner.invoke(app, [str(a) for a in args])
    return Run(result.exit_code, loads_strict(result.stdout), result.stdout, result.stderr)


def explain_args(problem: pathlib.Path, solution: pathlib.Path, *extra: str) -> list[str]:
    return ["explain", "--problem", str(problem), "--solution", str(solution), "--device", "cpu", *extra]
