"""Appending a command's run to the results store (``fp_analysis.store``), unless ``--no-store``: the store is
warmed while the job runs, and a write that fails is a warning, never the loss of the result already printed."""

from __future__ import annotations

import threading

from ..errors import FpaError
from .console import err

_store_ready: threading.Thread | None = None


def prepare_store(skip: bool) -> None:
    """Import and warm the results store in a thread while a job runs (``store.prepare``): the supervisor only
    waits for its worker then. A failure here is left to the write itself to report."""
    global _store_ready

    def prepare():
        try:
            from ..store import prepare

            prepare()
        except Exception:
            pass

    if not skip:
        _store_ready = threading.Thread(target=prepare, name="fpa-store-prepare", daemon=True)
        _store_ready.start()


def store_run(
    command: str, rows: list[dict], flags: dict, seed: int | None, device: str, skip: bool, versions: dict | None = None
) -> None:
    """Append ``rows`` with the run's metadata to the store (not with ``skip``, nor when there are no rows)."""
    if _store_ready is not None:
        _store_ready.join()
    if skip or not rows:
        return
    from ..store import append_run, run_metadata

    try:
        append_run(rows, run_metadata(command, flags, seed, device, versions))
    except (OSError, FpaError) as error:  # a full disk must not cost the user the result already printed
        err.print(f"[yellow]warning:[/] the run was not stored: {error}")
