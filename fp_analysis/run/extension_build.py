"""The process that builds a solution's ``load_inline`` extension for fpa's store (``extension_store``): torch's own
``load_inline`` on the arguments the solution's process sent, into a folder of fpa's, and nothing of the solution's
run — the library is not imported here (its static initialisers are the solution's code).

Started from the fork server (``children.ChildProcess``: torch is imported already) as ``extension_build JOB``: it
reads {"arguments", "build_directory", "readable", "result"} from the file JOB and writes to the file ``result``
{"built": true}, {"failed": torch's message}, or {"refused": why it could not build as the store needs}. Before the
compiler starts, the process confines itself (``hardening``): not dumpable, no capability, no network, no mode
changes, and a Landlock sandbox that lets it write only its job's folder and read only the toolchain's places
(``readable``, which the store computes) — so the binary depends on nothing but the arguments and the toolchain,
which is what the store keys it by: a source that names a file a solution could have written (``#include
"/tmp/…"``, an assembler's ``.incbin``) fails to build here, and the solution builds it in its own folder instead.
"""

from __future__ import annotations

import json
import pathlib

from . import hardening
from .childsetup import child_setup

__all__ = ["main"]


def main(job_file: str) -> None:
    child_setup()
    job = json.loads(pathlib.Path(job_file).read_text())
    said = _built(job)
    pathlib.Path(job["result"]).write_text(json.dumps(said))


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
    if hardening.sandbox([work], job["readable"]) is None:
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
