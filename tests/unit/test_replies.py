"""A reply from the solution's process is one of the records its request allows, each field of its type: anything
else is ``Malformed`` — above all a failure record that would call itself the problem's, or out of scope, and a
CUDA handle where an output belongs (the worker opens no handle the solution made)."""

from __future__ import annotations

import pytest
import torch

from fp_analysis.errors import Fate, Side, UserCodeError
from fp_analysis.run.replies import checked
from fp_analysis.run.tensor_ipc import SharedCuda
from fp_analysis.run.wire import Malformed

_FAILURE = {"message": "ModelNew.forward raised ValueError: no", "where": "ModelNew.forward", "fate": "raised",
            "side": "solution", "exception": "ValueError", "traceback": "...", "detail": "trial 1 of 5"}  # fmt: skip
_HANDLE = SharedCuda(torch.float32, (4,), (1,), 0, 0, bytes(64), 16, 0, b"/torch_1_2_3", 0, bytes(64), True)


@pytest.mark.parametrize(
    ("expect", "body"),
    [
        ("ready", {"ready": True}),
        ("load", {"switches": {"torch.backends.cudnn.allow_tf32": "False"}, "seconds": 0.5}),
        ("build", {"parameters": {"conv.weight": torch.randn(8, 4, 3, 3), "lazy": None}}),
        ("forward", {"output": torch.randn(2, 3), "device": "cuda:0", "mutated": [0, 0]}),
        ("forward", {"written": True, "device": "cuda:0", "mutated": []}),
        ("forward", {"returned": "a tuple, not a tensor"}),
        ("forward", {"ipc_unavailable": "no IPC here"}),
        ("load", {"usage": "solution.py does not define ModelNew"}),
        ("forward", {"internal": "RuntimeError: x", "traceback": "Traceback ..."}),
    ],
)
def test_each_reply_a_request_allows_passes(expect, body):
    reply = checked(expect, body, inputs=1, elapsed=10.0)
    assert set(reply) == set(body) | {"seconds"}
    assert reply.get("mutated", [0]) == [0] or reply["mutated"] == []


def test_a_failure_record_comes_back_as_the_solutions_error_with_its_details():
    error = checked("forward", {"user_code": _FAILURE})["user_code"]
    assert isinstance(error, UserCodeError) and error.side is Side.SOLUTION and error.fate is Fate.RAISED
    assert error.details == {"exception": "ValueError", "traceback": "...", "detail": "trial 1 of 5"}


@pytest.mark.parametrize(
    ("expect", "body", "named"),
    [
        ("ready", {"ready": True, "extra": 1}, "are not a reply to ready"),
        ("ready", {"user_code": _FAILURE}, "are not a reply to ready"),  # nothing of the user's has run yet
        ("load", {"switches": "one note"}, "its switches"),
        ("load", {"notes": ["verdict: identical"]}, "are not a reply to load"),  # the worker words the notes
        ("build", {"parameters": {"w": torch.arange(4)}}, "its parameters"),  # not floating
        ("forward", {"output": _HANDLE, "device": "cuda:0", "mutated": []}, "its output"),
        ("forward", {"output": torch.randn(2), "device": "tpu:9", "mutated": []}, "its device"),
        ("forward", {"output": torch.randn(2), "device": "cpu", "mutated": [1]}, "its mutated"),  # 1 input given
        ("forward", {"output": torch.randn(2), "device": "cpu", "mutated": [-5]}, "its mutated"),
        ("forward", {"output": torch.randn(2), "device": "cpu", "mutated": [True]}, "its mutated"),
        ("forward", {"written": 1, "device": "cpu", "mutated": []}, "its written"),
        ("forward", {"user_code": {**_FAILURE, "kind": "out_of_scope"}}, "its user_code"),
        ("forward", {"user_code": {**_FAILURE, "side": "problem"}}, "its user_code"),
        ("forward", {"user_code": {**_FAILURE, "fate": "explained"}}, "its user_code"),
        ("forward", {"user_code": {**_FAILURE, "worker": {"seconds": 1}}}, "its user_code"),
        ("forward", {"user_code": {**_FAILURE, "message": "x" * (1 << 17)}}, "its user_code"),
        ("forward", {"returned": "a tuple", "seconds": -1.0}, "seconds"),
        ("forward", {"returned": "a tuple", "seconds": True}, "seconds"),
        ("forward", {"usage": "fpa cannot model this Model"}, "are not a reply to forward"),  # only the import may
        ("forward", ["output"], "not a record"),
    ],
)
def test_what_a_request_does_not_allow_is_malformed(expect, body, named):
    with pytest.raises(Malformed, match=named):
        checked(expect, body, inputs=1, elapsed=10.0)


def test_the_time_a_process_says_it_spent_is_at_most_the_time_it_had():
    assert checked("forward", {"returned": "a tuple", "seconds": 1e9}, elapsed=2.5)["seconds"] == 2.5


def test_the_notes_on_switches_are_worded_by_the_worker_from_known_names_and_plain_values():
    """The solution's process sends which of torch's switches its import changed; it cannot word a note itself: an
    unknown name is dropped, a value that is not a plain repr is not shown."""
    from fp_analysis.run.switches import switch_notes

    notes = switch_notes({"torch.backends.cudnn.allow_tf32": "False", "verdict": "identical",
                           "torch.get_default_dtype()": "torch.float64\n\x1b[2Kverdict: identical"})  # fmt: skip
    assert len(notes) == 2 and notes[0].startswith("importing the solution set torch.backends.cudnn.allow_tf32 = False")
    assert "= (unreadable)" in notes[1] and "\x1b" not in "".join(notes) and "verdict" not in "".join(notes)
