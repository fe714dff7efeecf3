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

from . import places

__all__ = [
    "BUILD_ENVIRONMENT",
    "BUILD_S",
    "STORE_ENV",
    "STORE_FOLDER",
    "answer",
    "arch_list",
    "build_seconds",
    "store_folder",
]

# The store's folder inside the extensions' cache (``$FPA_EXTENSIONS_CACHE`` moves both: a cluster's shared folder).
STORE_FOLDER = "by-arguments"
# Set to 0, the store builds nothing: every solution builds its extensions in its own folder (``places``), as before it.
STORE_ENV = "FPA_EXTENSION_STORE"
# The variables of the build's environment a solution may have changed before its call (torch's build reads them):
# where one differs from the worker's, the solution builds for itself, as it asked.
BUILD_ENVIRONMENT = (
    "CC", "CXX", "CUDAHOSTCXX", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "NVCC_APPEND_FLAGS",
    "NVCC_PREPEND_FLAGS", "NVCC_CCBIN", "PYTORCH_NVCC", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
    "LIBRARY_PATH", "PATH", "TORCH_DONT_CHECK_COMPILER_ABI",
)  # fmt: skip
# Bumped when what a key covers changes: older entries are not found.
_FORMAT = 1
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
# A flag or an include path, each of its words (torch joins them with spaces into build.ninja, whose commands a shell
# runs): nothing the shell or ninja reads as syntax ($, quotes, ;, |, &, <, >, parentheses, backslashes, new lines,
# globs); what a flag may name (a plugin, a file of options) is the build's sandbox's to confine.
_FLAG = re.compile(r"[A-Za-z0-9_=.,:+/%@-]{1,512}")
_ARCH_LIST = re.compile(r"[A-Za-z0-9.;+ ]{0,256}")
# load_inline's parameters a shared build takes, each with whether a value may be given for it
_SOURCES, _FLAGS = ("cpp_sources", "cuda_sources"), ("extra_cflags", "extra_cuda_cflags", "extra_ldflags",
                                                     "extra_include_paths")  # fmt: skip
_SWITCHES = ("with_cuda", "with_pytorch_error_handling", "keep_intermediates", "no_implicit_headers")
# and those whose default alone it takes (a folder of the solution's, another platform, a library not imported as a
# module, torch's precompiled header, which it writes into torch's own folder)
_DEFAULTS = {"build_directory": None, "sycl_sources": None, "extra_sycl_cflags": None, "with_sycl": None,
             "is_python_module": True, "use_pch": False}  # fmt: skip
# The prefix of the jobs' folders in the temporary folder (``supervisor``), where solutions' processes write theirs.
_JOBS = "fpa-worker-"
# Seconds a build in the store may take at least (``build_seconds``).
BUILD_S = 600.0
# Seconds after which a folder a build left half made (its worker killed) is removed by the next build.
_STALE_S = 24 * 3600.0


def store_folder() -> pathlib.Path:
    """The store's folder (created): beside the solutions' own build folders, in the extensions' cache."""
    folder = places.cache_dir("extensions", places.EXTENSIONS_OVERRIDE) / STORE_FOLDER
    folder.mkdir(exist_ok=True)
    return folder


def answer(request, deadline: float) -> dict:
    """The worker's answer to a solution's process asking for ``load_inline(**arguments)`` (``request``: {"arguments",
    "arch_list", "environment"}, as ``extension_requests`` sends it; anything else is answered ``own``):
    {"folder": where the library is, "built": whether this call built it, "seconds"}, or {"own": why}: the solution
    builds it itself, in its own folder (also where the store's build failed: a compile error, or a file the builder
    may not read, which compilers word too many ways to tell apart). ``deadline``: ``time.monotonic()`` by which the
    call must end."""
    start = time.monotonic()
    why = _not_shared(request)
    if why:
        return {"own": why}
    arguments = {name: value for name, value in request["arguments"].items() if name not in _DEFAULTS}  # defaults
    arch = _arch(request["arch_list"], arguments)
    key = _key(arguments, arch)
    store = store_folder()
    folder = store / key
    if (folder / f"{arguments['name']}.so").is_file():
        return {"folder": str(folder), "built": False, "seconds": time.monotonic() - start}
    with _locked(store / f".{key}.lock", deadline) as held:
        if not held:
            return {"own": "another build of the same arguments did not end in time"}
        if (folder / f"{arguments['name']}.so").is_file():  # built while this call waited
            return {"folder": str(folder), "built": False, "seconds": time.monotonic() - start}
        result = _build(arguments, arch, store, folder, deadline)
    return {**result, "seconds": time.monotonic() - start}


