"""Extensions built once for every solution that asks for the same one: fpa's store of ``load_inline`` builds, keyed
by what determines the binary.

Samples of one problem often carry the same CUDA source behind different Python, and a triage with other options, an
explain after a triage and a sample whose files are copies all ask for builds already made. A build is keyed by the
arguments of ``load_inline`` (the sources, the bindings asked for, the flags), the architectures it compiles for and
the toolchain (torch, its headers' ABI, Python's extension suffix, nvcc and the host compiler): two requests with the
same key get the same folder.

A solution's process cannot be trusted to build for another: anything it may write (its own build folder) it can
rewrite after the build. So the build is made here, by the worker's side (``answer``), from the arguments the solution's
process sent (``extension_requests``), in a process that runs none of the solution's code (``extension_build``) and is
sandboxed to write only its folder and to *read* only the toolchain's places (``_readable``): whatever the sources
name, a file a solution could have written cannot reach the binary, so the key holds everything the binary depends
on. The folder is then renamed into the store, which no solution's sandbox lets it write, and the solution's process
imports the library from there. A build that needs more than this (a file outside the toolchain, an argument the
store does not take, a variable of the build's environment that the solution changed) is answered ``own``, and the
solution builds in its own folder as before (``places.extensions_folder``). Where Landlock is missing, or the
solution's process runs unsandboxed (``FPA_SANDBOX=0``), nothing is shared.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable

from . import places
from .extension_checks import BUILD_ENVIRONMENT, DEFAULTS, not_shared

__all__ = [
    "ANSWERS",
    "BUILD_S",
    "COMPILER_KILLED",
    "STORE_FOLDER",
    "answer",
    "arch_list",
    "build_seconds",
    "key_locked",
    "kind_of",
    "stale_builds",
    "store_folder",
]

# How a request is answered, as its counts are kept (``candidate``, the triage's rows: ``extensions_<kind>``): compiled
# in the store, found there, left to the solution's own build, or failed to compile in the store (now or before) with
# an error in its sources, which the solution's call raises without compiling again (``_failed_in_sources``).
ANSWERS = ("built", "found", "own", "failed")
# How the compilers and ninja say a compiler was killed (gcc: "Killed signal terminated program cc1plus"; nvcc: "died
# due to signal"): the machine's doing (its memory), never a failure kept as the sources'.
COMPILER_KILLED = ("signal terminated program", "died due to signal", "Killed")
# The store's folder inside the extensions' cache (``$FPA_EXTENSIONS_CACHE`` moves both: a cluster's shared folder).
STORE_FOLDER = "by-arguments"
# Bumped when what a key covers changes: older entries are not found.
_FORMAT = 2  # 2: failures in the sources kept (``_failed_in_sources``)
# Seconds a build in the store may take at least (``build_seconds``).
BUILD_S = 600.0
# Seconds after which a folder a build left half made (its worker killed) is removed by the next build.
_STALE_S = 24 * 3600.0
# Seconds a request waits for a key's lock while no build of the key is under way (``key_locked``): longer than a
# builder holds it between taking it and making its folder, or between removing that folder and letting it go.
_NO_BUILD_S = 3.0
# A compiler's error at a line of a source (gcc and clang: "main.cpp:3:5: error:"; nvcc's front end: "main.cu(3):
# error:"): what a failure kept as the sources' must show.
_ERROR_AT_A_LINE = re.compile(r":\d+:\d+: error:|\(\d+\): error")
# Words with which the compilers, the assembler and the linker say a file could not be had (gcc: "fatal error: x.h: No
# such file or directory", "Permission denied"; nvcc: "catastrophic error: cannot open source file"; as: "file not
# found"; ld: "cannot find -lx"), that a precompiled header was in play (gcc names its ".gch": the triage's builders
# have one, an explain has none), or that the build was stopped by the machine (memory, a signal, a crash): a failure
# that says any of them may go otherwise outside the builder's sandbox, and the solution builds for itself.
_MAY_GO_OTHERWISE = re.compile(
    r"permission denied|operation not permitted|no such file|not found|cannot (open|find|read)|can't (open|find)"
    r"|(could not|unable to|failed to) (open|find|read)|catastrophic error|fatal error|internal compiler error"
    r"|\.gch|precompiled|memory exhausted|out of memory|" + "|".join(re.escape(words) for words in COMPILER_KILLED),
    re.IGNORECASE,
)
# What in the sources (their lines spliced as the preprocessor splices them) may compile otherwise in the solution's
# own folder, elsewhere or another time: a file read without failing when it cannot (``__has_include`` is false in
# the builder where the solution's file is not readable, and the source may then take another branch to another
# error), one in the assembler's words, the file's own name or time (the builder's folder is not the solution's), the
# clock, and what can build any of these unseen (token pasting, digraphs, trigraphs)...
_NOT_THE_KEYS = ("__has_include", "__has_embed", "incbin", "__DATE__", "__TIME__", "__TIMESTAMP__", "__FILE__",
                 "__BASE_FILE__", "__FILE_NAME__", "__builtin_FILE", "##", "%:", "??/")  # fmt: skip
# ... and the directives that read a file but an include of ``<…>`` (``"x.h"`` is looked for first in the folder of
# the source, which is the solution's own build folder in its own build, where it may have put one; a macro may name
# either; ``#embed`` reads one)
_READS_A_FILE = re.compile(r"#\s*(embed\b|(include|include_next|import)\s*[^<\s])")
# Flags that name include folders or files (``-I``, ``-iquote``, ``-isystem``, ``-include``, nvcc's ``--include-path``,
# given alone or through ``-Xcompiler``): they may be relative, and so the solution's own folder in its own build
_INCLUDE_FLAG = re.compile(r"(^|[\s,=])-{1,2}(I|i|include|pre-include|system-include)")
# The characters of a failure's message sent to the solution's process (its start, where the first errors are, and
# its end), within the answer's size (``extension_requests``).
_MESSAGE_HEAD, _MESSAGE_TAIL = 12_000, 3_000


def store_folder() -> pathlib.Path:
    """The store's folder (created): beside the solutions' own build folders, in the extensions' cache."""
    folder = places.cache_dir("extensions", places.EXTENSIONS_OVERRIDE) / STORE_FOLDER
    folder.mkdir(exist_ok=True)
    return folder


