"""A hostile sample refused before anything runs: one that brings its own problem file among the samples
(the tests that run hostile solutions are in process/test_hostile.py).
"""

from __future__ import annotations

import pytest

from ..hostile_pairs import ZEROS, pair_folder


def test_a_sample_that_brings_its_own_problem_file_is_refused(tmp_path):
    from fp_analysis.errors import ParameterError
    from fp_analysis.triage.discovery import discover

    folder = pair_folder(tmp_path / "runs", {})
    (folder / "sample_1").mkdir()
    (folder / "sample_1" / "solution.py").write_text(ZEROS)
    (folder / "sample_1" / "problem.py").write_text(ZEROS.replace("ModelNew", "Model"))  # its own "reference"
    with pytest.raises(ParameterError, match=r"lies among the samples of .*a sample cannot bring its own reference"):
        discover(tmp_path / "runs")
