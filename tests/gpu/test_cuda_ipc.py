"""Tensors between the worker and the solution's process on a GPU (CUDA IPC): what the worker exports shares
its allocation segment with nothing else of the worker, a handle that cannot be opened sends the tensors as
bytes, and an output unlike the reference's crosses as bytes, the worker opening no handle of the solution's.
"""

from __future__ import annotations

import dataclasses

import pytest

from ..usercode_runs import WRITES_ITS_INPUT, run_solution


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path.parent / f"{tmp_path.name}-store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FPA_HYPOTHESIS_DB", raising=False)


@pytest.mark.gpu
@pytest.mark.parametrize("copy", ["exportable_copy", "a plain clone"])
def test_an_exported_input_shares_its_allocation_segment_with_nothing_else_of_the_worker(copy):
    """A CUDA IPC handle maps the whole allocation segment around a tensor (the caching allocator packs small
    tensors into 2 MB segments), so what the worker exports is copied into a pool of its own: the segment the
    solution could map holds none of the worker's other memory — here, the reference's output. A plain clone
    (the control) lands in the reference output's segment: the test can fail."""
    import torch

    from fp_analysis.run.tensor_ipc import exportable_copy

    secret = torch.full((1000,), 12345.5, device="cuda")  # the reference's output
    x = torch.rand(4, 100, device="cuda")
    exported = exportable_copy(x) if copy == "exportable_copy" else x.clone()

    def segment(tensor):
        address = tensor.data_ptr()
        (found,) = [s for s in torch.cuda.memory_snapshot()
                    if s["address"] <= address < s["address"] + s["total_size"]]  # fmt: skip
        return found["address"], found["total_size"]

    assert torch.equal(exported, x)
    assert (segment(exported) != segment(secret)) == (copy == "exportable_copy")


@pytest.mark.gpu
def test_where_an_ipc_handle_cannot_be_opened_the_tensors_travel_as_bytes(tmp_path, monkeypatch):
    """A handle the solution's process cannot open (a platform without CUDA IPC) is answered before any user
    code runs; the inputs are sent again as CPU tensors, and so is everything for the rest of the job."""
    import torch

    import fp_analysis.run.candidate as candidate_module

    # a handle of the right form that names no memory: it fails to open in the other process, as on a platform
    # without CUDA IPC
    share = candidate_module.share
    monkeypatch.setattr(candidate_module, "share", lambda t: dataclasses.replace(share(t), handle=bytes(64)))
    x = torch.rand(3, 7, device="cuda")
    (out,), made_on, ipc = run_solution(tmp_path, WRITES_ITS_INPUT, x)
    assert not ipc and not out.is_cuda and made_on.startswith("cuda")
    assert torch.equal(out.cuda(), (x + 1.0) * 2.0)  # the solution ran once, on the inputs sent as bytes


@pytest.mark.gpu
def test_an_output_unlike_the_references_crosses_as_bytes_and_the_worker_opens_no_handle_of_the_solutions(
    tmp_path, monkeypatch
):
    """A GPU output is written into the buffer the worker exported for the reference's shape and dtype; one of
    another shape cannot be, and crosses as CPU bytes (so the check can name its shape). The worker never opens a
    handle the solution's process made (its sizes are the sender's word)."""
    import torch

    from fp_analysis.run.tensor_ipc import SharedCuda

    def refuse(self):
        raise AssertionError("the worker opened a handle")

    x = torch.rand(3, 7, device="cuda")
    monkeypatch.setattr(SharedCuda, "open", refuse)  # in this process only: the candidate opens its inputs
    monkeypatch.setattr(SharedCuda, "view", refuse)
    (out,), made_on, ipc = run_solution(tmp_path, WRITES_ITS_INPUT, x)
    assert ipc and out.is_cuda and torch.equal(out, (x + 1.0) * 2.0)
    (tmp_path / "shorter").mkdir()
    (out,), made_on, ipc = run_solution(tmp_path / "shorter", WRITES_ITS_INPUT.replace("x * 2.0", "x[:2] * 2.0"), x)
    assert ipc and not out.is_cuda and made_on.startswith("cuda") and out.shape == (2, 7)
