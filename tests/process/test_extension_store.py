"""Extensions built once for every sample that asks for the same one (``run.extension_store``), through the real
command line: each test compiles (half a minute of the C++ compiler on two cores), so they are marked slow.

Two samples of one problem whose Python differs and whose ``load_inline`` is the same: the first builds in fpa's store,
the second imports that build and compiles nothing, and neither may write the store; sources that do not compile
compile once too. A source that includes a file the
solution wrote is built by the solution itself, in its own folder: the store's builder may not read that file, so no
build in the store depends on anything but its key.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import time

import pytest

from fp_analysis.triage.builds import build_ahead
from fp_analysis.triage.discovery import Pair

from ..cli_runs import explain_args, fpa
from ..hostile_pairs import pair_folder

pytestmark = [pytest.mark.slow, pytest.mark.long]

SOLUTION = """
import os, pathlib, tempfile
from torch.utils.cpp_extension import load_inline
from _conv import Conv

{before}
ext = load_inline("twice", cpp_sources={source}, functions=["twice"])
assert ext.twice(21) == 42
print("loaded from", ext.__file__)
{after}

class ModelNew(Conv):  # {tag}
    pass
"""
SOURCE = repr("int twice(int a) { return 2 * a; }\n")  # as the solution's code writes it
TRIES_TO_WRITE = """
for target in (pathlib.Path(ext.__file__), pathlib.Path(ext.__file__).parent / "planted.so"):
    try:
        target.write_bytes(b"planted")
        print("wrote", target)
    except OSError as error:
        print("refused", error.errno)
"""
TICKS = """
import threading, time
ticks = []


def tick():  # a thread of the solution's, which must not run while fpa builds for it (its call's clock is stopped)
    while len(ticks) < 100_000:
        ticks.append(time.monotonic())
        time.sleep(0.05)


threading.Thread(target=tick, daemon=True).start()
time.sleep(0.3)
"""
LONGEST_PAUSE = """
print(f"longest pause {max(b - a for a, b in zip(ticks, ticks[1:])):.1f}")
"""
WATCHES_THE_LOCK = """
import threading, time
mine = os.path.join(os.environ["TORCH_EXTENSIONS_DIR"], "mine")
os.makedirs(mine, exist_ok=True)


def watch():
    while not os.path.exists(os.path.join(mine, "lock")):
        time.sleep(0.01)
    print("lock seen", flush=True)


