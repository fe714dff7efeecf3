"""The `fpa` command line run in tests (in this process, through typer's runner): one helper for every test file.

``fpa(*args)`` returns the exit code, stdout parsed as strict JSON (None when it is not JSON), and both
streams; ``explain_args`` spells the usual explain invocation on the CPU.
"""

from __future__ import annotations

import json
import pathlib
from typing import NamedTuple

from typer.testing import CliRunner

from fp_analysis.cli import app

_runner = CliRunner()


class Run(NamedTuple):
    code: int
    data: dict | None
    stdout: str
    stderr: str


def strict_json(text: str) -> dict | None:
    """``text`` parsed as JSON that any parser takes (no NaN or Infinity tokens), or None."""

    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(text, parse_constant=refuse)
    except ValueError:
        return None


def fpa(*args: str) -> Run:
    result = _runner.invoke(app, [str(a) for a in args])
    return Run(result.exit_code, strict_json(result.stdout), result.stdout, result.stderr)


def explain_args(problem: pathlib.Path, solution: pathlib.Path, *extra: str) -> list[str]:
    return ["explain", "--problem", str(problem), "--solution", str(solution), "--device", "cpu", *extra]
