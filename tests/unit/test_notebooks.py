"""notebooks/ holds the four notebooks the docs describe (process/test_notebooks.py runs every one)."""

from __future__ import annotations

import pathlib

NOTEBOOKS = sorted((pathlib.Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_the_notebooks_exist():
    assert {p.stem for p in NOTEBOOKS} >= {"accumulation_orders", "tf32_mismatch", "epilogue", "whole_model"}
