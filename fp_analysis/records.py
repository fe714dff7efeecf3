"""JSON-safe records: what ``--json`` prints, what the store keeps and what a worker hands back.

``plain(value)`` turns results into data that strict JSON accepts: tuples become lists, numpy scalars
and arrays become Python numbers and lists, and non-finite floats become ``None`` (JSON has no NaN or
infinity; a record that needs to say "infinite" says so in a field of its own, as ``NonfiniteStats``
does). ``dumps`` is ``json.dumps`` of ``plain(value)`` with ``allow_nan=False``, so what it prints
always parses, with any JSON parser.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from typing import Any

__all__ = ["dumps", "loads_strict", "plain"]


def plain(value: Any) -> Any:
    """Return ``value`` as str / int / float / bool / None / list / dict only, non-finite floats as None."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(value.to_dict() if hasattr(value, "to_dict") else dataclasses.asdict(value))
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy scalars and arrays, torch tensors
        return plain(value.tolist())
    return str(value)


def dumps(value: Any, indent: int | None = 1) -> str:
    """Strict JSON text of ``plain(value)``."""
    return json.dumps(plain(value), indent=indent, allow_nan=False)


def loads_strict(text: str) -> Any:
    """``text`` parsed as JSON that any parser takes (no NaN or Infinity tokens), or None when it is not: the
    check that what ``--json`` printed is what ``dumps`` promises."""

    def refuse(name):
        raise ValueError(f"{name} is not JSON")

    try:
        return json.loads(text, parse_constant=refuse)
    except ValueError:
        return None