def build_seconds(timeout: float) -> float:
    """The seconds a build in the store may take, for a job whose calls into the user's code may take ``timeout``:
    at least ``BUILD_S``. The compiler is fpa's process, not the user's code, and the user's call is not timed while
    it runs: a build under a triage's parallel builders took 65–90 s on the H200 host (16 cores, 14 builders,
    experiments/results/triage_h200.json), where the triage's --timeout was 90 s, and a slow build is no verdict on
    the solution. A source that keeps the compiler busy for ever costs a builder this long, and is then built by the
    solution itself, under --timeout."""
    return max(timeout, BUILD_S)


def _not_shared(request) -> str | None:
    """Why ``request`` is not built in the store (None: it is): what it asks must be what ``load_inline`` takes in
    the forms the store builds, in the worker's environment."""
    if not (_plain(request) and isinstance(request, dict) and isinstance(request.get("arguments"), dict)):
        return "a request the store does not read (only text, numbers, True, False, None, lists and dicts)"
    if os.environ.get(STORE_ENV) == "0":
        return f"{STORE_ENV}=0: every solution builds in its own folder"
    if os.environ.get("FPA_SANDBOX") == "0":
        return "the solution's process runs without its sandbox (FPA_SANDBOX=0): it could write the store"
    arguments = request["arguments"]
    for name, value in arguments.items():
        if name in _DEFAULTS and value != _DEFAULTS[name]:
            return f"load_inline's {name}={_shown(value)}, which only the solution's own build takes"
        if name not in (*_DEFAULTS, "name", "functions", *_SOURCES, *_FLAGS, *_SWITCHES):
            return f"load_inline's argument {_shown(name)}, which the store does not know"
    if not (isinstance(arguments.get("name"), str) and _NAME.fullmatch(arguments["name"])):
        return "a module name that is not an identifier"
    if not all(_texts(arguments.get(name), allow_none=name != "cpp_sources") for name in _SOURCES):
        return "sources that are not text"
    for name in _FLAGS:
        flags = arguments.get(name)
        if not _texts(flags) or isinstance(flags, str):
            return f"{name} that is not a list of text"
        if not all(_FLAG.fullmatch(piece) for flag in flags or () for piece in flag.split(" ") if piece):
            return f"{name} with characters the build's shell would read (only letters, digits and _=.,:+/%@-)"
        if any("native" in flag for flag in flags or ()):  # this machine's CPU or GPU, which the key does not name
            return f"{name} that build for the machine they run on (native)"
    functions = arguments.get("functions")
    if not (_texts(functions) or (isinstance(functions, dict) and all(map(_texts, functions.items())))):
        return "functions that are not names"
    if not all(isinstance(arguments.get(name, False), bool | None) for name in _SWITCHES):
        return "a switch that is not True, False or None"
    arch = request.get("arch_list")
    if not (arch is None or (isinstance(arch, str) and _ARCH_LIST.fullmatch(arch))):
        return "a TORCH_CUDA_ARCH_LIST torch does not read"
    environment = request.get("environment")
    if not isinstance(environment, dict):
        return "a request the store does not read"
    changed = sorted(name for name in BUILD_ENVIRONMENT if environment.get(name) != os.environ.get(name))
    if changed:
        return f"the solution changed the build's environment ({', '.join(changed)})"
    return None


def _plain(value, depth: int = 0) -> bool:
    """Whether ``value`` is data the store reads: text, integers, True, False, None, and lists, tuples and dicts of
    them (text keys), not nested deeper than a call's arguments are. A tensor (which a forward's reply limits let
    through) is not: comparing one raised in the worker (an adversarial hunt, 2026-12-05)."""
    if value is None or isinstance(value, bool | int | str):
        return True
    if depth >= 4:
        return False
    if isinstance(value, list | tuple):
        return all(_plain(item, depth + 1) for item in value)
    return isinstance(value, dict) and all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())


