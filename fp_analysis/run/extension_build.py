"""The process that builds a solution's ``load_inline`` extension for fpa's store (``extension_store``): torch's own
``load_inline`` on the arguments the solution's process sent, into a folder of fpa's, and nothing of the solution's
run — the library is not imported here (its static initialisers are the solution's code).

Started from the fork server (``children.ChildProcess``: torch is imported already) as ``extension_build JOB``: it
reads {"arguments", "build_directory", "result"} from the file JOB and writes to the file ``result``
{"built": true}, {"failed": torch's message}, or {"refused": why it could not build as the store needs}. Before the
compiler starts, the process confines itself (``hardening``): not dumpable, no capability, no network, no mode
changes, and a Landlock sandbox that lets it write only its job's folder and read only the toolchain's places
(``readable``) — so the binary depends on nothing but the arguments and the toolchain,
which is what the store keys it by: a source that names a file a solution could have written (``#include
"/tmp/…"``, an assembler's ``.incbin``) fails to build here, and the solution builds it in its own folder instead.
"""

from __future__ import annotations

import json
import os
import pathlib

from . import hardening
from .childsetup import child_setup

__all__ = ["main", "readable"]

# The system's folders of the toolchain (the compilers, their headers and libraries, the loader's configuration),
# and the files of /dev a compiler opens. Not /usr/local or /opt whole (a sample may lie there, and what its sources
# include from there is not in the store's key): a compiler or CUDA installed there is named by its own prefix.
_SYSTEM = ("/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec", "/usr/include",
           "/usr/share", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc", "/proc", "/sys", "/dev/null",
           "/dev/zero", "/dev/urandom", "/dev/random")  # fmt: skip
# Folders that hold more than a toolchain, never readable whole (a prefix above names them only for a Python or a
# compiler installed there)
_TOO_WIDE = frozenset({"/", "/usr", "/usr/local", "/opt", "/home", "/root", "/tmp", "/var", "/srv", "/mnt"})


def main(job_file: str) -> None:
    child_setup()
    job = json.loads(pathlib.Path(job_file).read_text())
    said = _built(job)
    pathlib.Path(job["result"]).write_text(json.dumps(said))


def readable() -> list[str]:
    """What the builder may read and run: ``_SYSTEM``; Python's installations (its prefixes and its paths: torch,
    ninja); CUDA; the prefix of each compiler the build may run (``$CXX``, ``$CC``, ``$CUDAHOSTCXX``, ``c++``,
    ``nvcc``, ``ninja``: ``/opt/gcc`` for ``/opt/gcc/bin/g++``); the folders of fpa's include paths (the triage's
    precompiled header); fp_analysis itself — and of these, never one that holds or lies in a place a solution's
    process may write (the jobs' folders in the temporary folder, the extensions' cache), so that nothing a solution
    wrote can be read into a build, and the key (arguments, architectures, toolchain) is all a build depends on."""
    import shutil
    import sys
    import sysconfig
    import tempfile

    import torch.utils.cpp_extension as cpp

    from .places import EXTENSIONS_OVERRIDE, cache_dir
    from .supervisor import JOB_FOLDER_PREFIX

    compilers = [os.environ.get(name) for name in ("CXX", "CC", "CUDAHOSTCXX")]
    compilers += [shutil.which(name) for name in ("c++", "nvcc", "ninja")]
    prefixes = [pathlib.Path(path).resolve().parents[1] for path in compilers if path and os.path.isfile(path)]
    places = [*_SYSTEM, sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
              *sysconfig.get_paths().values(), cpp.CUDA_HOME or "", str(pathlib.Path(cpp.__file__).parents[1]),
              str(pathlib.Path(__file__).resolve().parents[1]),
              *(str(prefix) for prefix in prefixes if str(prefix) not in ("/", "/usr"))]  # fmt: skip
    for variable in ("CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH"):
        places += os.environ.get(variable, "").split(os.pathsep)
    temporary = pathlib.Path(tempfile.gettempdir()).resolve()
    cache = cache_dir("extensions", EXTENSIONS_OVERRIDE).resolve()
    kept = []
    for place in places:
        if not place or not os.path.exists(place):
            continue
        resolved = pathlib.Path(place).resolve()
        if str(resolved) in _TOO_WIDE:  # a Python installed in /usr: its folders, not /usr's
            continue
        inside = [resolved, *resolved.parents]  # the folders ``place`` lies in
        in_a_job = any(folder.parent == temporary and folder.name.startswith(JOB_FOLDER_PREFIX) for folder in inside)
        holds_written = any(resolved in (written, *written.parents) for written in (temporary, cache))
        if not (in_a_job or holds_written or cache in inside):
            kept.append(str(resolved))
    return sorted(set(kept))


def _built(job: dict) -> dict:
    """The build's outcome (see the module docstring)."""
    hardening.not_dumpable()
    hardening.drop_privileges()
    import torch.utils.cpp_extension as cpp  # before the sandbox: torch's own files are read as Python imports them

    if not callable(getattr(cpp, "_import_module_from_library", None)):
        return {"refused": "this torch builds without a separable import of the library"}
    # the build's last step imports the library it made; here it must not (the solution's code), so that step is void
    cpp._import_module_from_library = lambda *args, **kwargs: None
    work = str(pathlib.Path(job["result"]).parent)
    if hardening.sandbox([work], readable()) is None:
        return {"refused": "the kernel has no Landlock: a build here could read files a solution wrote"}
    hardening.no_mode_changes()
    hardening.no_internet_sockets()
    try:
        cpp.load_inline(**job["arguments"], build_directory=job["build_directory"])
    except RuntimeError as error:  # torch's words for a failed build: "Error building extension 'name': output"
        return {"failed": str(error)}
    except Exception as error:  # arguments torch refuses: the solution's own call says so in its own process
        return {"refused": f"{type(error).__name__}: {error}"}
    return {"built": True}
