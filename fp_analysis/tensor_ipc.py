"""How a CUDA tensor crosses between the worker and the candidate process: as a CUDA IPC handle, not as bytes.

Pickled as CPU bytes through the socket pair, a full-size seed-000 trial (67 M input and 134 M output floats)
cost ~4 s on an H200: a copy to the host, pickling, the socket, unpickling and a copy back, each way. A CUDA IPC
handle (``cudaIpcGetMemHandle``, through torch's own reduction: ``torch.multiprocessing.reductions``) names the
GPU memory instead, and the receiver copies it on the GPU into memory of its own (``SharedCuda.open``), so
neither process can change what the other keeps. The sender's memory must live until that copy; the sender
keeps its tensor until its next message is answered.

IPC can fail where the platform has none, or for memory torch's caching allocator did not make (a solution's
own ``cudaMalloc`` behind ``from_blob``): ``share`` then returns None, ``SharedCuda.open`` raises
``IpcUnavailable``, and the tensor travels as CPU bytes (``fp_analysis.candidate`` decides per tensor and, after
a failure to open, for the rest of the job).
"""

from __future__ import annotations

import torch

__all__ = ["IpcUnavailable", "SharedCuda", "share"]


class IpcUnavailable(RuntimeError):
    """A CUDA IPC handle could not be opened here."""


class SharedCuda:
    """A CUDA tensor of another process, by handle (picklable with the standard pickler: the rebuild function is
    pickled by name, its arguments are plain values)."""

    def __init__(self, rebuild, args: tuple):
        self._rebuild, self._args = rebuild, args

    def open(self) -> torch.Tensor:
        """A copy, in this process's own GPU memory, of the tensor the handle names."""
        try:
            view = self._rebuild(*self._args)
            return view.clone()
        except Exception as error:
            raise IpcUnavailable(f"{type(error).__name__}: {error}") from None


def share(tensor: torch.Tensor) -> SharedCuda | None:
    """A handle to ``tensor`` (a plain CUDA tensor, kept alive by the caller until the receiver has opened it), or
    None where it cannot be shared."""
    if not (isinstance(tensor, torch.Tensor) and tensor.is_cuda and tensor.layout == torch.strided):
        return None
    if tensor.is_neg() or tensor.is_conj():  # lazy bits the handle would not carry: the caller resolves them
        return None
    try:
        from torch.multiprocessing.reductions import reduce_tensor

        rebuild, args = reduce_tensor(tensor.detach())
    except Exception:
        return None
    return SharedCuda(rebuild, args)
