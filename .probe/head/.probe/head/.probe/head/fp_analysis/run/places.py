"""Where fp_analysis keeps files of its own: one cache root, so nothing lands in the user's working directory.

``cache_dir("kernels")`` is ``$XDG_CACHE_HOME/fp_analysis/kernels`` (XDG Base Directory spec;
``$XDG_CACHE_HOME`` defaults to ``~/.cache``), created on demand. A variable named by ``override``
(``FPA_KERNEL_CACHE``, ``FPA_HYPOTHESIS_DB``...) moves that one folder.
"""

from __future__ import annotations

import os
import pathlib

__all__ = ["cache_dir"]


def cache_dir(name: str, override: str | None = None) -> pathlib.Path:
    """Return the cache folder ``name`` (created), or ``$override`` where that variable is set and non-empty."""
    moved = os.environ.get(override) if override else None
    if moved:
        path = pathlib.Path(moved).expanduser()
    else:
        root = os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache"
        path = pathlib.Path(root).expanduser() / "fp_analysis" / name
    path.mkdir(parents=True, exist_ok=True)
    return path
