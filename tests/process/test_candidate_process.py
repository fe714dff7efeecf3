"""The solution's own process (``CandidateProcess``): tensors cross between it and the worker and each process
keeps its own copy, a lazily negated output arrives negated, and each trial's inputs are the ones
KernelBench's sequence gives, a failing draw naming its trial.
"""

from __future__ import annotations

import pytest

from ..usercode_runs import WRITES_ITS_INPUT, run_solution


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path.parent / f"{tmp_path.name}-store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FPA_HYPOTHESIS_DB", raising=False)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_tensors_cross_and_each_process_keeps_its_own_copy(tmp_path, device):
    """The inputs and the output cross between the processes (on a GPU as CUDA IPC handles, no copy through the
    host: the output arrives on the GPU), the output is right, and what the solution wrote into its input stays
    in its own process."""
    import torch

    x = torch.rand(4, 1000, device=device)
    before = x.clone()
    (out, again), made_on, ipc = run_solution(tmp_path, WRITES_ITS_INPUT, x, calls=2)
    assert ipc and out.device.type == device and made_on.startswith(device)
    assert torch.equal(x, before)  # the worker's inputs are as they were
    assert torch.equal(out, (before + 1.0) * 2.0) and torch.equal(again, out)  # each call got a fresh copy


_COUNTED_INPUTS = """
import torch
from torch import nn

CALLS = []


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.drawn = nn.Linear(8, 8)  # its weights come from the seeded stream the trials' draws reseed

    def forward(self, x):
        return x * 2.0


def get_inputs():
    CALLS.append(1)
    if len(CALLS) == {fail_at}:
        raise RuntimeError("no more inputs")
    return [torch.rand(4, 8)]


def get_init_inputs():
    return []
"""


_DRIFTING = """
from torch import nn


class ModelNew(nn.Module):
    calls = 0

    def forward(self, x):
        ModelNew.calls += 1  # further off on each call: the last trial is the worst
        return x * 2.0 + 1e-3 * ModelNew.calls
"""


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_each_trials_inputs_are_kernelbenchs_and_a_failing_draw_names_its_trial(tmp_path, device):
    """On a GPU a trial's inputs are drawn in a thread while the candidate process works (builds ModelNew, runs
    the trial before): the reference is still built from KernelBench's seeded stream, each trial still gets the
    inputs KernelBench's sequence gives (its seed, then get_inputs()), and get_inputs() failing on a later trial
    is that trial's error, after the trials before it ran."""
    import torch

    from fp_analysis.errors import UserCodeError
    from fp_analysis.explain.kernelbench import load_problem, run_check
    from fp_analysis.run.candidate import CandidateProcess
    from fp_analysis.run.usercode import seed_all

    problem = tmp_path / "problem.py"
    problem.write_text(_COUNTED_INPUTS.replace("{fail_at}", "0"))
    solution = tmp_path / "solution.py"
    solution.write_text(_DRIFTING)
    dev = torch.device(device)
    with CandidateProcess(str(solution), tmp_path, timeout=60, cuda=dev.type == "cuda") as candidate:
        reference, _, results, worst = run_check(load_problem(problem), candidate, dev, trials=3, seed=7)
    seed_all(7)
    assert torch.equal(reference.drawn.weight.cpu(), torch.nn.Linear(8, 8).weight)
    generator = torch.Generator().manual_seed(7)
    seeds = [int(torch.randint(0, 2**31 - 1, (1,), generator=generator).item()) for _ in range(3)]
    assert [r.seed for r in results] == seeds
    assert worst.trial == 2  # drawn in the thread on a GPU
    seed_all(seeds[2])
    assert torch.equal(worst.inputs[0].cpu(), torch.rand(4, 8))
    settling = tmp_path / "settling.py"  # worst on its first call: the first trial's inputs, drawn while it builds
    settling.write_text(_DRIFTING.replace("1e-3 * ModelNew.calls", "1e-3 / ModelNew.calls"))
    with CandidateProcess(str(settling), tmp_path, timeout=60, cuda=dev.type == "cuda") as candidate:
        _, _, _, worst = run_check(load_problem(problem), candidate, dev, trials=3, seed=7)
    seed_all(seeds[0])
    assert worst.trial == 0 and torch.equal(worst.inputs[0].cpu(), torch.rand(4, 8))

    failing = tmp_path / "failing.py"
    failing.write_text(_COUNTED_INPUTS.replace("{fail_at}", "3"))
    failing_problem = load_problem(failing)
    with CandidateProcess(str(solution), tmp_path, timeout=60, cuda=dev.type == "cuda") as candidate:
        with pytest.raises(UserCodeError, match=r"get_inputs\(\) raised RuntimeError") as raised:
            run_check(failing_problem, candidate, dev, trials=3, seed=7)
    assert raised.value.details.get("detail") == "trial 3 of 3"
    assert len(failing_problem.module.CALLS) == 3  # the first two trials' draws came first


_NEGATED_VIEW = """
import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.complex(x, 2.0 * x).conj().imag  # a view with torch's lazy negation bit set
"""


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_an_output_with_a_lazy_negation_arrives_negated(tmp_path, device):
    """A CUDA IPC handle names memory, not torch's lazy bits: a negated view is resolved before it is shared."""
    import torch

    x = torch.rand(3, 5, device=device)
    (out,), _, _ = run_solution(tmp_path, _NEGATED_VIEW, x)
    assert torch.equal(out.to(device), -2.0 * x)
