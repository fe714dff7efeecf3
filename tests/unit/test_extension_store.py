"""fpa's store of extension builds (``run.extension_store``): which ``load_inline`` calls it builds, what its key
covers, and what its builder may read. The builds themselves (a compiler's minute) are in
tests/process/test_extension_store.py, marked slow."""

from __future__ import annotations

import fcntl
import inspect
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from fp_analysis.run import extension_store, hardening
from fp_analysis.run.extension_build import readable
from fp_analysis.run.extension_checks import BUILD_ENVIRONMENT, DEFAULTS, not_shared
from fp_analysis.run.supervisor import JOB_FOLDER_PREFIX

SOURCE = "#include <torch/extension.h>\ntorch::Tensor twice(torch::Tensor x) { return x * 2.0; }\n"


def _request(**arguments) -> dict:
    """A request as the solution's process sends it for ``load_inline("twice", SOURCE, functions=["twice"])``, with
    load_inline's defaults, and ``arguments`` over them."""
    defaults = {"name": "twice", "cpp_sources": SOURCE, "cuda_sources": None, "sycl_sources": None,
                "functions": ["twice"], "extra_cflags": None, "extra_cuda_cflags": None, "extra_sycl_cflags": None,
                "extra_ldflags": None, "extra_include_paths": None, "build_directory": None, "with_cuda": None,
                "with_sycl": None, "is_python_module": True, "with_pytorch_error_handling": True,
                "keep_intermediates": True, "use_pch": False, "no_implicit_headers": False}  # fmt: skip
    return {"arguments": {**defaults, **arguments}, "arch_list": None,
            "environment": {name: os.environ.get(name) for name in BUILD_ENVIRONMENT}}  # fmt: skip


def test_a_plain_call_is_built_in_the_store():
    assert not_shared(_request()) is None
    assert not_shared(_request(extra_cuda_cflags=["-O3", "--use_fast_math", "-arch=sm_90"])) is None


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"build_directory": "/tmp/mine"}, "build_directory"),
        ({"use_pch": True}, "use_pch"),
        ({"is_python_module": False}, "is_python_module"),
        ({"name": "../planted"}, "identifier"),
        ({"extra_cflags": ["-DX=$(touch /tmp/pwned)"]}, "extra_cflags with characters"),
        ({"extra_cuda_cflags": ["-O3; rm -rf ~"]}, "extra_cuda_cflags with characters"),
        ({"extra_ldflags": ["-lfoo\nbuild evil: phony"]}, "extra_ldflags with characters"),
        ({"extra_cflags": "-O3"}, "not a list"),
        ({"cpp_sources": 42}, "not text"),
        ({"with_cuda": "yes"}, "switch"),
        ({"a_new_argument": 1}, "does not know"),
        ({"extra_cflags": ["-O3", "-march=native"]}, "native"),
        ({"extra_cuda_cflags": ["-arch=native"]}, "native"),
        ({"build_directory": "x" * (1 << 20)}, "build_directory='xxx"),
    ],
)
def test_what_only_the_solutions_own_build_takes_is_answered_own(change, words):
    """Each is answered ``own`` with why: the solution's process then builds in its own folder, as without the store."""
    assert words in not_shared(_request(**change))
    assert set(extension_store.answer(_request(**change), deadline=0.0)) == {"own"}


def test_a_request_holding_anything_but_plain_data_is_answered_own_without_raising():
    """A tensor where a switch belongs (a forward's reply may carry tensors): comparing it with the default raised in
    the worker, which ended the job as fpa's internal error (an adversarial hunt, 2026-12-05)."""
    import torch

    for change in ({"is_python_module": torch.ones(2)}, {"use_pch": torch.ones(2)}, {"functions": [torch.ones(1)]}):
        assert set(extension_store.answer(_request(**change), deadline=0.0)) == {"own"}
    assert len(not_shared(_request(build_directory="x" * (1 << 20)))) < 200  # reasons stay short


