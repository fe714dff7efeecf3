"""How a CUDA tensor crosses between the worker and the candidate process: as a CUDA IPC handle, not as bytes.

Sent as CPU bytes through the socket pair, a full-size seed-000 trial (67 M input and 134 M output floats) cost
~4 s on an H200: a copy to the host, the socket and a copy back, each way. A CUDA IPC handle
(``cudaIpcGetMemHandle``, through torch's storage sharing) names the GPU memory instead, and the receiver copies it
on the GPU into memory of its own (``SharedCuda.open``), so neither process can change what the other keeps. The
sender's memory must live until that copy; the sender keeps its tensor until its next message is answered.

A handle is plain data (``SharedCuda``: the fields of torch's ``_share_cuda_``), written into a message by
``fp_analysis.wire``, and a handle that comes from the solution's process is checked before it is opened: the view
must lie inside the storage it names, the reference counter must be one the sender made, and the handle must not
name memory the receiver itself exported. What the worker exports is copied into a memory pool of its own first
(``exportable_copy``): a handle maps the whole allocation segment around a tensor, and the caching allocator packs
tensors into shared segments, so an input copied from the general pool could expose the reference's output lying
beside it to a solution that maps the segment itself.

IPC can fail where the platform has none, or for memory torch's caching allocator did not make (a solution's
own ``cudaMalloc`` behind ``from_blob``): ``share`` then returns None, ``SharedCuda.open`` raises
``IpcUnavailable``, and the tensor travels as CPU bytes (``fp_analysis.candidate`` decides per tensor and, after
a failure to open, for the rest of the job).
"""

from __future__ import annotations

import dataclasses
import math
import re

import torch

__all__ = ["IpcUnavailable", "SharedCuda", "exportable_copy", "share"]

# torch's name for the shared reference counter of a CUDA tensor it exports: /torch_<pid>_<random>_<counter>
_REF_COUNTER = re.compile(r"/torch_(\d{1,10})_\d{1,20}_\d{1,20}")
_HANDLE_BYTES = 256  # a cudaIpcMemHandle_t or cudaIpcEventHandle_t is 64 bytes; room for other allocators' forms


class IpcUnavailable(RuntimeError):
    """A CUDA IPC handle could not be opened here."""


