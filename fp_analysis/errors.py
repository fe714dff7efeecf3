"""The one exception hierarchy of fp_analysis.

Every error raised at a public boundary is an ``FpaError``; each also derives from the builtin that
PyTorch (or Python) would raise for the same mistake, so callers that catch ``ValueError`` /
``RuntimeError`` / ``TypeError`` keep working.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["DtypeError", "FpaError", "ParameterError", "ShapeError", "enum_member"]


class FpaError(Exception):
    """Base class of every error fp_analysis raises on purpose."""


class ParameterError(FpaError, ValueError):
    """A parameter has a value outside what is allowed; the message names both."""


class ShapeError(FpaError, RuntimeError):
    """Tensors or a configuration have shapes that do not fit together (PyTorch raises RuntimeError)."""


class DtypeError(FpaError, TypeError):
    """An array or tensor has a dtype (or type) the function does not accept."""


def enum_member(enum: type[Enum], value, name: str):
    """``enum(value)``, or a ParameterError that names ``name`` and lists the allowed values."""
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in enum)
        raise ParameterError(f"Got {name}={value!r}, but the only valid values are {allowed}.") from None
