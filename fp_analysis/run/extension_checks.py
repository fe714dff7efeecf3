"""What of a solution's ``load_inline`` call fpa's store of builds (``extension_store``) builds: the request its
process sends (``extension_requests``) checked by the worker, which trusts none of it. A request is plain data (text,
integers, True, False, None, lists and dicts of them), asks for what ``load_inline`` takes in the forms the store
builds, with flags no shell or ninja reads as syntax and that run no program but the toolchain's, in the worker's own
build environment; anything else is answered ``own`` with why (``not_shared``), and the solution builds it itself,
as without the store.
"""

from __future__ import annotations

import os
import re

from .hardening import SANDBOX_ENV

__all__ = ["BUILD_ENVIRONMENT", "DEFAULTS", "STORE_ENV", "not_shared"]

# Set to 0, the store builds nothing: every solution builds its extensions in its own folder (``places``), as before it.
STORE_ENV = "FPA_EXTENSION_STORE"
# The variables of the build's environment a solution may have changed before its call (torch's build reads them):
# where one differs from the worker's, the solution builds for itself, as it asked.
BUILD_ENVIRONMENT = (
    "CC", "CXX", "CUDAHOSTCXX", "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "NVCC_APPEND_FLAGS",
    "NVCC_PREPEND_FLAGS", "NVCC_CCBIN", "PYTORCH_NVCC", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH",
    "LIBRARY_PATH", "PATH", "TORCH_DONT_CHECK_COMPILER_ABI", "CUDA_INC_PATH", "CUDNN_HOME", "CUDNN_PATH",
    "CUDNN_INCLUDE_DIR", "LD_RUN_PATH", "GCC_EXEC_PREFIX", "COMPILER_PATH", "SOURCE_DATE_EPOCH",
)  # fmt: skip

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
# A flag or an include path, each of its words (torch joins them with spaces into build.ninja, whose commands a shell
# runs): nothing the shell or ninja reads as syntax ($, quotes, ;, |, &, <, >, parentheses, backslashes, new lines,
# globs), and none that runs or loads a program other than the toolchain's (a wrapper, a plugin, a specs file, another
# compiler), reads options from a file (@file) or builds for the machine it runs on (native: the key does not name it)
_FLAG = re.compile(r"[A-Za-z0-9_=.,:+/%-]{1,512}")
_REFUSED_FLAG = re.compile(r"wrapper|plugin|specs|^-B|ccbin|compiler-bindir|native")
_ARCH_LIST = re.compile(r"[A-Za-z0-9.;+ ]{0,256}")
# load_inline's parameters a shared build takes, by kind
_SOURCES, _FLAGS = ("cpp_sources", "cuda_sources"), ("extra_cflags", "extra_cuda_cflags", "extra_ldflags",
                                                     "extra_include_paths")  # fmt: skip
_SWITCHES = ("with_cuda", "with_pytorch_error_handling", "keep_intermediates", "no_implicit_headers")
# and those whose default alone it takes (a folder of the solution's, another platform, a library not imported as a
# module, torch's precompiled header, which it writes into torch's own folder)
DEFAULTS = {"build_directory": None, "sycl_sources": None, "extra_sycl_cflags": None, "with_sycl": None,
             "is_python_module": True, "use_pch": False}  # fmt: skip


def not_shared(request) -> str | None:
    """Why ``request`` is not built in the store (None: it is): what it asks must be what ``load_inline`` takes in
    the forms the store builds, in the worker's environment."""
    if not (_plain(request) and isinstance(request, dict) and isinstance(request.get("arguments"), dict)):
        return "a request the store does not read (only text, numbers, True, False, None, lists and dicts)"
    if os.environ.get(STORE_ENV) == "0":
        return f"{STORE_ENV}=0: every solution builds in its own folder"
    if os.environ.get(SANDBOX_ENV) == "0":
        return "the solution's process runs without its sandbox (FPA_SANDBOX=0): it could write the store"
    arguments = request["arguments"]
    for name, value in arguments.items():
        if name in DEFAULTS and value != DEFAULTS[name]:
            return f"load_inline's {name}={_shown(value)}, which only the solution's own build takes"
        if name not in (*DEFAULTS, "name", "functions", *_SOURCES, *_FLAGS, *_SWITCHES):
            return f"load_inline's argument {_shown(name)}, which the store does not know"
    if not (isinstance(arguments.get("name"), str) and _NAME.fullmatch(arguments["name"])):
        return "a module name that is not an identifier"
    if not all(_texts(arguments.get(name), allow_none=name != "cpp_sources") for name in _SOURCES):
        return "sources that are not text"
    for name in _FLAGS:
        flags = arguments.get(name)
        if not _texts(flags) or isinstance(flags, str):
            return f"{name} that is not a list of text"
        words = [word for flag in flags or () for word in flag.split(" ") if word]
        if not all(_FLAG.fullmatch(word) for word in words):
            return f"{name} with characters the build's shell would read (only letters, digits and _=.,:+/%-)"
        refused = next((word for word in words if _REFUSED_FLAG.search(word)), None)
        if refused:
            return f"{name} with {_shown(refused)}, which only the solution's own build takes"
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
