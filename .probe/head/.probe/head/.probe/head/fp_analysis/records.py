"""JSON-safe records: what ``--json`` prints, what the store keeps and what a worker hands back.

``plain(value)`` turns results into data that strict JSON accepts: tuples become lists, numpy scalars
and arrays become Python numbers and lists, and non-finite floats become ``None`` (JSON has no NaN or
infinity; a record that needs to say "infinite" says so in a field of its own, as ``NonfiniteStats``
does). ``dumps`` is ``json.dumps`` of ``plain(value)`` with ``allow_nan=False``, so what it prints
always parses, with any JSON parser.

Text from the user's code or the file system may hold what UTF-8 cannot encode: lone surrogates, which is how
Python holds the undecodable bytes of a file name (``surrogateescape``) and what a user's exception message may
carry. Written as they are, they stop Parquet, a terminal and strict JSON parsers. ``safe_text`` spells them out
(``\xff`` for an undecodable byte, ``\ud800`` for any other surrogate); ``plain`` and ``safe_data`` apply it to
every string, so what fpa prints, stores or hands between its processes is always valid UTF-8.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
from typing import Any

__all__ = ["dumps", "loads_strict", "plain", "safe_data", "safe_text"]


def safe_text(text: str) -> str:
    """``text`` with what UTF-8 cannot encode spelled out as escapes (see the module docstring)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    try:  # a file name's undecodable bytes: as the bytes they were
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def safe_data(value: Any) -> Any:
    """``value`` (JSON data: dicts, lists, strings, numbers) with ``safe_text`` applied to every string, keys too."""
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, dict):
        return {safe_data(k): safe_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [safe_data(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """Return ``value`` as str / int / float / bool / None / list / dict only, non-finite floats as None."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return safe_text(value)
    if isinstance(value, enum.Enum):
        return plain(value.value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {safe_text(str(k)): plain(v) for k, v in value.items()}
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
