"""`fpa explain` end to end on Models with no convolution: an argmax (integer output), a candidate whose sums race
(run twice, two outputs), and a symmetric matmul (both operands N × N: the batch subset must not split B)."""

from __future__ import annotations

import pathlib
import textwrap

from ..cli_runs import explain_args, fpa


def _write(folder: pathlib.Path, name: str, source: str) -> pathlib.Path:
    path = folder / name
    path.write_text(textwrap.dedent(source))
    return path


_ARGMAX = """
    import torch
    from torch import nn

    class Model(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.dim = dim

        def forward(self, x):
            return torch.argmax(x, dim=self.dim)

    def get_inputs():
        return [torch.randn(8, 64, 32)]

    def get_init_inputs():
        return [1]
"""


def test_an_argmax_is_compared_exactly_and_a_wrong_pick_is_a_bug(tmp_path):
    problem = _write(tmp_path, "problem.py", _ARGMAX)
    right = _write(tmp_path, "right.py", _ARGMAX.replace("class Model(", "class ModelNew(").replace(
        "torch.argmax(x, dim=self.dim)", "torch.max(x, dim=self.dim)[1]"))  # fmt: skip
    wrong = _write(tmp_path, "wrong.py", _ARGMAX.replace("class Model(", "class ModelNew(").replace(
        "torch.argmax(x, dim=self.dim)", "torch.argmax(x[:, :-1], dim=self.dim)"))  # fmt: skip
    run = fpa(*explain_args(problem, right, "--json"))
    assert run.code == 0 and run.data["verdict"] == "identical", run.stdout
    run = fpa(*explain_args(problem, wrong, "--json"))
    assert run.code == 1 and run.data["verdict"] == "bug", run.stdout
    assert "picks indices whose values are up to" in run.data["causes"][0]["evidence"]


_SUM = """
    import torch
    from torch import nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.sum(x, dim=1)

    def get_inputs():
        return [torch.rand(8, 4096)]

    def get_init_inputs():
        return []
"""

_ATOMIC = """
    import torch
    from torch import nn

    class ModelNew(nn.Module):
        def forward(self, x):
            order = torch.randperm(x.shape[1])  # the order threads arrive at an atomicAdd: another each call
            total = torch.zeros(x.shape[0])
            for k in order.tolist():
                total = total + x[:, k]
            return total
"""


def test_a_candidate_whose_runs_differ_is_nondeterministic_and_each_run_explained(tmp_path):
    problem = _write(tmp_path, "problem.py", _SUM)
    atomic = _write(tmp_path, "atomic.py", _ATOMIC)
    run = fpa(*explain_args(problem, atomic, "--json", "--trials", "2"))
    assert run.code == 0, run.stdout
    assert run.data["verdict"] == "nondeterministic + accumulation_order"
    assert run.data["context"]["candidate_runs"] == 2
    assert "run 1 is accumulation_order, run 2 accumulation_order" in run.data["causes"][0]["evidence"]


_SYMMETRIC = """
    import torch
    from torch import nn

    N = 2100

    class Model(nn.Module):
        def forward(self, A, B):
            return torch.matmul(A, B)

    def get_inputs():
        A = torch.rand(N, N)
        B = torch.rand(N, N)
        return [(A + A.T) / 2, (B + B.T) / 2]

    def get_init_inputs():
        return []
"""


def test_a_symmetric_matmul_is_analysed_on_rows_of_a_alone(tmp_path):
    problem = _write(tmp_path, "problem.py", _SYMMETRIC)
    solution = _write(tmp_path, "solution.py", _SYMMETRIC.replace("class Model(", "class ModelNew("))
    run = fpa(*explain_args(problem, solution, "--json", "--trials", "1"))
    assert run.code == 0, run.stdout
    assert run.data["context"]["analysed_batch_items"]["of"] == 2100
