"""Messages between fpa's processes and a process that runs user code: a JSON header and raw bytes, nothing that runs.

The solution's process (``fp_analysis.run.candidate``) runs code that may be hostile to the grader, and the worker that
holds the reference and the analysis reads what that process sends. A pickle is a program: unpickling bytes that
user code wrote runs that code in the worker (it could hand back the worker's own reference output, or anything
else). So every message on that channel is data only, read without executing anything:

``frame := b"FPA" 0x01 · header length (uint32, little-endian) · header (UTF-8 JSON) · payload``

The header is ``{"seq", "pid", "body", "tensors"}``: ``seq`` pairs a reply with its request, ``pid`` names the
process that wrote it, ``body`` is the message (below), and ``tensors`` describes each tensor the body refers to,
whose bytes follow in the payload in that order: ``{"dtype", "shape", "stride", "nbytes"}``, the bytes being the
span of storage the strides reach (so a channels-last or strided view arrives with its layout).

The body is JSON in which lists, strings, ints, finite floats, bools and null stand for themselves and every other
value is an object tagged by ``"$"``: ``tuple``, ``dict`` (as ``[key, value]`` pairs, so keys need not be
strings), ``float`` (nan, inf, -inf), ``tensor`` (an index into ``tensors``), ``cuda`` (a CUDA IPC handle's plain
fields, ``fp_analysis.run.tensor_ipc.SharedCuda``), ``dtype`` and ``device``. An untagged object is malformed.

``receive`` checks everything against ``Limits`` before it allocates or reads a byte of payload: the magic, the
header's size and nesting, every field's type, each dtype against a fixed table, shapes and strides against the
byte counts, the payload's total size. What does not pass is ``Malformed`` (the caller makes it the call's
failure), never an exception from deep inside a parser; a deadline bounds the whole read (``WireTimeout``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import select
import socket
import struct
import time
from typing import Any

import torch

from .tensor_ipc import SharedCuda

__all__ = [
    "DTYPES",
    "Limits",
    "Malformed",
    "Message",
    "Unsendable",
    "WireTimeout",
    "readable",
    "receive",
    "send",
    "span_length",
    "storage_span",
]

MAGIC = b"FPA\x01"
_PREFIX = struct.Struct("<4sI")

# The dtypes a tensor may cross in, by name: nothing else is constructed from a message.
DTYPES = {
    name: getattr(torch, name)
    for name in (
        "float64", "float32", "float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
        "float8_e5m2fnuz", "complex128", "complex64", "complex32", "int64", "int32", "int16", "int8", "uint64",
        "uint32", "uint16", "uint8", "bool",
    )
    if isinstance(getattr(torch, name, None), torch.dtype)  # the float8 and wide unsigned ones: newer torch only
}  # fmt: skip
_DEPTH = 64  # nesting of a body: get_init_inputs() gives flat lists; a deep one is an attack on the parser
_CHUNK = 1 << 24  # bytes read per recv


class Malformed(Exception):
    """A message that is not what the protocol allows; the text says what is wrong with it."""


class WireTimeout(Exception):
    """The deadline passed before the whole message arrived."""


class Unsendable(Exception):
    """A value the protocol has no form for (an object of a user's class, say)."""


@dataclasses.dataclass(frozen=True)
class Limits:
    """What a reader accepts: header bytes, tensors in one message, payload bytes in all, and elements in one tensor
    (counting the dimensions of an empty one)."""

    header_bytes: int = 1 << 22
    tensors: int = 4096
    payload_bytes: int = 1 << 62
    elements: int = 1 << 48  # per tensor: a stride-0 view may hold many more elements than bytes


@dataclasses.dataclass(frozen=True)
class Message:
    """A frame as received: its sequence number, the pid its sender wrote, and its body (tensors in place)."""

    seq: int
    pid: int
    body: Any


# --------------------------------------------------------------------------------------------------- writing


def send(sock: socket.socket, seq: int, body: Any) -> None:
    """Write ``body`` (plain data, tensors, ``SharedCuda`` handles) as one frame; ``Unsendable`` names what cannot
    be written (nothing is sent then). CUDA tensors travel as CPU bytes: a handle is sent as a ``SharedCuda``."""
    tensors: list[torch.Tensor] = []
    encoded = _encode(body, tensors, 0)
    try:  # all of it made ready before a byte is sent: a failure half-way would leave the channel out of step
        tensors = [_sent(t) for t in tensors]
        names = [_dtype_name(t) for t in tensors]
        payload = [memoryview(storage_span(t).reshape(-1).view(torch.uint8).numpy()) for t in tensors]
        header = json.dumps({"seq": seq, "pid": os.getpid(), "body": encoded, "tensors": [
            {"dtype": name, "shape": list(t.shape), "stride": list(t.stride()), "nbytes": len(data)}
            for name, t, data in zip(names, tensors, payload, strict=True)
        ]}).encode()  # fmt: skip
    except Unsendable:
        raise
    except Exception as error:  # a tensor whose memory cannot be read as bytes (a nested one, say)
        raise Unsendable(f"a tensor that cannot be read as bytes ({type(error).__name__})") from None
    sock.sendall(_PREFIX.pack(MAGIC, len(header)) + header)
    for data in payload:
        if len(data):
            sock.sendall(data)


def _sent(tensor: torch.Tensor) -> torch.Tensor:
    """``tensor`` as it is sent: on the CPU, its lazy negation and conjugation resolved (a handle or bytes carry
    memory, not torch's lazy bits)."""
    t = tensor.detach()
    return (t.cpu() if t.is_cuda else t).resolve_conj().resolve_neg()


def storage_span(tensor: torch.Tensor) -> torch.Tensor:
    """The 1-d stretch of ``tensor``'s storage that its strides reach: ``torch.as_strided(span, shape, stride)`` is
    the tensor again, in the same layout (channels-last, a strided view, a stride-0 expansion). Lazy negation and
    conjugation are not carried: resolve them first."""
    length = span_length(list(tensor.shape), list(tensor.stride()))
    if length == 0:
        return torch.empty(0, dtype=tensor.dtype, device=tensor.device)
    return torch.as_strided(tensor, (length,), (1,), tensor.storage_offset())


def span_length(shape: list[int], stride: list[int]) -> int:
    """Elements from a view's first to its last element, both included (0 for an empty view): what its storage
    must hold."""
    if 0 in shape:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, stride, strict=True))