@dataclasses.dataclass(frozen=True)
class SharedCuda:
    """A CUDA tensor of another process, by handle: its layout in the storage, and the storage's IPC fields."""

    dtype: torch.dtype
    shape: tuple[int, ...]
    stride: tuple[int, ...]
    offset: int  # elements, from the storage's start
    device: int
    handle: bytes
    storage_bytes: int
    storage_offset_bytes: int  # where the storage starts in the shared allocation
    ref_counter: bytes
    ref_counter_offset: int
    event: bytes
    event_sync: bool

    def fields(self) -> dict:
        """Every field as JSON data (bytes as hex, the dtype by name), for ``fp_analysis.wire``."""
        out = dataclasses.asdict(self)
        out.update(dtype=str(self.dtype).removeprefix("torch."), shape=list(self.shape), stride=list(self.stride))
        for name in ("handle", "ref_counter", "event"):
            out[name] = getattr(self, name).hex()
        return out

    @classmethod
    def from_fields(cls, fields: dict, dtype: torch.dtype) -> SharedCuda:
        """The inverse of ``fields`` (the dtype already looked up); ValueError naming the first field that is not of
        its type or range."""
        names = {f.name for f in dataclasses.fields(cls)} - {"dtype"}
        if not isinstance(fields, dict) or set(fields) != names:
            raise ValueError(f"its fields are not {', '.join(sorted(names))}")
        values = {}
        for name in names:
            value = fields[name]
            if name in ("handle", "ref_counter", "event"):
                if not isinstance(value, str) or len(value) > 2 * _HANDLE_BYTES:
                    raise ValueError(f"{name} is not a short hex string")
                value = bytes.fromhex(value)  # ValueError when it is not hex
            elif name in ("shape", "stride"):
                if not isinstance(value, list) or len(value) > 64 or not all(_count(v) for v in value):
                    raise ValueError(f"{name} is not a list of non-negative integers")
                value = tuple(value)
            elif name == "event_sync":
                if not isinstance(value, bool):
                    raise ValueError("event_sync is not a bool")
            elif not _count(value):
                raise ValueError(f"{name} is not a non-negative integer")
            values[name] = value
        if len(values["shape"]) != len(values["stride"]):
            raise ValueError("its shape and stride differ in length")
        return cls(dtype=dtype, **values)

    def check(self, sender_pid: int | None = None, own: frozenset[bytes] = frozenset()) -> None:
        """ValueError unless the handle may be opened: the view inside the storage, the reference counter the
        sender's own (``sender_pid``), and the handle none of ``own`` (what this process exported itself)."""
        itemsize = torch.empty(0, dtype=self.dtype).element_size()
        span = 0 if 0 in self.shape else 1 + sum((n - 1) * s for n, s in zip(self.shape, self.stride, strict=True))
        if span and (self.offset + span) * itemsize > self.storage_bytes:
            raise ValueError(
                f"its view reaches byte {(self.offset + span) * itemsize} of a storage of {self.storage_bytes}"
            )
        if math.prod(self.shape) > 1 << 48:
            raise ValueError("its view has more elements than any GPU holds")
        match = _REF_COUNTER.fullmatch(self.ref_counter.decode("ascii", "replace"))
        if match is None or (sender_pid is not None and int(match.group(1)) != sender_pid):
            raise ValueError("its reference counter is not one the sending process made")
        if self.handle in own:
            raise ValueError("it names memory that this process exported itself")

    def open(self) -> torch.Tensor:
        """A copy, in this process's own GPU memory, of the tensor the handle names (``check`` it first)."""
        if not torch.cuda.is_available() or self.device >= torch.cuda.device_count():
            raise IpcUnavailable(f"there is no CUDA device {self.device} here")
        try:
            storage = torch.UntypedStorage._new_shared_cuda(
                self.device, self.handle, self.storage_bytes, self.storage_offset_bytes, self.ref_counter,
                self.ref_counter_offset, self.event, self.event_sync,
            )  # fmt: skip
            view = torch.empty(0, dtype=self.dtype, device=f"cuda:{self.device}")
            view.set_(storage, self.offset, self.shape, self.stride)
            return view.clone()
        except Exception as error:
            raise IpcUnavailable(f"{type(error).__name__}: {error}") from None


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 62


def share(tensor: torch.Tensor) -> SharedCuda | None:
    """A handle to ``tensor`` (a plain CUDA tensor, kept alive by the caller until the receiver has opened it), or
    None where it cannot be shared."""
    if not (isinstance(tensor, torch.Tensor) and tensor.is_cuda and tensor.layout == torch.strided):
        return None
    if tensor.is_neg() or tensor.is_conj():  # lazy bits the handle would not carry: the caller resolves them
        return None
    try:
        device, handle, size, start, counter, counter_offset, event, sync = tensor.untyped_storage()._share_cuda_()
        return SharedCuda(
            tensor.dtype, tuple(tensor.shape), tuple(tensor.stride()), tensor.storage_offset(), int(device),
            bytes(handle), int(size), int(start), bytes(counter), int(counter_offset), bytes(event), bool(sync),
        )  # fmt: skip
    except Exception:
        return None


_pools: dict[int, object] = {}  # device index → the memory pool of what this process exports


def exportable_copy(tensor: torch.Tensor) -> torch.Tensor | None:
    """A copy of the CUDA tensor ``tensor`` in memory that holds nothing but exports (see the module docstring), its
    lazy negation and conjugation resolved; None where torch has no memory pools (then send it as bytes)."""
    try:
        index = tensor.device.index if tensor.device.index is not None else torch.cuda.current_device()
        pool = _pools.get(index)
        if pool is None:
            with torch.cuda.device(index):
                pool = _pools[index] = torch.cuda.MemPool()
        with torch.cuda.use_mem_pool(pool, device=index):
            return tensor.detach().resolve_neg().resolve_conj().clone()
    except Exception:
        return None
