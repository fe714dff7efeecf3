"""A results store of a test's own (the ``store`` fixture: FPA_STORE set to it) and the metadata of runs in it."""

from __future__ import annotations

import pytest

from fp_analysis.store import run_metadata


@pytest.fixture
def store(tmp_path, monkeypatch):
    """An empty results store under tmp_path, the one ``fpa`` and the store functions use by default."""
    path = tmp_path / "store"
    monkeypatch.setenv("FPA_STORE", str(path))
    return path


def cpu_run_meta(command: str, **flags) -> dict:
    """The metadata of a run of ``command`` with ``flags`` (seed 7, on the CPU)."""
    return run_metadata(command, flags, seed=7, device="cpu")
