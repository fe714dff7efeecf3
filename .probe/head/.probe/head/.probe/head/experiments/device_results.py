"""Where the device scripts put what they measured: OUT/<name>_<gpu>.json, with what ran it (GPU, torch, cuDNN,
the commit the device copy was made from, the date)."""

from __future__ import annotations

import json
import pathlib
import subprocess
import time

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
