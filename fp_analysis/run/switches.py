"""torch's global numerics switches (TF32, the default dtype, cuDNN): read in the solution's process before and after
its import, and the notes on those it changed, worded in the worker from what that process sent."""

from __future__ import annotations

import contextlib
import re

__all__ = ["switch_notes", "switches"]

# How a switch's value may be shown: what torch's switches hold (True, 'tf32', torch.float64); the rest of what the
# solution's process sends is not shown (it words its notes itself no more: a reply could carry any text).
_SHOWN_VALUE = re.compile(r"[\w.']{1,40}")


def switch_notes(changed: dict) -> list[str]:
    """The notes on torch's switches the solution's import changed, worded here from what its process sent (the names
    ``_SWITCHES`` knows, each value as ``_SHOWN_VALUE`` allows)."""
    notes = []
    for name, value in changed.items():
        if name not in _SWITCHES:
            continue
        shown = value if _SHOWN_VALUE.fullmatch(value) else "(unreadable)"
        notes.append(
            f"importing the solution set {name} = {shown} (in its own process; under KernelBench, where both models "
            "share one, the reference would run with it too)"
        )
    return notes


# torch's global numerics switches, by name: how each is read from torch.
_SWITCHES = {
    "torch.backends.cudnn.allow_tf32": lambda torch: torch.backends.cudnn.allow_tf32,
    "torch.backends.cuda.matmul.allow_tf32": lambda torch: torch.backends.cuda.matmul.allow_tf32,
    "torch.backends.cudnn.conv.fp32_precision": lambda torch: torch.backends.cudnn.conv.fp32_precision,
    "torch.backends.cuda.matmul.fp32_precision": lambda torch: torch.backends.cuda.matmul.fp32_precision,
    "torch.get_float32_matmul_precision()": lambda torch: torch.get_float32_matmul_precision(),
    "torch.get_default_dtype()": lambda torch: torch.get_default_dtype(),
    "torch.backends.cudnn.enabled": lambda torch: torch.backends.cudnn.enabled,
}


def switches(torch) -> dict:
    """torch's global numerics switches as they are now; a switch that cannot be read is left out."""
    values = {}
    for name, read in _SWITCHES.items():
        with contextlib.suppress(Exception):  # the legacy and new TF32 APIs refuse to be read when mixed
            values[name] = read(torch)
    return values