def answer(request, deadline: float) -> dict:
    """The worker's answer to a solution's process asking for ``load_inline(**arguments)`` (``request``: {"arguments",
    "arch_list", "environment"}, as ``extension_requests`` sends it; anything else is answered ``own``):
    {"folder": where the library is, "built": whether this call built it, "seconds"}; {"failed": torch's message,
    "seconds"} where the sources do not compile (now or when first asked: ``_failed_in_sources``), which the
    solution's call raises as torch's build would; or {"own": why}: the solution builds it itself, in its own folder
    (also where the store's build failed otherwise: a file the builder may not read, which compilers word too many
    ways to tell apart, or a compiler killed). ``deadline``: ``time.monotonic()`` by which the call must end."""
    start = time.monotonic()
    why = not_shared(request)
    if why:
        return {"own": why}
    arguments = {name: value for name, value in request["arguments"].items() if name not in DEFAULTS}  # defaults
    arch = _arch(request.get("arch_list"), arguments)
    key = _key(arguments, arch)
    store = store_folder()
    folder, failure = store / key, store / f"{key}.failed"
    known = _known(folder, arguments["name"], failure)
    if known is None:
        with key_locked(store, key, deadline, building=lambda: _building(store, key)) as held:
            known = _known(folder, arguments["name"], failure)  # built while this call waited
            if known is None and not held and _building(store, key):
                return {"own": "another build of the same arguments did not end in time"}
            if known is None and time.monotonic() >= deadline:
                return {"own": "the store's build had no time left"}
            if known is None:  # held; or held by a process that builds nothing
                known = _build(arguments, arch, store, key, deadline)
    return {**known, "seconds": time.monotonic() - start}