def test_a_solution_that_changed_the_builds_environment_builds_for_itself(monkeypatch):
    request = _request()
    request["environment"]["CXX"] = "/tmp/my-compiler"
    assert "CXX" in not_shared(request)
    monkeypatch.setenv("FPA_SANDBOX", "0")
    assert "FPA_SANDBOX=0" in not_shared(_request())
    monkeypatch.setenv("FPA_EXTENSION_STORE", "0")
    assert "FPA_EXTENSION_STORE=0" in not_shared(_request())


def test_the_key_covers_the_sources_the_flags_and_the_architectures():
    arguments = _request()["arguments"]
    key = extension_store._key(arguments, "9.0")
    assert key == extension_store._key(dict(arguments), "9.0")
    assert key != extension_store._key({**arguments, "cpp_sources": SOURCE.replace("2.0", "2.5")}, "9.0")
    assert key != extension_store._key({**arguments, "extra_cflags": ["-O3"]}, "9.0")
    assert key != extension_store._key({**arguments, "functions": ["twice", "other"]}, "9.0")
    assert key != extension_store._key(arguments, "8.0;9.0+PTX")


def test_the_builder_reads_no_folder_a_solution_may_write_nor_any_beyond_the_toolchain(tmp_path, monkeypatch):
    """A solution's process writes its job's folder (in the temporary folder) and its extensions folder (in the
    cache): the builder's readable places hold neither, nor any folder above them (``/``, ``/tmp``, the cache). Nor
    /opt, /usr/local or the repository whole: a header beside a sample kept there, included by its absolute path,
    was read into a build whose key does not hold it, and its next request got the stale build (a review)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    temporary = pathlib.Path(tempfile.gettempdir()).resolve()
    job = pathlib.Path(tempfile.mkdtemp(prefix=JOB_FOLDER_PREFIX)).resolve()
    try:
        monkeypatch.setenv("CPATH", os.pathsep.join([str(job), str(tmp_path / "cache"), "/", str(tmp_path / "pch")]))
        (tmp_path / "pch").mkdir()
        places = [pathlib.Path(place) for place in readable()]
    finally:
        job.rmdir()
    cache = (tmp_path / "cache" / "fp_analysis" / "extensions").resolve()
    for place in places:
        for written in (temporary, cache, job):
            assert place != written and place not in written.parents and job not in place.parents, place
    assert str((tmp_path / "pch").resolve()) in map(str, places)  # fpa's own include path (the header) stays
    base = pathlib.Path(sys.base_prefix).resolve()
    assert base in places or str(base) in ("/", "/usr", "/usr/local", "/opt")  # a Python in /usr: its folders only
    repository = pathlib.Path(extension_store.__file__).resolve().parents[2]
    assert not {pathlib.Path(p) for p in ("/", "/usr", "/usr/local", "/opt")} & set(places), places
    assert repository not in places and all(repository not in place.parents or ".venv" in place.parts
                                            or place.name == "fp_analysis" for place in places), places  # fmt: skip


_READER = """
import json, sys
from fp_analysis.run import hardening
allowed, denied, writable = sys.argv[1:4]
confined = hardening.sandbox([writable], [allowed])
said = {"confined": confined is not None}
for name, path in (("allowed", allowed + "/file"), ("denied", denied + "/file")):
    try:
        with open(path) as file:
            said[name] = file.read()
    except OSError as error:
        said[name] = f"refused: {error.errno}"
