"""How a CUDA tensor crosses between the worker and the candidate process: as a CUDA IPC handle, not as bytes.

Sent as CPU bytes through the socket pair, a full-size seed-000 trial (67 M input and 134 M output floats) cost
~4 s on an H200: a copy to the host, the socket and a copy back, each way. A CUDA IPC handle
(``cudaIpcGetMemHandle``, through torch's storage sharing) names the GPU memory instead. A handle is plain data
(``SharedCuda``: the fields of torch's ``_share_cuda_``), written into a message by ``fp_analysis.run.wire``.

Only the worker makes handles, and only for memory it set apart for the candidate process: copies of the inputs
(``exportable_copy``) and an empty buffer for the output (``exportable_empty``), both in a memory pool of their own.
The candidate process copies the inputs into memory of its own (``SharedCuda.open``) and writes its output into
the buffer (``SharedCuda.view``); the worker copies the buffer out when the reply comes. The worker never opens a
handle the candidate process made: a handle's sizes are the sender's word, and torch maps whatever they claim —
past the shared allocation, into the receiver's own memory. The pool matters too: a handle maps the whole
allocation segment around a tensor, and the caching allocator packs tensors into shared segments, so an input
copied from the general pool could expose the reference's output lying beside it to a solution that maps the
segment itself. The sender keeps what it shared alive until its next request is answered.

IPC can fail where the platform has none: ``share`` then returns None, ``SharedCuda.open``/``view`` raise
``IpcUnavailable``, and the tensors travel as CPU bytes for the rest of the job (``fp_analysis.run.candidate``).
"""

from __future__ import annotations

import dataclasses

import torch

__all__ = ["IpcUnavailable", "SharedCuda", "exportable_copy", "exportable_empty", "share"]

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
        """Every field as JSON data (bytes as hex, the dtype by name), for ``fp_analysis.run.wire``."""
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

    def view(self) -> torch.Tensor:
        """The tensor the handle names, mapped into this process (writes reach the sender's memory)."""
        if not torch.cuda.is_available() or self.device >= torch.cuda.device_count():
            raise IpcUnavailable(f"there is no CUDA device {self.device} here")
        try:
            torch.cuda.init()  # the mapping needs the process's CUDA context: without it, a segfault
            storage = torch.UntypedStorage._new_shared_cuda(
                self.device, self.handle, self.storage_bytes, self.storage_offset_bytes, self.ref_counter,
                self.ref_counter_offset, self.event, self.event_sync,
            )  # fmt: skip
            view = torch.empty(0, dtype=self.dtype, device=f"cuda:{self.device}")
            return view.set_(storage, self.offset, self.shape, self.stride)
        except Exception as error:
            raise IpcUnavailable(f"{type(error).__name__}: {error}") from None

    def open(self) -> torch.Tensor:
        """A copy, in this process's own GPU memory, of the tensor the handle names."""
        return self.view().clone()


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


def _in_export_pool(device: torch.device, make) -> torch.Tensor | None:
    """``make()`` run with the allocations it makes in the export pool of ``device`` (see the module docstring); None
    where torch has no memory pools (then the tensors travel as bytes)."""
    try:
        index = device.index if device.index is not None else torch.cuda.current_device()
        pool = _pools.get(index)
        if pool is None:
            with torch.cuda.device(index):
                pool = _pools[index] = torch.cuda.MemPool()
        with torch.cuda.use_mem_pool(pool, device=index):
            return make()
    except Exception:
        return None


def exportable_copy(tensor: torch.Tensor) -> torch.Tensor | None:
    """A copy of the CUDA tensor ``tensor`` in the export pool, its lazy negation and conjugation resolved."""
    return _in_export_pool(tensor.device, lambda: tensor.detach().resolve_neg().resolve_conj().clone())


def exportable_empty(like: torch.Tensor) -> torch.Tensor | None:
    """An empty contiguous tensor of ``like``'s shape, dtype and device in the export pool: a buffer the other
    process writes its output into."""
    return _in_export_pool(like.device, lambda: torch.empty(like.shape, dtype=like.dtype, device=like.device))