def _known(folder: pathlib.Path, name: str, failure: pathlib.Path) -> dict | None:
    """What the store holds for a key: its library's folder, or the failure of its sources kept (``_keep_failure``);
    None where it holds neither."""
    if (folder / f"{name}.so").is_file():
        _used(folder)
        return {"folder": str(folder), "built": False}
    with contextlib.suppress(OSError, ValueError):
        message = json.loads(failure.read_text())["failed"]
        if isinstance(message, str):
            _used(failure)
            return {"failed": message}
    return None


def _used(entry: pathlib.Path) -> None:
    """Mark an entry used now (touched: its status-change time is now, ``caches.prune``'s last use, which no
    process can set back): ``caches.prune`` removes those unused for a while."""
    with contextlib.suppress(OSError):
        os.utime(entry)


def kind_of(answered: dict) -> str:
    """Which of ``ANSWERS`` an answer of ``answer`` is."""
    if "failed" in answered:
        return "failed"
    if "folder" in answered:
        return "built" if answered.get("built") else "found"
    return "own"


def build_seconds(timeout: float) -> float:
    """The seconds a build in the store may take, for a job whose calls into the user's code may take ``timeout``:
    at least ``BUILD_S``. The compiler is fpa's process, not the user's code, and the user's call is not timed while
    it runs: a build under a triage's parallel builders took 65–90 s on the H200 host (16 cores, 14 builders,
    experiments/results/triage_h200.json), where the triage's --timeout was 90 s, and a slow build is no verdict on
    the solution. A source that keeps the compiler busy for ever costs a builder this long, and is then built by the
    solution itself, under --timeout."""
    return max(timeout, BUILD_S)


def _arch(asked: str | None, arguments: dict) -> str:
    """The architectures the build compiles for: the solution's ``TORCH_CUDA_ARCH_LIST``; where it set none and the
    build has CUDA sources, torch's default for the GPUs this process sees (``arch_list``), named, so that the key
    says it; "" for a build of C++ alone (none apply)."""
    cuda = arguments.get("with_cuda") or (arguments.get("with_cuda") is None and bool(arguments.get("cuda_sources")))
    if not cuda:
        return ""
    if asked and asked.strip() != "native":
        return asked
    import torch

    if not torch.cuda.is_available():
        return ""  # torch's build fails the same way without a GPU, and says why
    capabilities = [torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())]
    return arch_list(capabilities, torch.cuda.get_arch_list())


def arch_list(capabilities, supported) -> str:
    """``TORCH_CUDA_ARCH_LIST`` for GPUs of these (major, minor) compute capabilities, as torch's own default for the
    GPUs it sees (``torch.utils.cpp_extension._get_cuda_arch_flags``): each lowered to the highest architecture
    torch was built for (``supported``: ``torch.cuda.get_arch_list()``; empty: as they are), each once, sorted as
    text, PTX with the last."""
    digits = [re.sub(r"\D", "", name.split("_", 1)[1]) for name in supported if name.startswith("sm_")]
    built_for = [divmod(int(number), 10) for number in digits if number]  # sm_90a: 9.0
    highest = max(built_for, default=None)
    names = sorted({f"{major}.{minor}" for major, minor in (min(c, highest) if highest else c for c in capabilities)})
    return ";".join(names) + "+PTX"


def _key(arguments: dict, arch: str) -> str:
    """The store's key: a hash of the arguments (those ``load_inline`` takes but their defaults, which the store
    alone takes: ``extension_checks.DEFAULTS``), the architectures and the toolchain."""
    said = json.dumps([_FORMAT, sorted(arguments.items()), arch, _toolchain()], default=list)
    return hashlib.sha256(said.encode()).hexdigest()[:32]


@functools.lru_cache(maxsize=1)
def _toolchain() -> list:
    """What besides the arguments decides the binary: torch's version and build (its headers, its ABI), Python's
    (the extension's suffix), nvcc's (``places``) and the host compiler's, with the variables that choose them."""
    import torch
    from torch.utils.cpp_extension import get_cxx_compiler

    compiler = get_cxx_compiler()
    version = ""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True, timeout=30).stdout
    return [*places.toolchain(), torch.__version__, torch.version.git_version, sys.version,
            sysconfig.get_config_var("EXT_SUFFIX"), compiler, version.partition("\n")[0], _variables()]  # fmt: skip


