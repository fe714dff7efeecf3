"""The process that builds a solution's ``load_inline`` extension for fpa's store (``extension_store``): torch's own
``load_inline`` on the arguments the solution's process sent, into a folder of fpa's, and nothing of the solution's
run — the library is not imported here (its static initialisers are the solution's code).

``python -m fp_analysis.run.extension_build`` reads {"arguments", "build_directory", "readable"} as JSON on stdin and
writes one JSON line on stdout: {"built": true}, {"failed": torch's message, "denied": whether the compiler was
refused a file}, or {"refused": why it could not build as the store needs}. Before the compiler starts, the process
confines itself (``hardening``): not dumpable, no capability, no network, no mode changes, and a Landlock sandbox
that lets it write only its build folder and its temporary one and read only the toolchain's places (``readable``,
which the store computes) — so the binary depends on nothing but the arguments and the toolchain, which is what the
store keys it by: a source that names a file a solution could have written (``#include "/tmp/…"``, an assembler's
``.incbin``) fails to build here, and the solution builds it in its own folder instead.
"""

from __future__ import annotations

import json
import os
import sys

from . import hardening

__all__ = ["main"]


def main() -> None:
    job = json.loads(sys.stdin.read())
    hardening.not_dumpable()
    hardening.drop_privileges()
    import torch.utils.cpp_extension as cpp  # before the sandbox: torch's own files are read as Python imports them

    if not callable(getattr(cpp, "_import_module_from_library", None)):
        _say({"refused": "this torch builds without a separable import of the library"})
        return
    # the build's last step imports the library it made; here it must not (the solution's code), so that step is void
    cpp._import_module_from_library = lambda *args, **kwargs: None
    writable = [job["build_directory"], os.environ.get("TMPDIR", "")]
    if hardening.sandbox([folder for folder in writable if folder], job["readable"]) is None:
        _say({"refused": "the kernel has no Landlock: a build here could read files a solution wrote"})
        return
    hardening.no_mode_changes()
    hardening.no_internet_sockets()
    try:
        cpp.load_inline(**job["arguments"], build_directory=job["build_directory"])
    except RuntimeError as error:  # torch's words for a failed build: "Error building extension 'name': output"
        text = str(error)
        _say({"failed": text, "denied": any(words in text for words in ("Permission denied", "not permitted"))})
        return
    except Exception as error:  # arguments torch refuses: the solution's own call says so in its own process
        _say({"refused": f"{type(error).__name__}: {error}"})
        return
    _say({"built": True})


def _say(result: dict) -> None:
    sys.stdout.write(json.dumps(result) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
