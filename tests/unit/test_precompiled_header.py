"""The triage builders' precompiled torch/extension.h (``triage.headers``): made once in fpa's cache, in the
background, named in the builders' CPATH once it is there; a compiler that fails leaves the builds as they were.
torch's own header takes a minute and 0.8 GB to precompile: here a small header stands in for it (the real one is
measured, with the object file compared byte for byte, by experiments/bench_build_memory.py --precompiled)."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest

from fp_analysis.triage import headers

pytestmark = pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")


def _ready(header: headers.PrecompiledHeader) -> dict:
    header.environment()  # starts it
    deadline = time.monotonic() + 60
    while header.state == "building" and time.monotonic() < deadline:
        time.sleep(0.05)
    return header.environment()


@pytest.fixture
def small_header(tmp_path, monkeypatch):
    """torch/extension.h replaced by a small header of the same name; fpa's cache in ``tmp_path``."""
    source = tmp_path / "include" / "torch" / "extension.h"
    source.parent.mkdir(parents=True)
    source.write_text("#pragma once\nstatic inline int fpa_answer() { return 42; }\n")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CPATH", raising=False)
    monkeypatch.setattr(headers, "_toolchain", lambda: ("c++", source, ("-fPIC", "-isystem", str(source.parents[1]))))
    return source


def test_a_header_made_once_is_found_first_by_a_build_that_names_it_in_cpath(small_header, tmp_path):
    header = headers.PrecompiledHeader()
    assert header.state == "not asked"
    environment = _ready(header)
    assert header.state == "ready"
    folder = environment["CPATH"]
    made = list((tmp_path / "cache").rglob("extension.h.gch"))
    assert [str(p) for p in made] == [f"{folder}/torch/extension.h.gch"]
    user = tmp_path / "main.cpp"
    user.write_text("#include <torch/extension.h>\nint main() { return fpa_answer() - 42; }\n")
    compiled = subprocess.run(["c++", "-H", "-fPIC", "-isystem", str(small_header.parents[1]), str(user), "-o",
                               str(tmp_path / "main")], capture_output=True, text=True, env={**environment,
                               "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stderr.startswith(f"! {folder}/torch/extension.h.gch"), compiled.stderr[:300]  # "!": used
    stamp = made[0].stat().st_mtime_ns
    assert _ready(headers.PrecompiledHeader())["CPATH"] == folder  # another triage: the same file, not made again
    assert made[0].stat().st_mtime_ns == stamp


def test_a_cpath_the_user_set_is_kept_after_ours(small_header, monkeypatch):
    monkeypatch.setenv("CPATH", "/opt/theirs")
    environment = _ready(headers.PrecompiledHeader())
    assert environment["CPATH"].endswith(":/opt/theirs") and environment["CPATH"] != ":/opt/theirs"


def test_a_compiler_that_fails_leaves_the_builds_without_it(small_header, monkeypatch):
    small_header.write_text("this is not C++;\n")
    header = headers.PrecompiledHeader()
    assert _ready(header) == {}
    assert header.state.startswith("not made: the compiler exited")
    assert not list(small_header.parents[2].rglob("*.gch*"))  # no partial file left behind


def test_a_header_the_compiler_passes_over_is_not_named_to_the_builds(small_header, monkeypatch):
    """A file GCC finds but will not use (here not a precompiled header at all; on a machine, one made with other
    options, or by another compiler): each build would read it and parse the header anyway."""
    monkeypatch.setattr(headers, "_command", lambda output: ["sh", "-c", 'printf junk > "$1"', "sh", output])
    header = headers.PrecompiledHeader()
    assert _ready(header) == {}
    assert header.state.startswith("made, not used by c++ (exit 0)"), header.state
    assert "extension.h.gch" in header.state  # GCC's -Winvalid-pch line, naming the file it passed over


def test_a_header_still_being_made_when_the_triage_ends_is_stopped_and_leaves_nothing(small_header, monkeypatch):
    monkeypatch.setattr(headers, "_command", lambda output: ["sh", "-c", "sleep 60", str(small_header), output])
    header = headers.PrecompiledHeader()
    assert header.environment() == {}
    deadline = time.monotonic() + 30
    while header._compiler is None and time.monotonic() < deadline:
        time.sleep(0.05)
    compiler = header._compiler
    started = time.monotonic()
    header.close()
    assert compiler.poll() is not None and time.monotonic() - started < 5  # killed, not waited for
    while header.state == "building" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert header.state.startswith("not made") and header.environment() == {}
    assert not list(small_header.parents[2].rglob("*.gch*"))  # its partial file removed