print(json.dumps(said))
"""


@pytest.mark.skipif(hardening._libc() is None, reason="Linux only")
def test_a_sandbox_given_readable_places_reads_nothing_else(tmp_path):
    for name in ("allowed", "denied", "writable"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "file").write_text(name)
    folders = [str(tmp_path / name) for name in ("allowed", "denied", "writable")]
    package = str(pathlib.Path(extension_store.__file__).parents[2])
    done = subprocess.run([sys.executable, "-c", _READER, *folders], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": package})  # fmt: skip
    said = json.loads(done.stdout)
    if not said["confined"]:
        pytest.skip("the kernel has no Landlock")
    assert said["allowed"] == "allowed" and said["denied"] == "refused: 13", said


def test_the_triages_precompiled_header_does_not_change_the_key(tmp_path, monkeypatch):
    """The builders name the header's folder in CPATH, the GPU's jobs do not: the same object files (triage.headers),
    so the job finds the builder's build."""
    from fp_analysis.run.places import cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CPATH", raising=False)
    extension_store._toolchain.cache_clear()
    without = extension_store._key(_request()["arguments"], "9.0")
    monkeypatch.setenv("CPATH", str(cache_dir("headers") / "0123abcd"))
    extension_store._toolchain.cache_clear()
    assert extension_store._key(_request()["arguments"], "9.0") == without
    monkeypatch.setenv("CPATH", str(tmp_path / "other_headers"))
    extension_store._toolchain.cache_clear()
    assert extension_store._key(_request()["arguments"], "9.0") != without
    extension_store._toolchain.cache_clear()