threading.Thread(target=watch, daemon=True).start()
"""
WRITES_A_HEADER = """
header = pathlib.Path(tempfile.gettempdir()) / "factor.h"
header.write_text("#define FACTOR 2\\n")
"""


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path / "results"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _explain(folder: pathlib.Path, solution: str, timeout: str = "300") -> tuple[dict, list[str], float]:
    """The verdict's JSON, what the solution printed (its lines) and the command's seconds."""
    start = time.perf_counter()
    run = fpa(*explain_args(folder / "problem.py", folder / solution, "--trials", "2", "--json", "--timeout", timeout))
    seconds = time.perf_counter() - start
    data = json.loads(run.stdout)
    return data, data["worker"]["solution"]["stdout"].splitlines(), seconds


def _store(tmp_path) -> pathlib.Path:
    return tmp_path / "cache" / "fp_analysis" / "extensions" / "by-arguments"


def test_two_samples_with_one_extension_build_it_once_and_neither_may_write_it(tmp_path):
    folder = pair_folder(tmp_path, {
        "first.py": SOLUTION.format(before=TICKS, source=SOURCE, after=LONGEST_PAUSE, tag="first sample"),
        "second.py": SOLUTION.format(before="", source=SOURCE, after=TRIES_TO_WRITE, tag="second sample"),
    })  # fmt: skip
    # the store's build is fpa's work, not the user's call: it is not timed by --timeout (the compiler alone takes
    # longer than 5 s with torch's headers)
    first, printed_first, _ = _explain(folder, "first.py", timeout="5")
    builds = [path for path in _store(tmp_path).iterdir() if path.is_dir() and not path.name.startswith(".")]
    assert first["verdict"] == "identical" and len(builds) == 1, (first, builds)
    library = builds[0] / "twice.so"
    before = hashlib.sha256(library.read_bytes()).hexdigest()

    second, printed_second, seconds = _explain(folder, "second.py")
    assert second["verdict"] == "identical", second
    assert printed_first[0] == printed_second[0] == f"loaded from {library}"
    # stopped while fpa compiled (with torch's headers, seconds on any machine), so --timeout 5 does not time it
    assert float(printed_first[1].removeprefix("longest pause ")) > 3.0, printed_first
    if os.environ.get("FPA_SANDBOX") != "0":
        assert printed_second[1:] == ["refused 13", "refused 13"], printed_second  # Landlock: EACCES
    assert hashlib.sha256(library.read_bytes()).hexdigest() == before
    own = [path for path in (tmp_path / "cache" / "fp_analysis" / "extensions").rglob("*.so")]
    assert own == [library], own  # nothing built in either solution's own folder
    print(f"the second sample's explain: {seconds:.1f} s")


def test_a_source_that_includes_a_file_the_solution_wrote_is_built_by_the_solution(tmp_path):
    source = """f'#include "{header}"\\nint twice(int a) {{ return FACTOR * a; }}\\n'"""
    solution = SOLUTION.format(before=WRITES_A_HEADER, source=source, after="", tag="writes a header")
    folder = pair_folder(tmp_path, {"solution.py": solution})
    data, printed, _ = _explain(folder, "solution.py")
    assert data["verdict"] == "identical", data
    built = printed[0].removeprefix("loaded from ")
    assert not pathlib.Path(built).is_relative_to(_store(tmp_path)), built  # its own folder, not the store's
    assert not any(path.suffix == ".so" for path in _store(tmp_path).rglob("*")), list(_store(tmp_path).rglob("*"))


def test_a_build_killed_by_the_timeout_leaves_no_lock_for_the_next_run(tmp_path):
    """torch's build holds a file "lock" in its folder while it builds and waits for it to go: one left by a build
    killed with its process (a timeout) made the next run of the same files wait for it until its own timeout."""
    own_folder = "build_directory=os.path.join(os.environ['TORCH_EXTENSIONS_DIR'], 'mine'), "  # the store leaves it
    solution = SOLUTION.format(before=WATCHES_THE_LOCK, source=SOURCE, after="", tag="its own folder")
    folder = pair_folder(tmp_path, {"solution.py": solution.replace("cpp_sources=", own_folder + "cpp_sources=")})
    killed, _, _ = _explain(folder, "solution.py", timeout="4")
    assert killed["error"]["fate"] == "timed_out", killed
    assert "lock seen" in killed["worker"]["solution"]["stdout"], killed  # killed while torch's build held it
    again, printed, _ = _explain(folder, "solution.py", timeout="120")
    assert again["verdict"] == "identical", again
    assert any(line.startswith("loaded from ") and "/mine/" in line for line in printed), printed


FALLS_BACK = """
from torch.utils.cpp_extension import load_inline
from _conv import Conv

try:
    load_inline("twice", cpp_sources={source}, functions=["twice"])
except RuntimeError as error:  # as a generated solution does: PyTorch's path where its kernel does not build
    print("fell back:", str(error).splitlines()[0])


class ModelNew(Conv):
    pass
"""


def test_sources_that_do_not_compile_compile_once_for_every_sample_that_has_them(tmp_path):
    """The store's compile fails with an error in the sources: the solution's call raises torch's error with the
    compiler's words (a second compile, in the solution's own folder, would fail the same way), and a sample with the
    same sources gets it without compiling at all — as the RuntimeError torch's build raises."""
    broken = repr("int twice(int a) { return 2 * a }\n")
    folder = pair_folder(tmp_path, {
        "fails.py": SOLUTION.format(before="", source=broken, after="", tag="does not compile"),
        "falls_back.py": FALLS_BACK.format(source=broken),
    })  # fmt: skip
    failed, _, _ = _explain(folder, "fails.py")
    assert failed["error"]["fate"] == "raised", failed
    said = json.dumps(failed["error"])
    assert "Error building extension 'twice'" in said and "error: expected" in said, said
    kept = [path for path in _store(tmp_path).iterdir() if path.name.endswith(".failed")]
    assert len(kept) == 1, list(_store(tmp_path).iterdir())
    pair = Pair(id="fails", problem=folder / "problem.py", solution=folder / "fails.py", expected=None)
    ahead = build_ahead(pair, 60.0, {"TORCH_EXTENSIONS_DIR": str(tmp_path / "own")}, gpu_seen=False)
    assert ahead["extensions"] == {"built": 0, "found": 0, "own": 0, "failed": 1}, ahead  # a triage's row counts it
    assert "error: expected" in json.dumps(ahead["error"].to_dict()), ahead  # it stands as the pair's verdict

    fell_back, printed, seconds = _explain(folder, "falls_back.py")
    assert fell_back["verdict"] == "identical", fell_back
    assert len(printed) == 1 and printed[0].startswith("fell back: Error building extension 'twice'"), printed
    extensions = tmp_path / "cache" / "fp_analysis" / "extensions"
    ninja_files = [path for path in extensions.rglob("build.ninja")]
    assert ninja_files == [], ninja_files  # neither solution compiled in its own folder; the store's work is gone
    print(f"the second sample's explain: {seconds:.1f} s")
