"""What a job is given is read once and served from memory; an edit is seen, put back, and journaled — without
processes (the end-to-end cases are in process/test_hostile.py)."""

from __future__ import annotations

import os
import pathlib
import sys

import pytest

import fp_analysis
from fp_analysis.errors import ParameterError
from fp_analysis.run.snapshot import Given, Snapshot
from fp_analysis.run.usercode import _SnapshotFinder


@pytest.fixture
def pair(tmp_path):
    (tmp_path / "problem.py").write_text("import helper\n")
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "deep.py").write_text("DEEP = 2\n")
    (tmp_path / "solution.py").write_text("class ModelNew: pass\n")
    return tmp_path


def test_a_snapshot_holds_the_file_and_its_sources_and_sees_a_change_no_further_than_their_size(pair):
    snapshot = Snapshot.take(pair / "problem.py")
    assert set(snapshot.contents) == {"problem.py", "helper.py", "pkg/__init__.py", "pkg/deep.py", "solution.py"}
    assert snapshot.changed() == []
    (pair / "helper.py").write_text("VALUE = 2\n")
    os.truncate(pair / "pkg" / "deep.py", 2**40)  # a sparse terabyte: compared without reading it
    assert sorted(snapshot.changed()) == ["helper.py", "pkg/deep.py"]


def test_a_changed_file_is_put_back_and_a_fifo_in_its_place_does_not_block(pair):
    given = Given.take(pair / "problem.py", pair / "solution.py")
    (pair / "problem.py").unlink()
    os.mkfifo(pair / "problem.py")  # a read of it would wait for ever
    (pair / "solution.py").write_text("edited")
    assert sorted(given.changed()) == [str(pair / "problem.py"), str(pair / "solution.py")]
    restored, failed = given.restore()
    assert len(restored) == 2 and failed == [] and given.changed() == []
    assert (pair / "problem.py").read_text() == "import helper\n" and (pair / "problem.py").is_file()


def test_a_huge_file_among_the_sources_is_refused_by_its_size_before_it_is_read(pair):
    os.truncate(pair / "helper.py", 2**40)
    with pytest.raises(ParameterError, match=r"helper\.py' holds more than"):
        Snapshot.take(pair / "problem.py")


def test_links_among_the_helpers_are_left_out(pair):
    (pair / "pagemap.py").symlink_to("/proc/self/pagemap")
    assert "pagemap.py" not in Snapshot.take(pair / "problem.py").contents


def test_the_finder_serves_helpers_but_never_in_place_of_an_installed_module(pair):
    sources = {"helper.py": b"", "pkg/__init__.py": b"", "pkg/deep.py": b"", "colorsys.py": b"",
               "fp_analysis/numerics/fma_emulation.py": b""}  # fmt: skip
    finder = _SnapshotFinder(pair, sources)
    assert finder.find_spec("helper").origin == str(pair / "helper.py")
    assert finder.find_spec("pkg.deep", [str(pair / "pkg")]).origin == str(pair / "pkg" / "deep.py")
    assert finder.find_spec("colorsys") is None  # the standard library's
    installed = str(pathlib.Path(fp_analysis.__file__).parent / "numerics")
    assert finder.find_spec("fp_analysis") is None
    assert finder.find_spec("fp_analysis.numerics.fma_emulation", [installed]) is None
    assert "colorsys" not in sys.modules or sys.modules["colorsys"].__file__ != str(pair / "colorsys.py")
