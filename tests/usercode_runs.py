"""``fpa`` on the solutions of ``usercode_cases`` (and the pairs of ``fuzz_cases``), in this process through
typer's runner, and a solution's own process driven directly: the helpers of the tests that check what becomes
of user code that fails (process/test_user_code_*.py, test_wrong_outputs.py, test_bad_input.py,
test_fuzz_failures.py, test_interrupts.py, test_candidate_process.py; unit/test_cli_errors.py;
gpu/test_cuda_ipc.py).
"""

from __future__ import annotations

import pathlib

from .cli_runs import explain_args, fpa

CASES = pathlib.Path(__file__).parent / "usercode_cases"
FUZZ = pathlib.Path(__file__).parent / "fuzz_cases"


def fpa_json(*args: str):
    """Exit code, parsed --json stdout, stderr of one command; never a raw traceback on stderr."""
    run = fpa(*args, "--json")
    assert "Traceback (most recent call last)" not in run.stderr, run.stderr  # (the JSON may carry the user's)
    return run.code, run.data, run.stderr


def explain_json(solution: str, problem: str = "problem", *extra: str):
    return fpa_json(*explain_args(CASES / f"{problem}.py", CASES / f"{solution}.py", "--trials", "2", *extra))


def explain_text(solution: str, problem: str = "problem", *extra: str):
    """The same in text mode: what a person sees."""
    return fpa(*explain_args(CASES / f"{problem}.py", CASES / f"{solution}.py", "--no-store", *extra))


WRITES_ITS_INPUT = """
import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, x):
        x.add_(1.0)  # a kernel that writes into its input
        return x * 2.0
"""


def run_solution(tmp_path, source: str, x, calls: int = 1):
    """``ModelNew`` of ``source`` built on x's device in the solution's own process and called on x ``calls``
    times: (the outputs, the device the first was made on, whether CUDA IPC stayed on)."""
    from fp_analysis.run.candidate import CandidateProcess

    solution = tmp_path / "solution.py"
    solution.write_text(source)
    with CandidateProcess(str(solution), tmp_path, timeout=60, cuda=x.is_cuda) as candidate:
        candidate.loaded()
        candidate.build([], {}, 0, x.device, where="ModelNew()")
        replies = [candidate.forward([x], like=x) for _ in range(calls)]  # the cases return x's shape
        return [out for out, _, _ in replies], replies[0][1], candidate.ipc
