"""The few CUDA driver API calls the kernels need, through ctypes on libcuda: no extra Python package.

The module is loaded into the context PyTorch made current (its primary context), and launches go
on PyTorch's current stream, so kernels order correctly with the surrounding torch work.
"""

from __future__ import annotations

import ctypes
import pathlib
from functools import lru_cache

from fp_analysis.errors import FpaError

__all__ = ["CudaError", "Kernel", "device_attribute", "device_pointer", "load_kernel"]


class CudaError(FpaError, RuntimeError):
    """A CUDA driver call failed; the message names the call and CUDA's error."""


@lru_cache(maxsize=1)
def _libcuda() -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError as error:
        raise CudaError(f"libcuda.so.1 could not be loaded ({error}); a CUDA driver is needed to run kernels") from None
    _check(lib, lib.cuInit(0), "cuInit")
    return lib


def _check(lib: ctypes.CDLL, status: int, call: str) -> None:
    if status != 0:
        name = ctypes.c_char_p()
        text = ctypes.c_char_p()
        lib.cuGetErrorName(status, ctypes.byref(name))
        lib.cuGetErrorString(status, ctypes.byref(text))
        raise CudaError(f"{call} failed: {(name.value or b'?').decode()} ({(text.value or b'').decode()})")


_ATTRIBUTES = {  # CUdevice_attribute values (cuda.h)
    "CLOCK_RATE": 13,
    "MULTIPROCESSOR_COUNT": 16,
    "L2_CACHE_SIZE": 38,
    "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN": 97,
}
_FUNC_MAX_THREADS_PER_BLOCK = 0  # CUfunction_attribute: the __launch_bounds__ block size, if given
_FUNC_SHARED_SIZE_BYTES = 1  # CUfunction_attribute: static shared memory
_FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


def device_attribute(name: str, device: int = 0) -> int:
    """``cuDeviceGetAttribute`` for one of ``_ATTRIBUTES`` (CLOCK_RATE is the maximum clock in kHz)."""
    lib = _libcuda()
    handle = ctypes.c_int()
    _check(lib, lib.cuDeviceGet(ctypes.byref(handle), device), "cuDeviceGet")
    value = ctypes.c_int()
    _check(lib, lib.cuDeviceGetAttribute(ctypes.byref(value), _ATTRIBUTES[name], handle), "cuDeviceGetAttribute")
    return value.value


class Kernel:
    """One kernel function of a loaded cubin."""

    def __init__(self, cubin: pathlib.Path, entry: str):
        lib = _libcuda()
        context = ctypes.c_void_p()
        _check(lib, lib.cuCtxGetCurrent(ctypes.byref(context)), "cuCtxGetCurrent")
        if not context.value:
            raise CudaError("no CUDA context is current: create the tensors on the GPU with torch first")
        self._image = cubin.read_bytes()  # kept alive: the driver may read it lazily
        self._module = ctypes.c_void_p()
        _check(lib, lib.cuModuleLoadData(ctypes.byref(self._module), self._image), f"cuModuleLoadData({cubin.name})")
        self._function = ctypes.c_void_p()
        _check(
            lib,
            lib.cuModuleGetFunction(ctypes.byref(self._function), self._module, entry.encode()),
            f"cuModuleGetFunction({entry})",
        )
        self.static_shared = self._attribute(_FUNC_SHARED_SIZE_BYTES)
        self.max_threads = self._attribute(_FUNC_MAX_THREADS_PER_BLOCK)
        device = ctypes.c_int()
        _check(lib, lib.cuCtxGetDevice(ctypes.byref(device)), "cuCtxGetDevice")
        self.max_shared = device_attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", device.value)
        self._dynamic_limit = 48 * 1024 - self.static_shared  # allowed without opting in

    def _attribute(self, attribute: int) -> int:
        lib = _libcuda()
        value = ctypes.c_int()
        _check(lib, lib.cuFuncGetAttribute(ctypes.byref(value), attribute, self._function), "cuFuncGetAttribute")
        return value.value

    def launch(self, grid: int | tuple[int, int], block: int, args: list, stream: int, shared: int = 0) -> None:
        """Launch on ``stream`` with ``args`` (ctypes values, in the kernel's parameter order); ``grid`` is
        blocks in x, or (x, y); ``shared`` bytes of dynamic shared memory (opted into above 48 KiB)."""
        lib = _libcuda()
        if shared > self._dynamic_limit:
            attribute = _FUNC_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _check(lib, lib.cuFuncSetAttribute(self._function, attribute, shared), "cuFuncSetAttribute")
            self._dynamic_limit = shared
        gx, gy = (grid, 1) if isinstance(grid, int) else grid
        pointers = (ctypes.c_void_p * len(args))(*[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args])
        status = lib.cuLaunchKernel(
            self._function,
            ctypes.c_uint(gx),
            ctypes.c_uint(gy),
            1,
            ctypes.c_uint(block),
            1,
            1,
            ctypes.c_uint(shared),
            ctypes.c_void_p(stream),
            pointers,
            None,
        )
        _check(lib, status, "cuLaunchKernel")


@lru_cache(maxsize=512)
def load_kernel(cubin: pathlib.Path, entry: str, device: int) -> Kernel:
    """The kernel ``entry`` of ``cubin``, loaded once per device."""
    return Kernel(cubin, entry)


def device_pointer(tensor) -> ctypes.c_uint64:
    """A tensor's device address as a kernel argument (a null pointer for None)."""
    return ctypes.c_uint64(tensor.data_ptr() if tensor is not None else 0)