def _dtype_name(tensor: torch.Tensor) -> str:
    name = str(tensor.dtype).removeprefix("torch.")
    if name not in DTYPES:
        raise Unsendable(f"a tensor of dtype {tensor.dtype}")
    return name


def _encode(value: Any, tensors: list, depth: int) -> Any:
    if depth > _DEPTH:
        raise Unsendable(f"data nested deeper than {_DEPTH} levels")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else {"$": "float", "v": repr(float(value))}
    if isinstance(value, str):
        return str(value)
    if isinstance(value, torch.Tensor):
        if value.layout != torch.strided:
            raise Unsendable(f"a {value.layout} tensor")
        tensors.append(value)
        return {"$": "tensor", "i": len(tensors) - 1}
    if isinstance(value, SharedCuda):
        return {"$": "cuda", **value.fields()}
    if isinstance(value, list):
        return [_encode(v, tensors, depth + 1) for v in value]
    if isinstance(value, tuple):
        return {"$": "tuple", "v": [_encode(v, tensors, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"$": "dict", "v": [[_encode(k, tensors, depth + 1), _encode(v, tensors, depth + 1)]
                                    for k, v in value.items()]}  # fmt: skip
    if isinstance(value, torch.dtype):
        return {"$": "dtype", "v": str(value).removeprefix("torch.")}
    if isinstance(value, torch.device):
        return {"$": "device", "v": str(value)}
    if type(value).__module__ == "numpy" and hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return _encode(value.item(), tensors, depth)  # a numpy scalar: its Python value
    raise Unsendable(f"a {type(value).__module__}.{type(value).__qualname__}")


# --------------------------------------------------------------------------------------------------- reading


def receive(sock: socket.socket, *, limits: Limits = Limits(), deadline: float | None = None) -> Message:
    """The next frame on ``sock``, checked (see the module docstring). ``deadline``: a ``time.monotonic()`` time by
    which all of it must have arrived, else ``WireTimeout``; EOFError when the peer closed before a frame began,
    ``Malformed`` when it closed inside one or sent what the protocol does not allow."""
    prefix = _read(sock, _PREFIX.size, deadline, first=True)
    magic, size = _PREFIX.unpack(prefix)
    if magic != MAGIC:
        raise Malformed(f"it does not start as fpa's messages do (first bytes {bytes(prefix[:8])!r})")
    if size > limits.header_bytes:
        raise Malformed(f"its header claims {size} bytes, over the {limits.header_bytes} allowed")
    try:
        header = json.loads(bytes(_read(sock, size, deadline)).decode("utf-8"))
    except (ValueError, RecursionError) as error:  # not UTF-8, not JSON, nested past the parser's depth
        raise Malformed(f"its header is not JSON ({type(error).__name__})") from None
    if not isinstance(header, dict) or set(header) != {"seq", "pid", "body", "tensors"}:
        raise Malformed("its header does not have the fields seq, pid, body and tensors")
    seq, pid, described = header["seq"], header["pid"], header["tensors"]
    if not (_is_int(seq) and _is_int(pid)) or not isinstance(described, list):
        raise Malformed("its seq or pid is not an integer, or its tensors are not a list")
    if len(described) > limits.tensors:
        raise Malformed(f"it carries {len(described)} tensors, over the {limits.tensors} allowed")
    layouts = [_layout(d, i, limits) for i, d in enumerate(described)]
    total = sum(nbytes for *_, nbytes in layouts)
    if total > limits.payload_bytes:
        raise Malformed(f"it carries {total} bytes of tensors, over the {limits.payload_bytes} this reply may hold")
    tensors = []
    for dtype, shape, stride, nbytes in layouts:
        try:  # the sizes are checked; torch may still refuse what they add up to (a stride product past int64)
            raw = torch.empty(nbytes, dtype=torch.uint8)
        except (RuntimeError, MemoryError) as error:
            raise Malformed(f"its tensors cannot be held ({type(error).__name__})") from None
        if nbytes:
            _read_into(sock, memoryview(raw.numpy()), deadline)
        try:
            flat = raw.view(dtype) if nbytes else torch.empty(0, dtype=dtype)
            tensors.append(torch.as_strided(flat, shape, stride) if nbytes else torch.empty(shape, dtype=dtype))
        except (RuntimeError, ValueError) as error:
            raise Malformed(f"its tensor's layout is not one torch can make ({error})") from None
    used: set[int] = set()
    body = _decode(header["body"], tensors, used, 0)
    if used != set(range(len(tensors))):
        raise Malformed("it carries tensors its body does not refer to")
    return Message(seq, pid, body)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _layout(described, index: int, limits: Limits) -> tuple[torch.dtype, list[int], list[int], int]:
    """(dtype, shape, stride, nbytes) of a tensor's description, each checked: the bytes are exactly the span the
    strides reach, so no view can reach outside them."""
    what = f"tensor {index}"
    if not isinstance(described, dict) or set(described) != {"dtype", "shape", "stride", "nbytes"}:
        raise Malformed(f"its {what} is not described by dtype, shape, stride and nbytes")
    dtype = DTYPES.get(described["dtype"]) if isinstance(described["dtype"], str) else None
    if dtype is None:
        raise Malformed(f"its {what} has dtype {described['dtype']!r}, not one of {', '.join(DTYPES)}")
    shape, stride, nbytes = described["shape"], described["stride"], described["nbytes"]
    for name, values in (("shape", shape), ("stride", stride)):
        if not isinstance(values, list) or len(values) > 64 or not all(_is_int(v) and 0 <= v < 1 << 62 for v in values):
            raise Malformed(f"its {what}'s {name} is not a list of at most 64 non-negative integers")
    if len(stride) != len(shape) or not _is_int(nbytes):
        raise Malformed(f"its {what}'s shape, stride and nbytes do not fit together")
    # an empty tensor too: torch computes its strides all the same, and 2^62 × 2^62 overflows them
    largest = math.prod(n for n in shape if n)
    if largest > limits.elements:
        raise Malformed(f"its {what} has dimensions of {largest} elements, over the {limits.elements} allowed")
    itemsize = torch.empty(0, dtype=dtype).element_size()
    span = span_length(shape, stride)
    if nbytes != span * itemsize:
        raise Malformed(f"its {what} claims {nbytes} bytes where its shape and strides reach {span * itemsize}")
    return dtype, shape, stride, nbytes


def _decode(node, tensors: list, used: set, depth: int):
    if depth > _DEPTH:
        raise Malformed(f"its body is nested deeper than {_DEPTH} levels")
    if node is None or isinstance(node, (bool, int, float, str)):
        return node
    if isinstance(node, list):
        return [_decode(v, tensors, used, depth + 1) for v in node]
    if not isinstance(node, dict):
        raise Malformed(f"its body holds a {type(node).__name__}")
    tag = node.get("$")
    value = node.get("v")
    if tag == "tuple" and isinstance(value, list) and len(node) == 2:
        return tuple(_decode(v, tensors, used, depth + 1) for v in value)
    if tag == "dict" and isinstance(value, list) and len(node) == 2:
        out = {}
        for pair in value:
            if not (isinstance(pair, list) and len(pair) == 2):
                raise Malformed("its body holds a dict entry that is not a [key, value] pair")
            key = _decode(pair[0], tensors, used, depth + 1)
            try:
                out[key] = _decode(pair[1], tensors, used, depth + 1)
            except TypeError:
                raise Malformed(f"its body holds a dict key of type {type(key).__name__}") from None
        return out
    if tag == "float" and value in ("nan", "inf", "-inf") and len(node) == 2:
        return float(value)
    if tag == "tensor" and _is_int(node.get("i")) and len(node) == 2:
        index = node["i"]
        if not 0 <= index < len(tensors) or index in used:
            raise Malformed(f"its body refers to tensor {index}, which it does not carry (or twice)")
        used.add(index)
        return tensors[index]
    if tag == "cuda":
        fields = {k: v for k, v in node.items() if k not in ("$", "dtype")}
        dtype = DTYPES.get(node.get("dtype")) if isinstance(node.get("dtype"), str) else None
        try:
            if dtype is None:
                raise ValueError(f"its dtype is not one of {', '.join(DTYPES)}")
            return SharedCuda.from_fields(fields, dtype)
        except ValueError as error:
            raise Malformed(f"its CUDA handle is not valid: {error}") from None
    if tag == "dtype" and isinstance(value, str) and value in DTYPES and len(node) == 2:
        return DTYPES[value]
    if tag == "device" and isinstance(value, str) and len(node) == 2 and len(value) < 32:
        try:
            return torch.device(value)
        except (RuntimeError, ValueError):
            raise Malformed(f"its body names a device {value!r} torch does not know") from None
    if tag is None:
        raise Malformed("its body holds an object without a '$' tag")
    raise Malformed(f"its body holds an object tagged {str(tag)[:40]!r} that the protocol does not allow")


def _read(sock: socket.socket, size: int, deadline: float | None, first: bool = False) -> memoryview:
    buffer = memoryview(bytearray(size))
    _read_into(sock, buffer, deadline, first)
    return buffer


def readable(sock: socket.socket, seconds: float) -> bool:
    """Whether ``sock`` has something to read (or was closed) within ``seconds``."""
    if seconds <= 0:
        return False
    poll = select.poll()  # not select(): a descriptor's number may exceed FD_SETSIZE
    poll.register(sock, select.POLLIN)
    return bool(poll.poll(seconds * 1000))


def _read_into(sock: socket.socket, view: memoryview, deadline: float | None, first: bool = False) -> None:
    """Fill ``view`` from ``sock``. EOFError when the peer closed before the first byte of a frame (``first``),
    ``Malformed`` when it closed inside one, ``WireTimeout`` past ``deadline``."""
    got = 0
    while got < len(view):
        if deadline is not None and not readable(sock, deadline - time.monotonic()):
            raise WireTimeout()
        n = sock.recv_into(view[got:], min(len(view) - got, _CHUNK))
        if n == 0:
            if first and got == 0:
                raise EOFError
            raise Malformed(f"its process closed the channel inside a message ({got} of {len(view)} bytes read)")
        got += n
