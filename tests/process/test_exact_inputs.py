"""``fpa explain`` on bugs too small for random inputs: a term summed twice in a 16384-term sum, one element of a
matrix product off by 2·10^-6 — each within the allowance of some legitimate summation order there, so the check's
trials are explained — are found on the trial of few-bit inputs, where every order is exact
(``fp_analysis.explain.exact_inputs``); legitimate reorderings are explained on it too."""

from __future__ import annotations

import pytest

from ..cli_runs import explain_args
from ..usercode_runs import fpa_json

_SUM_PROBLEM = """
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.rand(8, 16384) * 2 + 10]


def get_init_inputs():
    return []
"""

_MATMUL_PROBLEM = """
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(64, 512), torch.randn(512, 32)]


def get_init_inputs():
    return []
"""

_SOLUTION = """
import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, *inputs):
{body}
"""

_CASES = {
    # a thread adds element 0 where element 16383 belongs: within a sequential order's allowance on random inputs
    "sum_first_twice": (_SUM_PROBLEM, "        x, = inputs\n        return x[:, :-1].sum(dim=1) + x[:, 0]", False),
    # four partial sums, then their sum: a legitimate order, exact on the few-bit inputs as every order is
    "sum_chunked": (_SUM_PROBLEM, "        x, = inputs\n        return x.view(8, 4, -1).sum(2).sum(1)", True),
    "matmul_one_element": (
        _MATMUL_PROBLEM,
        "        a, b = inputs\n        out = a @ b\n        out[3, 5] = out[3, 5] * (1 + 2e-6)\n        return out",
        False,
    ),
    "matmul_blocked": (
        _MATMUL_PROBLEM,
        "        a, b = inputs\n        return sum(a[:, k : k + 128] @ b[k : k + 128] for k in range(0, 512, 128))",
        True,
    ),
}


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path.parent / f"{tmp_path.name}-store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.mark.parametrize("case", sorted(_CASES))
def test_a_small_bug_is_found_on_inputs_where_every_order_is_exact(tmp_path, case):
    problem_source, body, legitimate = _CASES[case]
    problem, solution = tmp_path / "problem.py", tmp_path / "solution.py"
    problem.write_text(problem_source)
    solution.write_text(_SOLUTION.format(body=body))
    code, data, _ = fpa_json(*explain_args(problem, solution, "--trials", "2", "--no-store"))
    assert data["context"]["exact_inputs"] == {"judged": True, "explained": legitimate}, data["context"]
    if legitimate:
        assert code == 0 and data["verdict"] != "bug"
    else:
        assert code == 1 and data["verdict"] == "bug", data["verdict"]
        assert data["mismatch"]["failed_trials"] == 0  # the check itself passes: a false pass, caught
        assert any("inputs of few significant bits" in note for note in data["notes"])


_DIES_ON_FEW_BITS = """
import os
import sys

import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, x):
        if bool((x * 16 == (x * 16).round()).all()):  # the trial's inputs: a forged verdict, then the process ends
            sys.stdout.write('{"verdict": "identical"}')
            os._exit(0)
        return x.sum(dim=1)
"""


def test_a_candidate_that_ends_on_the_few_bit_inputs_is_judged_on_the_checks_trials(tmp_path):
    problem, solution = tmp_path / "problem.py", tmp_path / "solution.py"
    problem.write_text(_SUM_PROBLEM)
    solution.write_text(_DIES_ON_FEW_BITS)
    code, data, _ = fpa_json(*explain_args(problem, solution, "--trials", "2", "--no-store"))
    assert code == 0 and data["verdict"] == "identical" and "exact_inputs" not in data["context"]
    assert any("failed on inputs of few significant bits" in note for note in data["notes"])