def _variables() -> dict:
    """The build's variables as the key holds them: which GPUs are visible aside (the architectures say what they
    change), and the triage's precompiled header aside from ``CPATH`` (``triage.headers``: the same object files
    with it as without, so that an explain after a triage finds the triage's builds)."""
    headers = str(places.cache_dir("headers"))
    said = {name: os.environ.get(name) for name in BUILD_ENVIRONMENT if name != "CUDA_VISIBLE_DEVICES"}
    if said["CPATH"] is not None:
        kept = [p for p in said["CPATH"].split(os.pathsep) if not p.startswith(headers)]
        said["CPATH"] = os.pathsep.join(kept) or None
    return said


@contextlib.contextmanager
def key_locked(store: pathlib.Path, key: str, deadline: float, building: Callable[[], bool] | None = None):
    """Hold ``key``'s lock in ``store`` (``.KEY.lock``, ``flock``: builders of one machine, or of hosts sharing a
    folder that supports it) until the block ends; yields whether it was had before ``deadline`` (a deadline passed:
    tried once, without waiting; ``caches.prune``). With ``building`` (whether a build of the key is under way), the
    wait also ends once none has been for ``_NO_BUILD_S``: a lock is no proof of a build, as any process that may
    open the file may lock it (``flock`` asks no more) — a sandboxed solution's process cannot open it
    (``places.lock_file``), but an unsandboxed one's can (no Landlock, ``FPA_SANDBOX=0``)."""
    idle_since = None
    with places.lock_file(store / f".{key}.lock") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                now = time.monotonic()
                if building is not None:
                    idle_since = None if building() else (idle_since or now)
                if now >= deadline or (idle_since is not None and now - idle_since >= _NO_BUILD_S):
                    yield False
                    return
                time.sleep(0.2)
        try:
            yield True
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build(arguments: dict, arch: str, store: pathlib.Path, key: str, deadline: float) -> dict:
    """Build in a folder of its own, by a process of fpa's (``extension_build``), then rename it to the key's folder;
    a failure in the sources is kept beside it (``_keep_failure``)."""
    from .children import ChildProcess

    folder = store / key
    for stale in stale_builds(store):
        places.remove_folder(stale)
    work = pathlib.Path(tempfile.mkdtemp(prefix=f".building-{key}-", dir=store))
    try:
        build, tmp, result = work / "build", work / "tmp", work / "result.json"
        build.mkdir()
        tmp.mkdir()
        job = {"arguments": arguments, "build_directory": str(build), "result": str(result)}
        (work / "job.json").write_text(json.dumps(job))
        # "" is torch's unset: its default, for a build of C++ alone, which has no architectures
        builder = ChildProcess("extension_build", [str(work / "job.json")], work, "builder",
                               env={"TMPDIR": str(tmp), "TORCH_CUDA_ARCH_LIST": arch})  # fmt: skip
        try:
            builder.wait_ended(max(0.0, deadline - time.monotonic()))
            if not builder.has_ended():
                return {"own": "the store's build did not end in time"}
        finally:
            builder.close()
        said = _said(result)
        if said.get("built") is True and (build / f"{arguments['name']}.so").is_file():
            with contextlib.suppress(OSError):  # another host's rename came first: its build is the same
                build.rename(folder)
            if (folder / f"{arguments['name']}.so").is_file():
                return {"folder": str(folder), "built": True}
            return {"own": f"the store's folder {folder} is there without the library"}
        if isinstance(said.get("failed"), str) and _failed_in_sources(said["failed"], arguments):
            # said as from the build's folder ("main.cpp:3:5: error:"): the store's folder is gone once it is kept
            return _keep_failure(said["failed"].replace(f"{build}{os.sep}", ""), store, key)
        # anything else is the solution's own build to do, which says why in its own words: a file only the solution
        # may read (which compilers word in many ways: "file not found", "cannot find -lfoo"), a compiler killed
        why = said.get("failed") or said.get("refused") or f"ended without a word: {builder.output().stderr}"
        return {"own": f"the store's build failed: {str(why)[-300:]}"}
    finally:
        places.remove_folder(work)


