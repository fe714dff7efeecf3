"""The arguments several commands share: their option types (one help text each) and their checks."""

from __future__ import annotations

import os
import pathlib
from typing import Annotated

import typer

from ..errors import ParameterError
from ..options import PRESET_NAMES

Op = Annotated[str, typer.Argument(help=f"one of {', '.join(PRESET_NAMES)}")]
Device = Annotated[str, typer.Option(help="cpu or cuda; auto: cuda where torch sees a GPU, else cpu")]
AsJson = Annotated[bool, typer.Option("--json", help="print the result as JSON")]
NoStore = Annotated[bool, typer.Option("--no-store", help="do not append this run to the results store")]
Timeout = Annotated[
    float,
    typer.Option(
        help="seconds each call into the user's code (import, constructor, forward) may take; a call past it is the "
        "code's failure (timed out). fpa's own build of a load_inline extension is not counted: it has max(this, 600 s)"
    ),
]
ReferenceMode = Annotated[
    str | None,
    typer.Option(
        help="CPU only: the reference's precision: fp32, tf32 (cuDNN's default: convolutions only), bf16, fp16 "
        "(linear ops' operands), autocast-bf16, autocast-fp16 (the Model under torch.autocast), or each op kind's, "
        "as conv=tf32,matmul=tf32 (what torch's matmul.allow_tf32 adds)"
    ),
]
# KernelBench's check, as explain and triage run it
CheckSeed = Annotated[int, typer.Option("--seed", help="seed of the Model's parameters and the trials' inputs")]
CheckAtol = Annotated[
    float, typer.Option("--atol", help="the check's allclose atol (KernelBench's own eval uses 1e-2)")
]
CheckRtol = Annotated[
    float, typer.Option("--rtol", help="the check's allclose rtol (KernelBench's own eval uses 1e-2)")
]
Samples = Annotated[int, typer.Option(help="sampled outputs (CPU twins and bounds); at least 1")]


def parse_shape(text: str | None) -> tuple[int, ...] | None:
    """``--input-shape`` (``2,32,64,64`` or ``2x32x64x64``) as a tuple, or None when not given."""
    if text is None:
        return None
    try:
        return tuple(int(v) for v in text.replace("x", ",").split(","))
    except ValueError:
        raise typer.BadParameter(f"--input-shape must look like 8,32,512,512; got {text!r}") from None


def check_samples(samples: int) -> None:
    """``--samples`` must be at least 1."""
    if samples < 1:
        raise ParameterError(f"Got --samples {samples}, but --samples must be at least 1.")


def csv_target(path: str | None) -> pathlib.Path | None:
    """The CSV file to write, checked before any work: its folder must exist and be writable."""
    if path is None or path == "-":
        return None
    target = pathlib.Path(path).expanduser()
    folder = target.parent if str(target.parent) else pathlib.Path(".")
    if target.is_dir():
        raise ParameterError(f"Got --csv {path}, which is a folder; give a file path (or - for stdout).")
    if not folder.is_dir():
        raise ParameterError(f"Got --csv {path}, but the folder {folder} does not exist.")
    if not os.access(folder, os.W_OK):
        raise ParameterError(f"Got --csv {path}, but the folder {folder} is not writable.")
    return target
