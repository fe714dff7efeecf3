"""Memory a run will need, measured against what the machine has, before the run starts.

A shape typed with one digit too many asks for terabytes; the allocation then fails deep inside torch
after minutes, or the kernel's OOM killer ends the process without a word. ``require`` refuses such a
run up front with the estimate and what is available, naming the option that set the size.
"""

from __future__ import annotations

import os

from ..errors import ParameterError

__all__ = ["available_bytes", "format_bytes", "require"]

# Share of the available memory a run may plan to use: estimates leave out allocator slack, Python
# objects and temporaries of the libraries called, so a plan at 100% would still be killed.
_HEADROOM = 0.8


def available_bytes(device: str = "cpu") -> int | None:
    """Bytes that can be allocated now on ``device`` ("cpu" or "cuda"), or None where it cannot be told.

    CPU: ``MemAvailable`` of /proc/meminfo (Linux's estimate of memory available without swapping),
    else free physical pages; CUDA: ``torch.cuda.mem_get_info`` on the current device.
    """
    if device == "cuda":
        import torch

        free, _ = torch.cuda.mem_get_info()
        return int(free)
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def format_bytes(n: float) -> str:
    """``n`` bytes as 1.2 GB / 3.3 TB (powers of 1000, as free(1) -H prints them)."""
    if abs(n) < 1000:
        return f"{int(n)} B"
    for unit in ("kB", "MB", "GB", "TB"):
        n /= 1000
        if abs(n) < 1000:
            return f"{n:.3g} {unit}"
    return f"{n / 1000:.3g} PB"


def require(needed: dict[str, int], option: str, device: str = "cpu") -> None:
    """Raise ParameterError naming ``option`` when the parts of ``needed`` (what → bytes) exceed what ``device`` has.

    The message gives the total, its largest parts and the memory available, so the user can choose a
    smaller size. Where availability cannot be told, nothing is refused.
    """
    total = sum(needed.values())
    available = available_bytes(device)
    if available is None or total <= _HEADROOM * available:
        return
    parts = ", ".join(
        f"{what} {format_bytes(size)}" for what, size in sorted(needed.items(), key=lambda kv: -kv[1])[:3]
    )
    raise ParameterError(
        f"Got {option}, which needs about {format_bytes(total)} of {device.upper()} memory ({parts}), but "
        f"{format_bytes(available)} is available; choose a smaller size."
    )