def _failed_in_sources(message: str, arguments: dict) -> bool:
    """Whether torch's message for a failed build in the store (``extension_build``: "Error building extension
    'name': " and the build's output) is an error in the sources, which the solution's own build would meet as it is:
    a compiler's error at a line, and nothing that says a file could not be had or the build was stopped by the
    machine (``_MAY_GO_OTHERWISE``), from sources that read no file silently, nor their own name, nor the clock
    (``_NOT_THE_KEYS``), include only ``<…>`` (``_READS_A_FILE``) and are given no include folder or file
    (``extra_include_paths``, ``_INCLUDE_FLAG``). Everything else such a build reads is the toolchain's and the key's,
    so its failure is the key's, and is kept. (A miss here costs only the solution that wrote it: its own sources
    fail where its own build in its own folder would not; no other key's answer changes.)"""
    texts: list[str] = []
    for name in ("cpp_sources", "cuda_sources"):
        texts += _strings(arguments.get(name))
    functions = arguments.get("functions")  # torch writes their names and docstrings into main.cpp as they are
    texts += [*functions, *functions.values()] if isinstance(functions, dict) else _strings(functions)
    flags = [flag for name in ("extra_cflags", "extra_cuda_cflags", "extra_ldflags") for flag in _strings(
        arguments.get(name))]  # fmt: skip
    spliced = re.sub(r"\\\r?\n", "", "\n".join(texts + flags))  # "__has_\<newline>include" is __has_include
    return (
        bool(_ERROR_AT_A_LINE.search(message))
        and not _MAY_GO_OTHERWISE.search(message)
        and not any(words in spliced for words in _NOT_THE_KEYS)
        and not _READS_A_FILE.search(spliced)
        and not arguments.get("extra_include_paths")
        and not any(_INCLUDE_FLAG.search(flag) for flag in flags)
    )


def _strings(value) -> list[str]:
    """A ``load_inline`` argument's texts: a text alone, or a list of them (``extension_checks`` let nothing else
    through)."""
    if isinstance(value, str):
        return [value]
    return [item for item in value or () if isinstance(item, str)]


def _keep_failure(message: str, store: pathlib.Path, key: str) -> dict:
    """Keep a failure in the sources as the key's (``<key>.failed`` beside its folder, written whole by a rename) and
    answer it: the first and last characters of torch's message (``_MESSAGE_HEAD``, ``_MESSAGE_TAIL``)."""
    if len(message) > _MESSAGE_HEAD + _MESSAGE_TAIL:
        left_out = len(message) - _MESSAGE_HEAD - _MESSAGE_TAIL
        middle = f"\n… ({left_out} characters of the build's output left out) …\n"
        message = message[:_MESSAGE_HEAD] + middle + message[-_MESSAGE_TAIL:]
    written = store / f".failed-{key}-{os.getpid()}"
    try:
        written.write_text(json.dumps({"failed": message}))
        os.replace(written, store / f"{key}.failed")
    except OSError:  # not kept: the next request compiles again
        written.unlink(missing_ok=True)
    return {"failed": message}


def _said(result: pathlib.Path) -> dict:
    """What the builder wrote (``extension_build``), or {}."""
    with contextlib.suppress(OSError, ValueError):
        said = json.loads(result.read_text())
        if isinstance(said, dict):
            return said
    return {}


def _building(store: pathlib.Path, key: str) -> bool:
    """Whether a build of ``key`` is under way in ``store`` (its folder, ``_build``'s, which no solution may make)."""
    return any(store.glob(f".building-{key}-*"))


def stale_builds(store: pathlib.Path) -> list[pathlib.Path]:
    """The folders of builds whose worker was killed mid-build: older than any build could take, by their status-change
    time (not their modification time, which any process may set back: ``utime``)."""
    now, stale = time.time(), []
    for folder in store.glob(".building-*"):
        with contextlib.suppress(OSError):
            if now - folder.lstat().st_ctime > _STALE_S:
                stale.append(folder)
    return stale
