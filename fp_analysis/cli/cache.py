"""``fpa cache``: fpa's caches on this machine (builds kept so that no run builds twice), and pruning them."""

from __future__ import annotations

import math
import time
from typing import Annotated

import typer

from .. import records
from ..errors import ParameterError
from ..run.interrupts import work_done
from .arguments import AsJson

# The most days --prune takes: a century is no cache's age, and far more overflows the clock's arithmetic.
_DAYS_MAX = 36_500.0


def cache(
    prune: Annotated[
        float | None,
        typer.Option(
            metavar="DAYS",
            help="remove the builds (fpa's store, the solutions' own, kernels, precompiled headers) not used for more "
            "than DAYS days; 0 removes every one not in use now (a triage running meanwhile makes again what it "
            "built ahead)",
        ),
    ] = None,
    as_json: AsJson = False,
) -> None:
    """fpa's caches on this machine: the extension builds it keeps so that no run builds twice (its store, by
    load_inline's arguments, and the solutions' own), its kernels and the triage's precompiled header, with their
    size and the oldest entry's last use. Nothing removes them on its own: --prune DAYS does."""
    from ..run.caches import prune as prune_caches
    from ..run.caches import summaries

    if prune is not None and (isinstance(prune, bool) or not (math.isfinite(prune) and 0 <= prune <= _DAYS_MAX)):
        raise ParameterError(f"Got --prune {prune!r}, but it must be a number of days >= 0 and <= {_DAYS_MAX:g}.")
    try:
        removed = None if prune is None else prune_caches(prune * 86400.0)
        listed = summaries()
    except OSError as error:  # a cache's folder that cannot be made or read: where the variables put it
        raise ParameterError(
            f"fpa's caches cannot be read: {error.strerror}: {error.filename} (XDG_CACHE_HOME, FPA_EXTENSIONS_CACHE, "
            "FPA_KERNEL_CACHE and FPA_HYPOTHESIS_DB say where they are)"
        ) from None
    work_done()
    if as_json:
        said = {"caches": [summary.to_dict() for summary in listed]}
        print(records.dumps(said if removed is None else {**said, "removed": removed.to_dict()}))
        return
    now = time.time()
    for summary in listed:
        days = None if summary.oldest_use is None else (now - summary.oldest_use) / 86400
        oldest = "" if days is None else f", oldest used {days:.1f} days ago"
        print(f"{summary.name:<10} {summary.entries:>6} entries {_size(summary.bytes):>9}{oldest}\n"
              f"           {summary.what}: {summary.folder}")  # fmt: skip
    if removed is not None:
        parts = [f"{removed.entries[name]} from {name} ({_size(removed.bytes[name])})" for name in removed.entries]
        busy = f"; {removed.busy} in use, left" if removed.busy else ""
        print(f"removed {sum(removed.entries.values())} entries: {', '.join(parts)}{busy}")


def _size(count: int) -> str:
    """Bytes in binary units, as du -h writes them."""
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"
