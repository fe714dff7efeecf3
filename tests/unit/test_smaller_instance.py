"""A problem whose fp64 analysis does not fit is measured on a smaller instance: the sizes get_inputs alone reads,
halved (the batch first) until the copies fit, said in a note and in the context."""

from __future__ import annotations

import pytest
import torch

from fp_analysis.errors import AnalysisMemoryError, Fate, OutOfScopeError, Side, UserCodeError
from fp_analysis.explain import smaller
from fp_analysis.explain.kernelbench import load_problem
from fp_analysis.study import problem_tolerance
from fp_analysis.study.problem_tolerance import ToleranceOptions

PROBLEM = """
import torch
from torch import nn

batch_size = 16
features = 8
dim = 64


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.features = features

    def forward(self, x):
        return x / torch.norm(x, p="fro")


def get_inputs():
    return [torch.rand(batch_size, features, dim)]


def get_init_inputs():
    return [features]
"""


def _problem(tmp_path):
    path = tmp_path / "frobenius.py"
    path.write_text(PROBLEM)
    return path


def test_the_sizes_of_the_inputs_alone_are_the_ones_get_init_inputs_does_not_read(tmp_path):
    assert smaller.input_sizes(load_problem(_problem(tmp_path))) == {"batch_size": 16, "dim": 64}


def test_the_batch_is_halved_first_until_the_copies_fit(tmp_path, monkeypatch):
    problem = load_problem(_problem(tmp_path))
    largest = 16 * 8 * 64
    monkeypatch.setattr(smaller, "available_bytes", lambda device: largest * 8 * 4 / 0.8 / 8 + 1)  # an eighth
    changed = smaller.shrink(problem, 16, largest, copies=4, device="cpu", why=AnalysisMemoryError("too big"))
    assert changed == {"batch_size": [16, 2]} and problem.module.batch_size == 2
    assert problem.module.get_inputs()[0].shape == (2, 8, 64)
    monkeypatch.setattr(smaller, "available_bytes", lambda device: 10)  # nothing fits: the reason is kept
    with pytest.raises(AnalysisMemoryError, match="too big — and the problem's input sizes"):
        smaller.shrink(problem, 2, largest, copies=4, device="cpu", why=AnalysisMemoryError("too big"))


def test_a_tolerance_that_does_not_fit_is_measured_on_a_smaller_instance_and_says_so(tmp_path, monkeypatch):
    measured = []
    real = problem_tolerance.tolerance_of

    def tolerance_of(model, inputs, **kwargs):  # the first size does not fit, as on a device too small for it
        measured.append(tuple(inputs[0].shape))
        if len(measured) == 1:
            raise AnalysisMemoryError("the fp64 copies need 2 GB, 1 GB available")
        return real(model, inputs, **kwargs)

    monkeypatch.setattr(problem_tolerance, "tolerance_of", tolerance_of)
    monkeypatch.setattr(smaller, "available_bytes", lambda device: 16 * 8 * 64 * 8 * 16 / 0.8 / 2 + 1)  # a half
    options = ToleranceOptions(device="cpu", timeout=60).to_json()
    result = problem_tolerance.tolerance_job(_problem(tmp_path), options=options, timeout=60, folder=str(tmp_path))
    assert measured == [(16, 8, 64), (8, 8, 64)]
    assert result["context"]["smaller_instance"] == {"batch_size": [16, 8]}
    assert result["notes"][0].startswith("measured on a smaller instance of the problem (batch_size 16 → 8")
    assert tuple(result["shape"]) == (8, 8, 64) and result["needed"][0]["atol"] > 0


# ----------------------------------------------------------------------------- fpa explain on a smaller instance

SOLUTION = """
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()

    def forward(self, x):
        {body}
"""

_BODIES = {
    "same": 'return x / torch.norm(x, p="fro")',
    "sizes written in": 'return x.reshape(16, 8, 64) / torch.norm(x, p="fro")',
    "last term dropped": "return x / x.flatten()[:-1].square().sum().sqrt()",
}


