"""How many solutions a GPU host builds at once: the cores at what a build keeps busy (its .cu unit, and its C++ unit
a tenth as long with the precompiled header), bounded by memory (5 GiB a build: experiments/bench_build_memory.py
measured 4.35 GiB)."""

from __future__ import annotations

import pytest

from fp_analysis.triage import pool


@pytest.mark.parametrize(
    ("cores", "free_gib", "builders"),
    [(16, 100, 14), (128, 560, 112), (64, 20, 4), (16, None, 14), (1, 100, 1), (16, 1, 1)],
)
def test_builders_fill_the_cores_at_what_a_build_keeps_busy_within_memory(monkeypatch, cores, free_gib, builders):
    monkeypatch.setattr(pool.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(pool, "available_bytes", lambda device="cpu": None if free_gib is None else free_gib << 30)
    assert pool._default_builders("cuda") == builders
    assert pool._default_builders("cpu") == 1  # a CPU triage builds inside its jobs
