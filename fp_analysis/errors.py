"""The one exception hierarchy of fp_analysis, and the exit status each kind of error gives a command.

Every error raised at a public boundary is an ``FpaError``; each also derives from the builtin that
PyTorch (or Python) would raise for the same mistake, so callers that catch ``ValueError`` /
``RuntimeError`` / ``TypeError`` keep working. Each class carries the ``ExitCode`` an ``fpa`` command
ends with when it stops on that error, so the mapping lives here and nowhere else.
"""

from __future__ import annotations

from enum import Enum, IntEnum

__all__ = [
    "AnalysisMemoryError",
    "DtypeError",
    "ExitCode",
    "Fate",
    "FpaError",
    "InternalError",
    "OutOfScopeError",
    "ParameterError",
    "ShapeError",
    "Side",
    "UserCodeError",
    "enum_member",
    "install_hint",
]


class ExitCode(IntEnum):
    """What an ``fpa`` command's exit status means; the same for every command."""

    OK = 0
    """Explained by arithmetic (or equal); for the other commands: done, nothing wrong found."""
    NOT_EXPLAINED = 1
    """A difference that arithmetic does not explain (explain), a failing example found (fuzz)."""
    USAGE = 2
    """Bad options, missing files, a Model outside what the tool can model: nothing was judged."""
    USER_CODE = 3
    """The user's code failed: it raised, exited, was killed by a signal, timed out or returned the wrong thing."""
    INTERNAL = 4
    """A bug of fp_analysis: one line is printed and the full traceback written to a file."""
    INTERRUPTED = 130
    """Stopped by Ctrl-C, SIGTERM or SIGHUP (128 + SIGINT, as shells report it); the worker's processes ended too."""


class Side(str, Enum):
    """Which of the user's two files a piece of code belongs to."""

    PROBLEM = "problem"
    """The KernelBench problem file: ``Model``, ``get_inputs``, ``get_init_inputs`` (the reference)."""
    SOLUTION = "solution"
    """The solution file: ``ModelNew`` (the candidate)."""


class Fate(str, Enum):
    """How a call into the user's code ended, when it did not return what it should."""

    RAISED = "raised"
    """It raised an exception (KeyboardInterrupt included)."""
    EXITED = "exited"
    """It ended its process: ``sys.exit`` or ``os._exit``."""
    KILLED = "killed"
    """Its process was killed by a signal (a segfault, an abort, the kernel's OOM killer...)."""
    TIMED_OUT = "timed_out"
    """It did not return within the timeout, and its process was killed."""
    BAD_OUTPUT = "bad_output"
    """It returned something of the wrong type, dtype, shape or device."""
    MALFORMED_REPLY = "malformed_reply"
    """Its process sent fpa what the protocol does not allow: junk, a reply out of turn or too large, a forged
    handle (``fp_analysis.run.wire``); the process is ended, since nothing it sends after that can be trusted."""
    FORKED = "forked"
    """It forked the process it runs in, so that a copy of it could answer in its place."""
    MODIFIED_FILES = "modified_files"
    """It changed files the job was given (the problem, the solution, the sources beside them) while it ran."""
    CLOSED_CHANNEL = "closed_channel"
    """It closed the descriptors fpa talks to its process through, and the process could no longer answer."""


class FpaError(Exception):
    """Base class of every error fp_analysis raises on purpose; by default a usage error (exit 2)."""

    exit_code = ExitCode.USAGE


class ParameterError(FpaError, ValueError):
    """A parameter has a value outside what is allowed; the message names both."""


class ShapeError(FpaError, RuntimeError):
    """Tensors or a configuration have shapes that do not fit together (PyTorch raises RuntimeError)."""


class DtypeError(FpaError, TypeError):
    """An array or tensor has a dtype (or type) the function does not accept."""


class OutOfScopeError(FpaError, ValueError):
    """The Model is beyond what fp_analysis can model (no linear op, random draws, a path that depends on the
    data, an op that cannot run in fp64...): exit 2, never a verdict about a model that was not evaluated."""


class AnalysisMemoryError(OutOfScopeError):
    """The analysis's own fp64 copies of a Model do not fit the device's memory at this size (exit 2, as any Model
    out of scope): not the user's failure; a smaller instance of the problem may be analysed instead."""


class UserCodeError(FpaError, RuntimeError):
    """The user's code (a problem or solution file) failed: a finding about that code, not an error of ours.

    ``where`` names the call ("ModelNew.forward", "importing solution.py"); ``details`` holds what else is
    known (exit status, the user's traceback, the trial or example being run, a replay command, and under
    ``worker`` the time spent and the output captured).
    """

    exit_code = ExitCode.USER_CODE

    def __init__(self, message: str, *, side: Side | str, where: str, fate: Fate | str, details: dict | None = None):
        super().__init__(message)
        self.side, self.fate = Side(side), Fate(fate)
        self.where = where
        self.details = dict(details or {})

    def to_dict(self) -> dict:
        """The record ``--json`` prints under ``error`` (and that a worker hands back): message included. The fixed
        fields come last, so that no detail can stand in for them."""
        return {
            **self.details,
            "message": str(self),
            "side": self.side.value,
            "where": self.where,
            "fate": self.fate.value,
        }

    @classmethod
    def from_dict(cls, record: dict) -> UserCodeError:
        """The inverse of ``to_dict``."""
        fields = {k: v for k, v in record.items() if k not in ("message", "side", "where", "fate")}
        return cls(record["message"], side=record["side"], where=record["where"], fate=record["fate"], details=fields)


class InternalError(FpaError, RuntimeError):
    """Something failed inside fp_analysis itself (exit 4); ``traceback`` holds the full text where known."""

    exit_code = ExitCode.INTERNAL

    def __init__(self, message: str, traceback: str = ""):
        super().__init__(message)
        self.traceback = traceback


def enum_member(enum: type[Enum], value, name: str):
    """``enum(value)``, or a ParameterError that names ``name`` and lists the allowed values."""
    try:
        return enum(value)
    except ValueError:
        allowed = ", ".join(repr(m.value) for m in enum)
        raise ParameterError(f"Got {name}={value!r}, but the only valid values are {allowed}.") from None


def install_hint(extra: str) -> str:
    """The command that installs the optional dependencies ``extra`` names (pyproject's optional-dependencies) into
    the environment fp_analysis runs in (``python -m pip`` of this interpreter), in the form this install takes:
    ``-e '/path/to/checkout[extra]'`` for fp_analysis run from a checkout (a pyproject.toml beside the package: the
    name alone would fetch another copy), else ``'fp_analysis[extra]'``."""
    import pathlib
    import sys

    pip = f"{sys.executable} -m pip install"  # this interpreter's pip: a bare pip may be another environment's
    checkout = pathlib.Path(__file__).resolve().parents[1]
    if (checkout / "pyproject.toml").is_file():
        return f"{pip} -e '{checkout}[{extra}]'"
    return f"{pip} 'fp_analysis[{extra}]'"