def _shown(value) -> str:
    """``value`` as a reason shows it: its repr, cut to 80 characters (a solution's arguments may be megabytes)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _texts(value, allow_none: bool = True) -> bool:
    """Whether ``value`` is text, a list or tuple of texts, or (``allow_none``) None."""
    if value is None:
        return allow_none
    return isinstance(value, str) or (isinstance(value, list | tuple) and all(isinstance(v, str) for v in value))


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
    """The store's key: a hash of the arguments (``verbose`` aside: it changes nothing built), the architectures and
    the toolchain."""
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
def _locked(path: pathlib.Path, deadline: float):
    """Hold ``path``'s lock (``flock``: builders of one machine, or of hosts sharing a folder that supports it) until
    the block ends; yields whether it was had before ``deadline``."""
    with open(path, "a") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.2)
        try:
            yield True
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build(arguments: dict, arch: str, store: pathlib.Path, folder: pathlib.Path, deadline: float) -> dict:
    """Build in a folder of its own, by a process of fpa's (``extension_build``), then rename it to ``folder``."""
    from .children import ChildProcess

    _remove_stale(store)
    work = pathlib.Path(tempfile.mkdtemp(prefix=".building-", dir=store))
    try:
        build, tmp, result = work / "build", work / "tmp", work / "result.json"
        build.mkdir()
        tmp.mkdir()
        job = {"arguments": arguments, "build_directory": str(build), "readable": _readable(), "result": str(result)}
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
        if isinstance(said.get("failed"), str):
            # its own build says why, in its own words: a compile error, or a file only the solution may read (which
            # the compiler words in many ways: an assembler's "file not found", a linker's "cannot find -lfoo")
            return {"own": "the store's build failed: " + said["failed"][-300:]}
        ended = builder.output().stderr[-300:]
        return {"own": str(said.get("refused") or f"the store's build ended without a word: {ended}")}
    finally:
        places.remove_folder(work)


def _said(result: pathlib.Path) -> dict:
    """What the builder wrote (``extension_build``), or {}."""
    with contextlib.suppress(OSError, ValueError):
        said = json.loads(result.read_text())
        if isinstance(said, dict):
            return said
    return {}


def _remove_stale(store: pathlib.Path) -> None:
    """Remove folders of builds whose worker was killed mid-build (older than any build could take)."""
    now = time.time()
    for stale in store.glob(".building-*"):
        with contextlib.suppress(OSError):
            if now - stale.stat().st_ctime > _STALE_S:  # not its mtime, which any process may set back (utime)
                places.remove_folder(stale)


def _readable() -> list[str]:
    """What the builder may read and run (``hardening.sandbox``'s ``readable``): the system's folders, Python's
    installations and packages, CUDA, and the folders of fpa's own environment's include paths (the precompiled
    header) — never a folder that holds a place a solution's process may write (the temporary folders its jobs are
    made in, the extensions' cache), so that nothing a solution wrote can be read into a build."""
    import torch.utils.cpp_extension as cpp

    places_ = ["/usr", "/opt", "/lib", "/lib32", "/lib64", "/bin", "/sbin", "/etc", "/proc", "/sys", "/dev/null",
               "/dev/zero", "/dev/urandom", "/dev/random", sys.prefix, sys.base_prefix, sys.exec_prefix,
               sys.base_exec_prefix, *sysconfig.get_paths().values(), cpp.CUDA_HOME or "",
               str(pathlib.Path(cpp.__file__).resolve().parents[3]),
               str(pathlib.Path(__file__).resolve().parents[2])]  # fmt: skip
    for variable in ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH"):
        places_ += os.environ.get(variable, "").split(os.pathsep)
    temporary, cache = pathlib.Path(tempfile.gettempdir()).resolve(), store_folder().parent.resolve()
    kept = []
    for place in places_:
        if not place or not os.path.exists(place):
            continue
        resolved = pathlib.Path(place).resolve()
        inside = [resolved, *resolved.parents]  # the folders ``place`` lies in
        in_a_job = any(folder.parent == temporary and folder.name.startswith(_JOBS) for folder in inside)
        holds_written = any(resolved in (written, *written.parents) for written in (temporary, cache))
        if not (in_a_job or holds_written or cache in inside):
            kept.append(str(resolved))
    return sorted(set(kept))
