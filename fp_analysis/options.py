"""The options of the commands that run the user's files, checked once, before any work.

Each check returns the value in the form the library uses, or raises ``ParameterError`` naming the
option and what is allowed (exit 2 at the command line). ``explain`` and ``fuzz`` check here in the
parent process, so a bad option never costs a worker's start.
"""

from __future__ import annotations

import dataclasses
import math
import pathlib
from enum import Enum

from .errors import ParameterError, enum_member

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "LINEAR_FORMATS",
    "LINEAR_KINDS",
    "PRESET_KERNEL_OPS",
    "PRESET_NAMES",
    "REFERENCE_MODES",
    "SEED_MAX",
    "Device",
    "ExplainOptions",
    "PrecisionMode",
    "autocast_format",
    "check_count",
    "check_device",
    "check_file",
    "check_op",
    "check_reference_mode",
    "check_seconds",
    "check_seed",
    "check_tolerance",
    "linear_formats",
    "resolve_device",
]

# The seed ops' presets (``fp_analysis.ops.presets.PRESETS`` holds them; a test checks the two agree): the op
# names every command takes (report, tolerance, orders, fuzz, bench), each with the kernel op
# (``fpa_kernels.Op``) that implements it. Named here so that the command line can list them without torch.
PRESET_KERNEL_OPS = {"dilated_conv2d": "conv2d", "conv3d_kk1": "conv3d_kk1", "conv_gelu": "conv_gelu"}
PRESET_NAMES = tuple(PRESET_KERNEL_OPS)

# The largest seed that means a seed of its own: ``torch.manual_seed`` takes 64 bits, but torch's CPU generator
# (mt19937) keeps 32 of them, so 2^32 would draw what 0 draws (found by a bad-input hunt: same results).
SEED_MAX = 2**32 - 1


class PrecisionMode(str, Enum):
    """The precisions ``--reference-mode`` emulates on a CPU (``fp_analysis.model.interpose.precision_mode``)."""

    FP32 = "fp32"
    """The reference as given: fp32 throughout (cuDNN with TF32 off)."""
    TF32 = "tf32"
    """cuDNN's default: the convolutions' operands rounded to TF32; matrix products stay fp32 (cuBLAS's default)."""
    BF16 = "bf16"
    """Every linear op's operands in bf16 (products summed in fp32)."""
    FP16 = "fp16"
    """Every linear op's operands in fp16 (products summed in fp32)."""
    AUTOCAST_BF16 = "autocast-bf16"
    """The reference under ``torch.autocast(dtype=torch.bfloat16)``: linear ops' operands and results in bf16, the
    ops after them too until one of autocast's fp32 ops (``fp_analysis.model.autocast``)."""
    AUTOCAST_FP16 = "autocast-fp16"
    """The same under ``torch.autocast(dtype=torch.float16)``."""


REFERENCE_MODES = tuple(mode.value for mode in PrecisionMode)
# The op kinds a reference mode names a precision for, and the precisions each may run in.
LINEAR_KINDS = ("conv", "matmul")
LINEAR_FORMATS = ("fp32", "tf32", "bf16", "fp16")
_NAMED_MODES = {"fp32": {}, "tf32": {"conv": "tf32"}, "bf16": {"conv": "bf16", "matmul": "bf16"},
                "fp16": {"conv": "fp16", "matmul": "fp16"}, "autocast-bf16": {"conv": "bf16", "matmul": "bf16"},
                "autocast-fp16": {"conv": "fp16", "matmul": "fp16"}}  # fmt: skip


class Device(str, Enum):
    """Where the models run."""

    AUTO = "auto"
    """The GPU when torch sees one, else the CPU."""
    CPU = "cpu"
    """The CPU: the reference's precision modes are emulated."""
    CUDA = "cuda"
    """The GPU: the real kernels, and cuDNN's TF32 switched on and off."""


def check_device(value) -> Device:
    """``value`` as a ``Device``."""
    return enum_member(Device, value, "device")


def resolve_device(value):
    """The ``torch.device`` that ``value`` ("auto", "cpu", "cuda") means on this machine; ParameterError for
    "cuda" where torch sees no GPU."""
    import torch

    device = check_device(value)
    if device is Device.AUTO:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device is Device.CUDA and not torch.cuda.is_available():
        raise ParameterError("Got device='cuda', but torch sees no CUDA device.")
    return torch.device(device.value)


def check_file(name: str, path) -> str:
    """The absolute path of the existing file ``path`` (option ``name``)."""
    resolved = pathlib.Path(str(path)).expanduser()
    if not resolved.is_file():
        what = "a folder" if resolved.is_dir() else "not found"
        raise ParameterError(f"Got {name}={str(path)!r}, but that is {what}; give the path of a Python file.")
    return str(resolved.resolve())


