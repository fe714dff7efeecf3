"""The conv problem of ``usercode_cases`` in a folder of its own, with the solutions the hostile tests give it."""

from __future__ import annotations

import pathlib
import shutil

CASES = pathlib.Path(__file__).parent / "usercode_cases"
ZEROS = """
import torch
from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        return torch.zeros_like(super().forward(x))
"""


def pair_folder(root: pathlib.Path, solutions: dict[str, str]) -> pathlib.Path:
    """A problem folder under ``root`` (the conv problem, its helper) with ``solutions`` (file name → source)."""
    folder = root / "conv"
    folder.mkdir(parents=True)
    for name in ("problem.py", "_conv.py"):
        shutil.copy(CASES / name, folder / name)
    for name, source in solutions.items():
        (folder / name).write_text(source)
    return folder
