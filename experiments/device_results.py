"""Where the device scripts put what they measured: OUT/<name>_<gpu>.json, with what ran it (GPU, torch, cuDNN,
the commit the device copy was made from, the date)."""

from __future__ import annotations

import json
import pathlib
import time

import torch


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