def check_count(name: str, value, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` as an int in [minimum, maximum] (bools refused)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum or (maximum and value > maximum):
        upto = f" and <= {maximum}" if maximum else ""
        raise ParameterError(f"Got {name}={value!r}, but {name} must be an integer >= {minimum}{upto}.")
    return int(value)


# The most KernelBench trials taken (KernelBench runs 5): each trial runs both models once, and their seeds are
# drawn before the first, so 10^9 (a typo) would spend minutes before any timeout could apply.
TRIALS_MAX = 10_000


def check_seed(name: str, value) -> int:
    """``value`` as a seed torch and numpy both take, each seed its own draws: an int in [0, 2^32 − 1]."""
    return check_count(name, value, minimum=0, maximum=SEED_MAX)


# The longest timeout taken: a week. Far longer overflows the clocks that wait for it (threading's
# TIMEOUT_MAX is ~9.2e9 s), and no call into the user's code should need more.
SECONDS_MAX = 7 * 24 * 3600.0


def check_seconds(name: str, value) -> float:
    """``value`` as a number of seconds in (0, SECONDS_MAX] (a week)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (0 < value <= SECONDS_MAX):
        raise ParameterError(
            f"Got {name}={value!r}, but {name} must be a number of seconds > 0 and at most {SECONDS_MAX:g} (a week)."
        )
    return float(value)


def check_tolerance(name: str, value) -> float:
    """``value`` as a finite number >= 0 (atol, rtol)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value) and value >= 0):
        raise ParameterError(f"Got {name}={value!r}, but {name} must be a finite number >= 0.")
    return float(value)


def check_op(op) -> str:
    """``op`` if it is one of ``PRESET_NAMES``, the op names every command takes."""
    if op in PRESET_KERNEL_OPS:
        return op
    allowed = ", ".join(repr(name) for name in PRESET_NAMES)
    kernels_name = [preset for preset, kernel_op in PRESET_KERNEL_OPS.items() if kernel_op == op]
    hint = f" ({op!r} is what the kernels call {kernels_name[0]!r})" if kernels_name else ""
    raise ParameterError(f"Got op={op!r}, but the only valid ops are {allowed}.{hint}")


def linear_formats(mode: str) -> dict[str, str]:
    """{op kind: format} of a reference mode: one of ``REFERENCE_MODES`` or, naming each kind,
    "conv=FMT,matmul=FMT" (a kind left out is fp32): "conv=tf32" is cuDNN's default, "conv=tf32,matmul=tf32" what
    ``torch.backends.cuda.matmul.allow_tf32 = True`` (or ``torch.set_float32_matmul_precision('high')``) adds."""
    if mode in _NAMED_MODES:
        return {kind: _NAMED_MODES[mode].get(kind, "fp32") for kind in LINEAR_KINDS}
    formats, given = dict.fromkeys(LINEAR_KINDS, "fp32"), set()
    for part in str(mode).lower().split(","):
        kind, _, fmt = (piece.strip() for piece in part.partition("="))
        if kind not in LINEAR_KINDS or fmt not in LINEAR_FORMATS or kind in given:
            named = ", ".join(repr(m) for m in REFERENCE_MODES)
            raise ParameterError(
                f"Got reference_mode={mode!r}, but the only valid values are {named}, or each op kind's precision "
                f"as 'conv=FMT,matmul=FMT' with FMT one of {', '.join(LINEAR_FORMATS)} (e.g. 'conv=tf32,matmul=tf32'), "
                "each kind once."
            )
        formats[kind] = fmt
        given.add(kind)
    return formats


def autocast_format(mode: str) -> str | None:
    """The format a reference mode runs the Model in under ``torch.autocast`` ("bf16", "fp16"), None for the
    modes that round linear ops' operands only."""
    return mode.removeprefix("autocast-") if mode.startswith("autocast-") and mode in _NAMED_MODES else None


def check_reference_mode(mode: str) -> str:
    """``mode`` if it is one of ``REFERENCE_MODES`` or names each op kind's precision (``linear_formats``)."""
    linear_formats(mode)
    return mode


# Seconds one call into the user's code may take (``--timeout``'s default). A full-size KernelBench forward on a
# 2-core CPU takes up to 79 s (shared/facts/kernelbench_conv_families.md) and a load_inline build about a minute,
# so 300 s stops a hang without stopping real work.
DEFAULT_TIMEOUT_S = 300.0


@dataclasses.dataclass(frozen=True)
class ExplainOptions:
    """What one explanation of a problem/solution pair is asked, valid by construction.

    KernelBench's check (``trials`` seeded trials from ``seed``, ``torch.allclose`` at ``atol``/``rtol``), where the
    models run (``device``: "auto", "cpu", "cuda") and, on a CPU, which precision the reference's run emulates
    (``reference_mode``, None: as given), how many outputs the twin evidence samples (``samples``), and the seconds
    each call into the user's code may take (``timeout``). Every field is checked when the record is made — a bad
    one is a ``ParameterError`` naming the option, exit 2 — so ``fpa explain``, ``fpa triage`` and the job in the
    worker take it as it is. ``to_json``/``from_json``: how it crosses to the worker.
    """

    device: str = Device.AUTO.value
    reference_mode: str | None = None
    trials: int = 5
    seed: int = 42
    atol: float = 1e-4
    rtol: float = 1e-4
    samples: int = 4000
    timeout: float = DEFAULT_TIMEOUT_S

    def __post_init__(self):
        checked = {
            "device": check_device(self.device).value,
            "reference_mode": None if self.reference_mode is None else check_reference_mode(self.reference_mode),
            "trials": check_count("trials", self.trials, maximum=TRIALS_MAX),
            "seed": check_seed("seed", self.seed),
            "atol": check_tolerance("atol", self.atol),
            "rtol": check_tolerance("rtol", self.rtol),
            "samples": check_count("samples", self.samples),
            "timeout": check_seconds("timeout", self.timeout),
        }
        for name, value in checked.items():  # the normal form (an enum's value, a float for an int)
            object.__setattr__(self, name, value)

    def to_json(self) -> dict:
        """The options as JSON-able data (what the worker's job record holds)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> ExplainOptions:
        """The inverse of ``to_json``."""
        return cls(**data)
