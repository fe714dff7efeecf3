"""Where the device scripts put what they measured: OUT/<name>_<gpu>.json, with what ran it (GPU, torch, cuDNN,
the commit the device copy was made from, the date)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import torch

from fp_analysis.records import loads_strict


def write_results(out: str, name: str, commit: str, body: dict, **meta) -> pathlib.Path:
    """Write ``{"meta": ..., **body}`` to OUT/<name>_<gpu>.json (``meta`` adds entries) and return its path."""
    record = {
        "meta": {
            "device": torch.cuda.get_device_name(),
            "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(),
            "commit": commit,
            "date": time.strftime("%Y-%m-%d"),
            **meta,
        },
        **body,
    }
    slug = torch.cuda.get_device_name().split()[-1].lower()
    path = pathlib.Path(out) / f"{name}_{slug}.json"
    path.write_text(json.dumps(record, indent=1))
    return path


def run_checked(name: str, expected: str, check, command: list[str], *, timeout: float, env=None) -> tuple[dict, dict]:
    """Run one ``fpa … --json`` command as a user would; (its JSON, the run's record: name, what was expected,
    whether ``check(json)`` held with exit 0 or 1, exit code, wall seconds). Output that is not JSON is an
    ``error`` of kind ``unparsable`` holding the ends of stdout and stderr."""
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    seconds = time.monotonic() - start
    data = loads_strict(done.stdout)
    if data is None:  # what --json printed must parse as strict JSON, the user's build output around it or not
        data = {"error": {"kind": "unparsable", "message": done.stdout[-400:] + done.stderr[-400:]}}
    try:
        as_expected = bool(check(data)) and done.returncode in (0, 1)
    except (KeyError, TypeError, IndexError):
        as_expected = False
    record = {"run": name, "expected": expected, "as_expected": as_expected, "exit_code": done.returncode,
              "wall_seconds": round(seconds, 2)}  # fmt: skip
    return data, record


def warm_extensions(pairs, build: str, cwd: pathlib.Path) -> float:
    """Build the extensions of each pair's solution, in parallel, into the folder an explain of that pair builds them
    in: fpa gives every solution a folder of its own in its cache, named by the hash of the solution's files
    (``fp_analysis.run.places.extensions_folder``; a folder shared by solutions would let one plant a library another
    loads), so a build made anywhere else is not found and each explain would pay nvcc again. ``build``: Python code,
    run in ``cwd``, that builds them; the folder of this process's ``TORCH_EXTENSIONS_DIR`` is warmed too (the
    checks the scripts time in-process). Returns the seconds."""
    from fp_analysis.run.places import extensions_folder
    from fp_analysis.run.snapshot import Given

    folders = {os.environ.get("TORCH_EXTENSIONS_DIR")} - {None}
    for problem, solution in pairs:
        given = Given.take(problem, solution)
        folders.add(extensions_folder(given.solution.encoded(), given.solution.name))

    def one(folder: str) -> None:
        env = {**os.environ, "TORCH_EXTENSIONS_DIR": folder, "MAX_JOBS": "1"}
        done = subprocess.run([sys.executable, "-c", build], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=1200)  # fmt: skip
        if done.returncode:
            raise RuntimeError(f"building into {folder} failed:\n{done.stderr[-2000:]}")

    start = time.monotonic()
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        list(pool.map(one, sorted(folders)))
    return time.monotonic() - start