def _explain(tmp_path, monkeypatch, body: str, problem: str = PROBLEM, available: float | None = None,
             solution: str = SOLUTION, **asked) -> dict:  # fmt: skip
    """``fpa explain``'s job in this process on the Frobenius problem, whose fp64 analysis is made not to fit at its
    own size (half of what it needs is available): the check at full size, the analysis on batch_size 8."""
    from fp_analysis.explain import job
    from fp_analysis.numerics import memory
    from fp_analysis.options import ExplainOptions

    half = smaller.FP64_COPIES * 8 * (16 * 8 * 64) / 0.8 / 2 + 1 if available is None else available
    monkeypatch.setattr(smaller, "available_bytes", lambda device: half)
    monkeypatch.setattr(memory, "available_bytes", lambda device: half)
    text = solution
    solution = tmp_path / "solution.py"
    solution.write_text(text.format(body=body))
    options = ExplainOptions(device="cpu", timeout=60, **asked).to_json()
    path = tmp_path / "problem.py"
    path.write_text(problem)
    return job.explain_job(path, solution, options=options, timeout=60, folder=str(tmp_path))


def test_an_explanation_that_does_not_fit_is_analysed_on_a_smaller_instance_and_says_so(tmp_path, monkeypatch):
    result = _explain(tmp_path, monkeypatch, _BODIES["same"])
    assert result["verdict"] == "identical" and result["explained"]
    assert result["context"]["smaller_instance"] == {"batch_size": [16, 8]}
    assert result["notes"][0].startswith("analysed on a smaller instance of the problem (batch_size 16 → 8")
    assert result["context"]["full_size_check_ran"] and result["mismatch"]["outputs"] == 16 * 8 * 64  # the grader's
    assert result["context"]["analysed_check"]["outputs"] == 8 * 8 * 64  # the check on the instance analysed


def test_a_bug_is_still_found_on_the_smaller_instance(tmp_path, monkeypatch):
    result = _explain(tmp_path, monkeypatch, _BODIES["last term dropped"])
    assert result["verdict"] == "bug" and not result["explained"]
    assert result["context"]["smaller_instance"] == {"batch_size": [16, 8]}


def test_a_solution_that_fails_on_the_smaller_instance_alone_is_out_of_scope_not_its_failure(tmp_path, monkeypatch):
    with pytest.raises(OutOfScopeError, match=r"smaller instance made for it \(batch_size 16 → 8\) ModelNew.forward"):
        _explain(tmp_path, monkeypatch, _BODIES["sizes written in"])


def test_a_check_that_runs_out_of_memory_at_full_size_is_run_on_the_smaller_instance_and_says_so(tmp_path, monkeypatch):
    from fp_analysis.explain import job

    # its forward runs out of memory at the full batch, as beside our copies of its tensors on a GPU
    problem = PROBLEM.replace(
        "return x / torch.norm",
        'if x.shape[0] == 16:\n            raise torch.OutOfMemoryError("CUDA out of memory")\n'
        "        return x / torch.norm",
    )
    result = _explain(tmp_path, monkeypatch, _BODIES["same"], problem)
    assert result["verdict"] == "identical" and result["context"]["smaller_instance"] == {"batch_size": [16, 8]}
    assert result["context"]["full_size_check_ran"] is False and result["mismatch"]["outputs"] == 8 * 8 * 64
    assert result["notes"][1] == job._NO_FULL_SIZE_CHECK


def test_a_bug_only_the_full_size_shows_is_never_explained_on_the_smaller_instance(tmp_path, monkeypatch):
    body = 'return (x * 1.001 if x.shape[0] == 16 else x) / torch.norm(x, p="fro")'  # right on the smaller batch
    with pytest.raises(OutOfScopeError, match="at the problem's own size KernelBench's check sees a relative"):
        _explain(tmp_path, monkeypatch, body)


def test_a_solution_out_of_memory_is_not_analysed_smaller_out_of_scope_on_a_gpu_its_failure_on_a_cpu(
    tmp_path, monkeypatch
):
    """A solution could raise OutOfMemoryError on purpose, to be analysed smaller or not at all: on a GPU, where our
    copies of its tensors took memory beside it, it is out of scope; on a CPU, where torch raises none of its own, it
    is the solution's failure (exit 3), as a bug that raises rather than be judged would be."""
    body = 'raise torch.OutOfMemoryError("CUDA out of memory")'
    with pytest.raises(UserCodeError, match=r"ModelNew\.forward raised OutOfMemoryError") as raised:
        _explain(tmp_path, monkeypatch, body)
    assert raised.value.exit_code == 3
    error = UserCodeError(
        "ModelNew.forward raised OutOfMemoryError: CUDA out of memory",
        side=Side.SOLUTION, where="ModelNew.forward", fate=Fate.RAISED, details={"exception": "OutOfMemoryError"},
    )  # fmt: skip
    with pytest.raises(OutOfScopeError, match=r"ModelNew\.forward ran out of device memory beside fpa.s copies"):
        smaller.memory_error(error, torch.device("cuda"))


