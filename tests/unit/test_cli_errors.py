"""fpa's errors that need no worker: a huge input shape is refused with the memory it would need, and an
internal error is one line, its traceback in a file.
"""

from __future__ import annotations

import pathlib
import re

import pytest

from fp_analysis.errors import ExitCode

from ..usercode_runs import fpa_json


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path.parent / f"{tmp_path.name}-store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FPA_HYPOTHESIS_DB", raising=False)


def test_the_huge_input_shape_refusal_gives_the_estimate():
    _, data, _ = fpa_json("report", "dilated_conv2d", "--input-shape", "100000,32,512,512")
    assert re.search(r"needs about [\d.]+ TB of CPU memory .* is available", data["error"]["message"])


def test_an_internal_error_is_one_line_and_its_traceback_goes_to_a_file(monkeypatch):
    import fp_analysis.study.tolerance_report

    def broken(*args, **kwargs):
        return 1 / 0

    monkeypatch.setattr(fp_analysis.study.tolerance_report, "tolerance_report", broken)
    code, data, stderr = fpa_json("tolerance", "conv3d_kk1")
    assert code == ExitCode.INTERNAL == 4
    assert stderr.count("\n") == 1 and stderr.startswith("internal error: ZeroDivisionError: division by zero")
    path = pathlib.Path(data["error"]["traceback_file"])
    assert path.is_file() and "Traceback (most recent call last)" in path.read_text() and path.name in stderr
