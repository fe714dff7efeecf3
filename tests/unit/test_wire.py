"""The channel to the solution's process carries data only: values and tensors arrive as sent, and anything the
protocol does not allow is ``Malformed`` before a byte of it is used — a pickle above all, which would run code.

No processes here: both ends are a socket pair in this process.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import socket
import struct
import time

import pytest
import torch

from fp_analysis.run import wire
from fp_analysis.run.tensor_ipc import SharedCuda


@pytest.fixture
def channel():
    ours, theirs = socket.socketpair()
    yield ours, theirs
    ours.close()
    theirs.close()


def _round_trip(channel, body):
    ours, theirs = channel
    wire.send(theirs, 7, body)
    return wire.receive(ours, deadline=time.monotonic() + 10)


def _raw(channel, header: dict | bytes, payload: bytes, limits: wire.Limits):
    """Receive a frame written by hand: what a hostile process can send."""
    ours, theirs = channel
    data = header if isinstance(header, bytes) else json.dumps(header).encode()
    theirs.sendall(struct.pack("<4sI", wire.MAGIC, len(data)) + data + payload)
    return wire.receive(ours, limits=limits, deadline=time.monotonic() + 5)


def _frame(body, tensors=(), seq=1):
    return {"seq": seq, "pid": os.getpid(), "body": body, "tensors": list(tensors)}


def test_plain_values_arrive_as_sent_with_their_types(channel):
    body = {
        "ints": [0, -1, 2**70],
        "floats": [0.1, -0.0, 1e-308, 5e-324],
        "nonfinite": (math.inf, -math.inf),
        "tuple": (1, (2, "three")),
        7: None,
        (1, 2): True,
        "dtype": torch.bfloat16,
        "device": torch.device("cpu"),
        "text": "caf\u00e9 \udcff",
    }
    message = _round_trip(channel, body)
    got = message.body
    assert message.seq == 7 and message.pid == os.getpid()
    assert got == body and type(got["tuple"]) is tuple and type(got["tuple"][1]) is tuple
    assert math.copysign(1.0, got["floats"][1]) == -1.0  # -0.0 kept
    assert math.isnan(_round_trip(channel, {"nan": math.nan}).body["nan"])


@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.randn(3, 4),
        lambda: torch.randn(2, 3, 5, 4).to(memory_format=torch.channels_last),
        lambda: torch.randn(6, 8)[:, ::3],  # a strided view with gaps
        lambda: torch.randn(1, 4, 1, 1).expand(5, 4, 3, 2),  # stride 0
        lambda: torch.tensor(2.5),  # 0-d
        lambda: torch.empty(0, 7),
        lambda: torch.randn(4, 4).to(torch.bfloat16),
        lambda: torch.randn(3) > 0,
        lambda: torch.randn(3, dtype=torch.complex64),
        lambda: torch.randn(5, 5).t(),
    ],
    ids=["plain", "channels_last", "strided", "expanded", "0-d", "empty", "bf16", "bool", "complex", "transposed"],
)
def test_tensors_arrive_bit_for_bit_in_their_layout(channel, make):
    tensor = make()
    got = _round_trip(channel, {"t": tensor, "shape": tensor.shape}).body["t"]
    assert got.dtype == tensor.dtype and got.shape == tensor.shape and got.stride() == tensor.stride()
    assert torch.equal(_bits(got), _bits(tensor))


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous().reshape(-1).view(torch.uint8)


def test_a_negated_or_conjugated_view_arrives_resolved(channel):
    z = torch.randn(4, dtype=torch.complex64)
    got = _round_trip(channel, [z.conj(), z.conj().imag]).body
    assert torch.equal(got[0], z.conj().resolve_conj()) and torch.equal(got[1], -z.imag)


def _nested(levels: int) -> list:
    value: list = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("value", "named"),
    [(object(), "builtins.object"), (torch.randn(2).to_sparse(), "sparse"), (_nested(100), "nested deeper")],
)
def test_what_the_protocol_has_no_form_for_is_refused_before_anything_is_sent(channel, value, named):
    ours, theirs = channel
    with pytest.raises(wire.Unsendable, match=named):
        wire.send(theirs, 1, {"x": value})
    ours.setblocking(False)
    with pytest.raises(BlockingIOError):
        ours.recv(1)  # nothing was written


def test_a_pickle_is_malformed_and_nothing_in_it_runs(channel, tmp_path):
    canary = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {canary}",))

    ours, theirs = channel
    data = pickle.dumps({"output": Payload()})
    theirs.sendall(struct.pack("!i", len(data)) + data)  # multiprocessing.Connection's framing
    with pytest.raises(wire.Malformed, match="does not start as fpa's messages do"):
        wire.receive(ours, deadline=time.monotonic() + 5)
    assert not canary.exists()


def _tensor(dtype="float32", shape=(2, 3), stride=(3, 1), nbytes=24):
    return {"dtype": dtype, "shape": list(shape), "stride": list(stride), "nbytes": nbytes}


@pytest.mark.parametrize(
    ("header", "payload", "limits", "reason"),
    [
        (b"not json at all", b"", wire.Limits(), "not JSON"),
        (b"\xff\xfe\xfa", b"", wire.Limits(), "not JSON"),
        ({"seq": 1, "body": None}, b"", wire.Limits(), "does not have the fields"),
        (_frame(None) | {"seq": "1"}, b"", wire.Limits(), "not an integer"),
        (_frame({"object": 1}), b"", wire.Limits(), r"without a '\$' tag"),
        (_frame({"$": "exec", "v": "print(1)"}), b"", wire.Limits(), "tagged 'exec'"),
        (_frame({"$": "tensor", "i": 0}), b"", wire.Limits(), "refers to tensor 0"),
        (_frame(None, [_tensor()]), bytes(24), wire.Limits(), "does not refer to"),
        (_frame({"$": "tensor", "i": 0}, [_tensor(dtype="object")]), bytes(24), wire.Limits(), "has dtype 'object'"),
        (_frame({"$": "tensor", "i": 0}, [_tensor(nbytes=16)]), bytes(16), wire.Limits(), "claims 16 bytes"),
        (_frame({"$": "tensor", "i": 0}, [_tensor(stride=(3, 100))]), bytes(24), wire.Limits(), "claims 24 bytes"),
        (_frame({"$": "tensor", "i": 0}, [_tensor(stride=(3, -1))]), bytes(24), wire.Limits(), "non-negative"),
        (_frame({"$": "tensor", "i": 0}, [_tensor(shape=(2,))]), bytes(24), wire.Limits(), "do not fit together"),
        (_frame({"$": "tensor", "i": 0}, [_tensor()]), bytes(24), wire.Limits(payload_bytes=23), "over the 23"),
        (
            _frame({"$": "tensor", "i": 0}, [_tensor(shape=(2**40, 2**20), stride=(0, 0), nbytes=4)]),
            bytes(4),
            wire.Limits(),
            "elements, over",
        ),
        (  # empty, but torch would compute strides past int64 for it
            _frame({"$": "tensor", "i": 0}, [_tensor(shape=(0, 2**62 - 1, 2**62 - 1), stride=(0, 0, 0), nbytes=0)]),
            b"",
            wire.Limits(),
            "elements, over",
        ),
        (_frame({"$": "tensor", "i": 0}, [_tensor()]), bytes(24), wire.Limits(tensors=0, payload_bytes=0), "carries 1"),
        (_frame([{"$": "tensor", "i": 0}] * 2, [_tensor()]), bytes(24), wire.Limits(), "or twice"),
        (_frame(None, [_tensor()] * 3), bytes(72), wire.Limits(tensors=2), "carries 3 tensors"),
        (_frame({"$": "dict", "v": [[[1], 2]]}), b"", wire.Limits(), "dict key of type list"),
        (_frame({"$": "float", "v": "1e999"}), b"", wire.Limits(), "tagged 'float'"),
        (_frame({"$": "cuda", "dtype": "float32"}), b"", wire.Limits(), "CUDA handle is not valid"),
        (b"[" * 100_000 + b"]" * 100_000, b"", wire.Limits(), "not JSON"),
        (_frame(_nested(70)), b"", wire.Limits(), "nested deeper"),
        (b"{}" + b" " * 200, b"", wire.Limits(header_bytes=100), "claims 202 bytes"),
    ],
)
def test_what_the_protocol_does_not_allow_is_malformed_before_it_is_used(channel, header, payload, limits, reason):
    with pytest.raises(wire.Malformed, match=reason):
        _raw(channel, header, payload, limits=limits)


@pytest.mark.parametrize("closed", [False, True])
def test_a_frame_cut_short_is_malformed_and_a_silent_one_times_out(channel, closed):
    ours, theirs = channel
    data = json.dumps(_frame({"$": "tensor", "i": 0}, [_tensor()])).encode()
    theirs.sendall(struct.pack("<4sI", wire.MAGIC, len(data)) + data + bytes(10))  # 14 bytes of the tensor missing
    if closed:
        theirs.close()
        with pytest.raises(wire.Malformed, match="closed the channel inside a message"):
            wire.receive(ours, deadline=time.monotonic() + 5)
    else:
        start = time.monotonic()
        with pytest.raises(wire.WireTimeout):
            wire.receive(ours, deadline=start + 0.2)
        assert time.monotonic() - start < 5


def test_a_closed_channel_before_a_frame_is_the_end_not_a_malformed_message(channel):
    ours, theirs = channel
    theirs.close()
    with pytest.raises(EOFError):
        wire.receive(ours, deadline=time.monotonic() + 5)


def _handle(**changes) -> SharedCuda:
    fields = {"dtype": torch.float32, "shape": (4, 5), "stride": (5, 1), "offset": 0, "device": 0,
              "handle": bytes(64), "storage_bytes": 80, "storage_offset_bytes": 0,
              "ref_counter": f"/torch_{os.getpid()}_123_0".encode(), "ref_counter_offset": 0, "event": bytes(64),
              "event_sync": True}  # fmt: skip
    return SharedCuda(**{**fields, **changes})


def test_a_cuda_handle_crosses_as_plain_fields(channel):
    handle = _handle(offset=3, storage_bytes=200)
    assert _round_trip(channel, {"h": handle}).body["h"] == handle
