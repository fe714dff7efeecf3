"""What a reply from the solution's process may hold: for each request, the records it may answer with, and the type
of each of their fields.

The candidate process runs the solution, so its replies are checked like any input from outside: a reply must be
exactly one of the records its request allows (``_FORMS``; a failure record — the user's code raised, an error of
fpa's in that process — answers any request but ``ready``), every field of the type and size the record gives it.
Only the import may answer that the file is no KernelBench solution (``usage``, exit 2), and then the worker words
it, not the solution. A user error's record may carry the fields a failure reports (``_DETAILS``) and no others, so
a solution cannot call its failure a problem's, or an out-of-scope Model. What passes is still only the solution's
word about itself (its timing, its notes, the inputs it wrote into), never anything the verdict rests on.
"""

from __future__ import annotations

import math

import torch

from ..errors import Fate, Side, UserCodeError
from .wire import Malformed

__all__ = ["checked"]

# The fields a failure record of the solution's may carry besides its message, where and fate (UserFile.call's).
_DETAILS = frozenset({"exception", "at", "traceback", "detail", "replay", "status"})
_TEXT = 1 << 16  # characters of a message or a name; a traceback may hold more
_TRACEBACK = 1 << 20


def _text(value, limit: int = _TEXT) -> bool:
    return isinstance(value, str) and len(value) <= limit


def _names_to_texts(value) -> bool:
    return (
        isinstance(value, dict) and len(value) <= 64 and all(_text(k, 256) and _text(v, 256) for k, v in value.items())
    )


def _true(value) -> bool:
    return value is True


def _device(value) -> bool:
    if not _text(value, 64):
        return False
    try:
        torch.device(value)
    except (RuntimeError, ValueError):
        return False
    return True


def _cpu_tensor(value) -> bool:
    return isinstance(value, torch.Tensor) and value.device.type == "cpu"


def _parameters(value) -> bool:
    return isinstance(value, dict) and all(
        _text(name, 4096) and (t is None or (_cpu_tensor(t) and t.is_floating_point())) for name, t in value.items()
    )


def _plain(value, depth: int = 0) -> bool:
    """Whether ``value`` is JSON data (what a failure's details may be)."""
    if depth > 8:
        return False
    if value is None or isinstance(value, (str, bool, int, float)):
        return not isinstance(value, str) or len(value) <= _TRACEBACK
    if isinstance(value, (list, tuple)):
        return all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return False


def _failure(value) -> bool:
    if not isinstance(value, dict) or not {"message", "where", "fate"} <= set(value) <= {*_DETAILS, "message", "where",
                                                                                      "fate", "side"}:  # fmt: skip
        return False
    fates = {fate.value for fate in Fate}
    return (
        _text(value["message"]) and _text(value["where"], 4096) and value["fate"] in fates
        and value.get("side", Side.SOLUTION.value) == Side.SOLUTION.value and _plain(value)
    )  # fmt: skip


# Each request's records: field → the check its value must pass (a check's name says what it wants).
_FORMS = {
    "ready": [{"ready": _true}],
    # switches: name → value of each torch switch the import changed (the worker words the notes); usage: the file
    # defines no ModelNew (the worker says so)
    "load": [{"switches": _names_to_texts}, {"usage": _text}],
    "build": [{"parameters": _parameters}],
    "forward": [
        {"output": _cpu_tensor, "device": _device, "mutated": list},
        {"written": _true, "device": _device, "mutated": list},
        {"returned": _text},
        {"ipc_unavailable": _text},
    ],
}
_FAILURES = [
    {"user_code": _failure},
    {"internal": _text, "traceback": lambda value: _text(value, _TRACEBACK)},
]


def checked(expect: str, body, *, inputs: int = 0, elapsed: float = math.inf) -> dict:
    """``body`` as the reply to a request ``expect`` (``ready``, ``load``, ``build`` or ``forward``), else
    ``Malformed`` naming what is wrong. ``inputs``: how many inputs a forward was given (the indices it says it
    wrote into must be among them); ``elapsed``: seconds since the request was sent, which bounds the time the
    process says it spent. A failure record comes back as ``{"user_code": UserCodeError}``."""
    if not isinstance(body, dict) or not all(isinstance(k, str) for k in body):
        raise Malformed("its body is not a record")
    fields = dict(body)
    seconds = fields.pop("seconds", 0.0)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < math.inf:
        raise Malformed("its seconds are not a non-negative number")
    forms = _FORMS[expect] + (_FAILURES if expect != "ready" else [])
    form = next((f for f in forms if set(f) == set(fields)), None)
    if form is None:
        raise Malformed(f"its fields ({', '.join(sorted(fields))[:200]}) are not a reply to {expect}")
    for name, check in form.items():
        if check is list:  # the indices of the inputs written into
            valid = isinstance(fields[name], list) and all(
                isinstance(i, int) and not isinstance(i, bool) and 0 <= i < inputs for i in fields[name]
            )
        else:
            valid = check(fields[name])
        if not valid:
            raise Malformed(f"its {name} is not what a reply to {expect} holds there")
    if "user_code" in fields:
        record = {**fields["user_code"], "side": Side.SOLUTION.value}
        fields["user_code"] = UserCodeError.from_dict(record)
    if "mutated" in fields:
        fields["mutated"] = sorted(set(fields["mutated"]))
    return {**fields, "seconds": float(min(seconds, elapsed))}