def test_each_attempt_after_running_out_is_smaller_whatever_the_estimate_says(tmp_path, monkeypatch):
    from fp_analysis.explain import job

    analysed = []

    def out_of_memory(model, inputs, *args, **kwargs):  # runs out at every size, though the estimate says it fits
        analysed.append(tuple(inputs[0].shape))
        raise AnalysisMemoryError("the device ran out of memory")

    monkeypatch.setattr(job, "analyse_model", out_of_memory)
    with pytest.raises(AnalysisMemoryError, match="ran out of memory"):
        _explain(tmp_path, monkeypatch, _BODIES["same"], available=1 << 40)
    assert analysed == [(16, 8, 64), (8, 8, 64), (4, 8, 64), (2, 8, 64)]


LINEAR = """
import torch
from torch import nn

batch_size = 16
features = 8
dim = 64


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        return self.fc(x)


def get_inputs():
    return [torch.rand(batch_size, features, dim)]


def get_init_inputs():
    return [features]
"""

LINEAR_SOLUTION = """
import torch
import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(64, 64, bias=False)

    def forward(self, x):
        {body}
"""


def test_a_solution_that_tells_the_sizes_apart_is_not_vouched_for_by_its_own_arithmetic_on_the_smaller_one(
    tmp_path, monkeypatch
):
    """An adversarial hunt's attack: off by 0.1 % at the problem's size, bf16 on any smaller one. The smaller
    instance's verdict, candidate_bf16, allowed a full-size departure of 8 × 2 × bf16's: the bug was explained."""
    body = (
        "return self.fc(x) * 1.001 if x.shape[0] == 16 else F.linear(x.bfloat16(), self.fc.weight.bfloat16()).float()"
    )
    with pytest.raises(OutOfScopeError, match=r"by arithmetic of its own \(candidate_bf16\)"):
        _explain(tmp_path, monkeypatch, body, LINEAR, solution=LINEAR_SOLUTION)


def test_a_tf32_references_error_is_not_the_candidates_allowance_at_the_full_size(tmp_path, monkeypatch):
    """The reference in TF32 departs from the candidate's fp32 by TF32's error on the smaller instance too; the full
    size is held to the candidate's departure from the reference in plain fp32 there, so a 0.1 % bug the full size
    alone shows, inside 8 × 2 × TF32's error, is not explained."""
    mode = {"reference_mode": "conv=tf32,matmul=tf32"}
    assert _explain(tmp_path, monkeypatch, "return self.fc(x)", LINEAR, solution=LINEAR_SOLUTION, **mode)["explained"]
    body = "return self.fc(x) * 1.0003 if x.shape[0] == 16 else self.fc(x)"
    with pytest.raises(OutOfScopeError, match="from the reference in plain fp32 of"):
        _explain(tmp_path, monkeypatch, body, LINEAR, solution=LINEAR_SOLUTION, **mode)


SWITCHING_SOLUTION = """
import torch
import torch.nn.functional as F
from torch import nn

_FIRST = []


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.fc = nn.Linear(64, 64, bias=False)

    def forward(self, x):
        key = float(x.flatten()[0])
        _FIRST.append(key) if not _FIRST else None
        if key == _FIRST[0]:  # the first trial's inputs, and every rerun of them: bf16
            return F.linear(x.bfloat16(), self.fc.weight.bfloat16()).float()
        {body}
"""


_SCALED = "return self.fc(x) * (4096 / 4095)"
_SCALED_BESIDE_A_DECOY = (  # item 0 of every other trial in bf16: the item departing furthest there
    "y = self.fc(x) * 1.0003\n        y[:1] = F.linear(x[:1].bfloat16(), self.fc.weight.bfloat16()).float()\n"
    "        return y"
)


@pytest.mark.parametrize("body", [_SCALED, _SCALED_BESIDE_A_DECOY], ids=["scaled", "scaled beside a decoy item"])
@pytest.mark.parametrize("kept", ["every trial", "the worst trial and items of each other"])
def test_a_trial_wrong_otherwise_than_the_worst_is_judged_whether_or_not_every_trial_fits(
    tmp_path, monkeypatch, kept, body
):
    """An adversarial hunt's attack: bf16 on the first trial (the one departing furthest), every output scaled on the
    others. Where the trials' tensors did not all fit, only the worst was kept and judged: candidate_bf16, exit 0.
    Each other trial now keeps three batch items (furthest, most beyond the rtol, one at random: a review put a bf16
    decoy item in each trial, the furthest), judged as the worst trial is."""
    from fp_analysis.explain import kernelbench

    if kept != "every trial":
        monkeypatch.setattr(kernelbench, "_KEEP_TRIALS_BYTES", {False: 0, True: 0})
    everything = smaller.FP64_COPIES * 8 * (16 * 8 * 64) * 4  # the analysis fits: no smaller instance
    result = _explain(tmp_path, monkeypatch, body, LINEAR, available=everything, solution=SWITCHING_SOLUTION)
    assert result["verdict"] == "bug" and not result["explained"], result["verdict"]
    assert result["context"]["judged"]["not_explained"] != 0  # a trial other than the first gave the verdict