def _compiler_says(tmp_path: pathlib.Path, source: str, *, suffix: str = ".cpp", compiler: str = "c++",
                   link: tuple[str, ...] = (), readable_only: list[str] | None = None) -> str:  # fmt: skip
    """torch's message for a build whose compile (then link, with ``link`` flags) of ``source`` failed, with the real
    compiler's words; ``readable_only``: compiled in a Landlock sandbox that reads only these places (the builder's)."""
    (tmp_path / f"main{suffix}").write_text(source)
    steps = [[compiler, "-c", f"main{suffix}", "-o", "main.o"]] + ([[compiler, "main.o", *link]] if link else [])
    script = (
        "import json, subprocess, sys\n"
        "from fp_analysis.run import hardening\n"
        "readable, steps = json.loads(sys.argv[1])\n"
        "if readable is not None and hardening.sandbox([sys.argv[2]], readable) is None:\n"
        "    sys.exit(3)\n"
        "for step in steps:\n"
        "    done = subprocess.run(step, capture_output=True, text=True)\n"
        "    print(done.stdout + done.stderr, end='')\n"
        "    if done.returncode:\n"
        "        sys.exit(1)\n"
    )
    package = str(pathlib.Path(extension_store.__file__).parents[2])
    done = subprocess.run([sys.executable, "-c", script, json.dumps([readable_only, steps]), str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": package})  # fmt: skip
    if done.returncode == 3:
        pytest.skip("the kernel has no Landlock")
    assert done.returncode == 1, (done.stdout, done.stderr)  # it failed, as the case means it to
    return f"Error building extension 'twice': {done.stdout}"


def _arguments(source: str) -> dict:
    return _request(cpp_sources=source)["arguments"]


@pytest.mark.parametrize(
    "source",
    ["int twice(int a) { return 2 * a }\n", "int twice(int a) { return 2 * undeclared; }\n"],
    ids=["syntax", "undeclared"],
)
def test_an_error_in_the_sources_is_kept_as_the_keys(tmp_path, source):
    """The compile fails the same way wherever it runs: the solution's call raises it without compiling again."""
    said = _compiler_says(tmp_path, source)
    assert extension_store._failed_in_sources(said, _arguments(source)), said


def test_a_failure_that_may_go_otherwise_outside_the_builders_sandbox_is_the_solutions_to_build(tmp_path):
    """A file not found or not readable (one the solution wrote, which the builder may not read), a library the linker
    cannot find, and an error a silent ``__has_include`` led to: the solution builds for itself, as before the
    store kept failures."""
    written = tmp_path / "written"
    written.mkdir()
    (written / "factor.h").write_text("#define FACTOR 2\n")
    missing = "#include <not_there.h>\nint twice(int a) { return 2 * a; }\n"
    unreadable = f"#include <{written}/factor.h>\nint twice(int a) {{ return FACTOR * a; }}\n"
    silent = f"#if __has_include(<{written}/factor.h>)\n#else\n#error no header\n#endif\n"
    cases = {
        "missing": (missing, {}),
        "unreadable": (unreadable, {"readable_only": readable()}),
        "silent": (silent, {"readable_only": readable()}),
        "library": ("int main() { return 0; }\n", {"link": ("-lfpa_no_such_library",)}),
    }
    for name, (source, how) in cases.items():
        work = tmp_path / name
        work.mkdir()
        said = _compiler_says(work, source, **how)
        assert not extension_store._failed_in_sources(said, _arguments(source)), (name, said)


@pytest.mark.parametrize(
    ("source", "flags"),
    [
        ('#if __has_\\\ninclude("factor.h")\n#endif\n', {}),  # spliced as the preprocessor splices it
        ('static_assert(sizeof(__FILE__) > 40, "where");\n', {}),  # the builder's folder is not the solution's
        ('static_assert(__TIMESTAMP__[18] % 2 == 0, "when");\n', {}),
        ("#define CAT(a, b) a##b\nconst char *t = CAT(__TI, ME__);\n", {}),  # pasting makes any of them
        ('#include "factor.h"\n', {}),  # found first in the solution's own folder, in its own build
        ("#define HEADER <factor.h>\n#  include HEADER\n", {}),
        ('#embed "data.bin"\n', {}),
        ("int x;\n", {"extra_cflags": ["-I."]}),
        ("int x;\n", {"extra_cuda_cflags": ["-Xcompiler", "-Ifactor"]}),
        ("int x;\n", {"extra_cuda_cflags": ["--include-path=inc"]}),
        ("int x;\n", {"extra_cflags": ["-include", "factor.h"]}),
        ("int x;\n", {"extra_include_paths": ["inc"]}),
        ("int x;\n", {"functions": {"twice": '") #if __has_include("probe.h") ("'}}),  # written into main.cpp
    ],
)
def test_sources_that_may_compile_otherwise_in_the_solutions_folder_keep_no_failure(tmp_path, source, flags):
    """Whatever the compiler said, a failure of sources that read a file, their own name or the clock, or that are
    given include folders, may go otherwise in the solution's own build (an adversarial review, 2026-12-05: a
    header in the solution's build folder named as a system one, a spliced ``__has_include``, ``__FILE__``)."""
    said = _compiler_says(tmp_path, "int twice(int a) { return 2 * a }\n")  # an error at a line, nothing else
    assert extension_store._failed_in_sources(said, _arguments("int x;\n"))
    assert not extension_store._failed_in_sources(said, {**_arguments(source), **flags}), (source, flags)
    plain = _request(cpp_sources="#include <torch/extension.h>\n", extra_cflags=["-O3"],
                     extra_cuda_cflags=["--use_fast_math", "-lineinfo"], extra_ldflags=["-lcublas"])  # fmt: skip
    assert extension_store._failed_in_sources(said, plain["arguments"])


def test_a_precompiled_header_in_the_failure_keeps_it_from_being_the_keys():
    """The triage's builders have a precompiled header (``CPATH``), an explain has none, and the key leaves it out:
    a failure that names it (``-Winvalid-pch -Werror``) is not the key's."""
    said = "Error building extension 'twice': main.cpp:1:10: error: /h/torch.h.gch: not used because ... [-Werror]"
    assert extension_store._ERROR_AT_A_LINE.search(said)
    assert not extension_store._failed_in_sources(said, _arguments("int x;\n"))


@pytest.mark.skipif(not shutil.which("nvcc"), reason="no nvcc")
def test_nvcc_errors_are_told_apart_as_the_host_compilers_are(tmp_path):
    (tmp_path / "error").mkdir()
    (tmp_path / "missing").mkdir()
    source = "__global__ void twice(float *x) { x[threadIdx.x] *= 2.0f }\n"
    said = _compiler_says(tmp_path / "error", source, suffix=".cu", compiler="nvcc")
    assert extension_store._failed_in_sources(said, _request(cuda_sources=source)["arguments"]), said
    source = '#include "not_there.cuh"\n' + source.replace("2.0f }", "2.0f; }")
    said = _compiler_says(tmp_path / "missing", source, suffix=".cu", compiler="nvcc")
    assert not extension_store._failed_in_sources(said, _request(cuda_sources=source)["arguments"]), said


def test_a_kept_failure_is_found_by_the_next_request_and_fits_the_answer(tmp_path):
    """Kept whole by a rename, found by ``_known``; a long message is cut to its start and end so that its answer,
    written as JSON escapes the widest characters, is within what the solution's process reads."""
    from fp_analysis.run import extension_requests, wire

    message = "Error building extension 'twice': main.cpp:1:5: error: \U0001d4cd" + "\U0001d4cd" * 40_000
    answered = extension_store._keep_failure(message, tmp_path, "0123")
    assert extension_store._known(tmp_path / "0123", "twice", tmp_path / "0123.failed") == answered
    assert extension_store.kind_of(answered) == "failed"
    assert answered["failed"].startswith(message[:100]) and answered["failed"].endswith("\U0001d4cd" * 100)
    assert "characters of the build's output left out" in answered["failed"]
    assert [path.name for path in tmp_path.iterdir()] == ["0123.failed"]  # nothing half written beside it
    ours, theirs = socket.socketpair()
    with ours, theirs:
        threading.Thread(target=wire.send, args=(ours, 1, answered), daemon=True).start()
        assert wire.receive(theirs, limits=extension_requests._ANSWER).body == answered


def test_a_build_pruned_from_the_store_after_its_answer_is_built_by_the_solution(tmp_path, monkeypatch):
    """``fpa cache --prune`` may remove a store's build between its answer and the solution's import: the call then
    builds for itself, as without the store, rather than fail the solution."""
    import torch.utils.cpp_extension as cpp

    from fp_analysis.run import extension_requests, wire

    def torchs_own(*args, **kwargs):
        return "built by the solution"

    torchs_own.__signature__ = inspect.signature(cpp.load_inline)
    monkeypatch.setattr(cpp, "load_inline", torchs_own)
    ours, theirs = socket.socketpair()
    with ours, theirs:
        extension_requests.interpose(theirs, lambda: 7)

        def worker():
            asked = wire.receive(ours)
            wire.send(ours, asked.seq, {"folder": str(tmp_path / "pruned")})

        threading.Thread(target=worker, daemon=True).start()
        assert cpp.load_inline("twice", SOURCE, functions=["twice"]) == "built by the solution"


def test_a_key_locked_by_what_builds_nothing_is_built_without_waiting_and_a_build_under_way_is_waited_for(
    tmp_path, monkeypatch
):
    """A request waits for its key's lock only while a build of the key is under way (its ``.building-KEY-…``
    folder): a lock held by anything else (a process that may open the file) is passed by after ``_NO_BUILD_S``."""
    monkeypatch.setenv("FPA_EXTENSIONS_CACHE", str(tmp_path / "extensions"))
    request = _request()
    if not_shared(request):
        pytest.skip(f"the store takes no request here: {not_shared(request)}")
    arguments = {name: value for name, value in request["arguments"].items() if name not in DEFAULTS}
    key, store = extension_store._key(arguments, ""), extension_store.store_folder()
    built = []

    def build(arguments, arch, store, key, deadline):
        built.append(key)
        return {"folder": str(store / key), "built": True}

    monkeypatch.setattr(extension_store, "_build", build)
    monkeypatch.setattr(extension_store, "_NO_BUILD_S", 0.4)
    with extension_store.places.lock_file(store / f".{key}.lock") as other:
        fcntl.flock(other, fcntl.LOCK_EX)  # held by what builds nothing
        start = time.monotonic()
        assert extension_store.answer(request, start + 60)["built"] and built == [key]
        assert time.monotonic() - start < extension_store._NO_BUILD_S + 2
        (store / f".building-{key}-x").mkdir()  # a build of it under way: waited for, to the deadline
        start = time.monotonic()
        assert "did not end in time" in extension_store.answer(request, start + 0.8)["own"]
        assert time.monotonic() - start >= 0.8 and built == [key]
