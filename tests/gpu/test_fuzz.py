"""fpa fuzz on a GPU: the reference runs as PyTorch's default has it, and candidates are judged on the device."""

from __future__ import annotations

import pathlib

import pytest

from fp_analysis.explain.jobs import fuzz_files

CASES = pathlib.Path(__file__).parent.parent / "fuzz_cases"


@pytest.fixture(autouse=True)
def _fresh_database(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_HYPOTHESIS_DB", str(tmp_path / "hypothesis"))


@pytest.mark.gpu
def test_gpu_fuzz_judges_candidates_on_the_device():
    """On a GPU the reference runs as PyTorch's default has it (cuDNN TF32 allowed): arithmetic, not a failure."""
    result = fuzz_files(CASES / "conv_norm_affine_problem.py", CASES / "conv_norm_affine_fused.py", max_examples=60,
                        device="cuda", seed=0)  # fmt: skip
    assert result["failures"] == [] and result["examples"] == 60, result
    found = fuzz_files(CASES / "convT2d_problem.py", CASES / "convT2d_bug_output_padding.py", max_examples=60,
                       device="cuda", seed=0)  # fmt: skip
    assert found["failures"][0]["explanation"]["verdict"] == "bug" and found["failures"][0]["command"].count("cuda")