def test_own_arithmetic_on_the_smaller_instance_is_not_vouched_for_where_the_full_size_check_did_not_run(
    tmp_path, monkeypatch
):
    """A review's variant of the size-telling attack: the full-size check runs out of memory (as a GPU filled by the
    solution can make it), so no full-size departure is known; the smaller instance's candidate_bf16 is still
    refused."""
    problem = LINEAR.replace(
        "return self.fc(x)",
        'if x.shape[0] == 16:\n            raise torch.OutOfMemoryError("CUDA out of memory")\n'
        "        return self.fc(x)",
    )
    body = "return F.linear(x.bfloat16(), self.fc.weight.bfloat16()).float()"
    with pytest.raises(OutOfScopeError, match=r"by arithmetic of its own \(candidate_bf16\)"):
        _explain(tmp_path, monkeypatch, body, problem, solution=LINEAR_SOLUTION)


SQUARE = """
import torch
from torch import nn

N = 64


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]


def get_init_inputs():
    return []
"""

SQUARE_SOLUTION = """
import torch
from torch import nn

_FIRST = []


class ModelNew(nn.Module):
    def forward(self, a, b):
        key = float(a.flatten()[0])
        _FIRST.append(key) if not _FIRST else None
        if key == _FIRST[0]:  # the first trial's inputs, and every rerun of them: bf16
            return (a.bfloat16() @ b.bfloat16()).float()
        {body}
"""


def test_a_square_product_wrong_otherwise_than_the_worst_trial_is_judged_on_rows_of_a_alone(tmp_path, monkeypatch):
    """A review found A @ B with both N × N not judged beyond the worst trial where the trials did not all fit: both
    inputs start with the batch's size, and slicing both is not the product's rows. The rows of A with B whole are."""
    from fp_analysis.explain import kernelbench

    monkeypatch.setattr(kernelbench, "_KEEP_TRIALS_BYTES", {False: 5 * 20000, True: 0})  # B whole fits, not all
    everything = smaller.FP64_COPIES * 8 * (64 * 64) * 4
    body = "return (a @ b) * (4096 / 4095)"
    result = _explain(tmp_path, monkeypatch, body, SQUARE, available=everything, solution=SQUARE_SOLUTION)
    assert result["verdict"] == "bug" and not result["explained"], result["verdict"]
    assert result["context"]["judged"]["not_explained"] != 0


def test_the_worst_batch_item_is_found_by_groups_as_item_by_item():
    """``items_by_badness`` (by groups of items) against the item-by-item rule it replaced: the largest difference,
    NaN or ±inf on one side only the largest, then the most outputs beyond the rtol alone, the first of equals."""
    from fp_analysis.explain.kernelbench import items_by_badness
    from fp_analysis.numerics.allclose import beyond_rtol

    gen = torch.Generator().manual_seed(5)
    reference = torch.randn(40, 3, 7, generator=gen)
    candidate = reference + 1e-6 * torch.randn(40, 3, 7, generator=gen)
    candidate[3, 0, 0], candidate[9, 1, 2] = float("nan"), float("inf")  # two items tied at the largest
    candidate[9, 0, :] += 1e-3  # …of which item 9 has more outputs beyond the rtol
    reference[20, 2, 2] = candidate[20, 2, 2] = float("nan")  # equal NaNs: not a difference

    def by_item(i):
        c, r = candidate[i].double(), reference[i].double()
        difference = torch.where(torch.isnan(c - r), torch.inf, (c - r).abs())
        difference[(c == r) | (torch.isnan(c) & torch.isnan(r))] = 0.0
        return float(difference.max()), beyond_rtol(reference[i], candidate[i], 1e-4)

    expected_worst = max(range(40), key=by_item)
    expected_most = max(range(40), key=lambda i: beyond_rtol(reference[i], candidate[i], 1e-4))
    assert expected_worst == 9
    assert items_by_badness(reference, candidate, 1e-4) == (expected_worst, expected_most)
