"""``fpa``: the command-line face of fp_analysis. It parses, calls the library and renders; nothing else.

Every command can print its result as data (``--json``); report and explain runs are appended to the
results store (``fp_analysis.store``) unless ``--no-store``. Errors end every command the same way
(``fp_analysis.errors.ExitCode``): one line on stderr, and with ``--json`` a JSON ``error`` record on
stdout, so a script always gets JSON it can parse.

This module holds the typer app, the way every command ends (``_Group``: the exit status and its message) and the
list of commands; each command is a module of its own (``report``, ``explain``...), registered here in the order
``fpa --help`` lists them.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import inspect
import os
import sys
import traceback

import typer
from rich.markup import escape
from typer.core import TyperGroup

from .. import records
from ..errors import ExitCode, FpaError, UserCodeError
from ..run.interrupts import kept_signal_handlers
from ..run.places import kernels_placed
from . import bench, cache, explain, fuzz, orders, report, tolerance, triage
from .console import err, printable, shown
from .worker import print_worker

_EXIT_CODES = (
    "Exit status (every command): 0 explained by arithmetic, or equal, or done with nothing wrong found; "
    "1 a difference arithmetic does not explain (explain) or a failing example (fuzz); 2 usage error (bad "
    "options, missing files, a Model out of scope); 3 the user's code failed (it raised, exited, was killed, "
    "timed out or returned what is not a tensor; another shape or dtype is a wrong result: 1); 4 internal error "
    "of fpa (one line; the traceback is written to a file it names); 130 stopped by Ctrl-C, SIGTERM or SIGHUP "
    "(the job's processes ended too)."
)

# What ``fpa --help`` says first: what the tool is for, for its user.
_ABOUT = (
    "Why a GPU kernel and its reference disagree, and by how much they may: the error of each side against fp64, "
    "the arithmetic that explains it (accumulation order, TF32, bf16, an approximation...) or the bug that does "
    "not, and the tolerance a check needs. Start with 'fpa explain --problem REF.py --solution NEW.py'."
)


def _interrupted(argv: list[str]) -> str:
    """What an interrupt leaves: nothing unfinished was judged; a triage keeps the pairs it had stored."""
    stored = argv[:1] == ["triage"] and "--no-store" not in argv
    kept = " (the pairs already stored are kept: run the same triage again to go on)" if stored else ""
    return f"interrupted; what had not finished was not judged{kept}"


# The exceptions of the click typer runs on (typer >= 0.20 carries its own copy of click), found from typer's own.
_ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


class _Group(TyperGroup):
    """Runs a command and turns whatever stops it into the documented exit status and message (``ExitCode``)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        argv = list(sys.argv[1:] if args is None else args)
        as_json = "--json" in argv
        # called in a process that goes on (a test): its handlers and variables are left as they were; every command's
        # kernels, and what ``fpa cache`` lists, in the cache home it was given
        with kept_signal_handlers(), kernels_placed():
            code = self._run(argv, prog_name, complete_var, as_json, **extra)
        if standalone_mode:
            sys.exit(code)
        return code

    def _run(self, argv, prog_name, complete_var, as_json: bool, **extra) -> int:
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
            if code == ExitCode.INTERRUPTED:  # typer turns Ctrl-C (and our SIGTERM) into this code
                code = _error_exit(ExitCode.INTERRUPTED, _interrupted(argv), as_json)
        except _ClickException as error:  # the command line itself: unknown option, bad value...
            if not error.format_message().strip():  # no command given: the help, already printed, says it all
                return int(ExitCode.USAGE)
            code = _error_exit(ExitCode.USAGE, error.format_message(), as_json)
            context = getattr(error, "ctx", None)
            if context is not None:  # said as every other error is, then where the command's options are listed
                err.print(f"  see '{context.command_path} --help'", highlight=False, soft_wrap=True)
        except (typer.Abort, KeyboardInterrupt):
            code = _error_exit(ExitCode.INTERRUPTED, _interrupted(argv), as_json)
        except UserCodeError as error:
            _print_user_code_error(error, as_json)
            code = ExitCode.USER_CODE
        except FpaError as error:
            code = _error_exit(error.exit_code, str(error), as_json, traceback_text=getattr(error, "traceback", ""))
        except Exception as error:  # a bug of ours: one line for the user, the traceback kept in a file
            code = _error_exit(
                ExitCode.INTERNAL, f"{type(error).__name__}: {error}", as_json, traceback_text=traceback.format_exc()
            )
        return int(code or 0)


app = typer.Typer(
    cls=_Group,
    add_completion=False,
    no_args_is_help=True,
    help=_ABOUT,
    epilog=_EXIT_CODES,
    pretty_exceptions_enable=False,
)

# The commands, in the order ``fpa --help`` lists them.
for _command in (
    report.report,
    explain.explain,
    tolerance.tolerance,
    orders.orders,
    triage.triage,
    fuzz.fuzz,
    bench.bench,
    cache.cache,
):
    # each paragraph of the docstring one line, which the help then wraps to the terminal (a docstring's own line
    # breaks would show as they are, mid-sentence)
    _paragraphs = inspect.cleandoc(_command.__doc__ or "").split("\n\n")
    app.command(help="\n\n".join(" ".join(paragraph.split()) for paragraph in _paragraphs))(_command)


def _error_exit(code: ExitCode, message: str, as_json: bool, traceback_text: str = "") -> int:
    """Print one error line (and the JSON record with --json); keep a traceback in a file for internal errors."""
    record = {"exit_code": int(code), "kind": code.name.lower(), "message": message}
    if code is ExitCode.INTERNAL:
        where = _keep_traceback(traceback_text or message)
        record["traceback_file"] = where
        message = f"{message} (internal error of fpa; full traceback in {where})"
    label = "internal error" if code is ExitCode.INTERNAL else "error"
    err.print(f"[bold red]{label}:[/] {shown(message)}", highlight=False, soft_wrap=True)
    if as_json:
        with contextlib.suppress(OSError):  # stdout itself may be what failed (a full disk, a closed pipe)
            print(records.dumps({"error": record}), flush=True)
    return code


def _keep_traceback(text: str) -> str:
    from ..run.places import cache_dir

    try:
        folder = cache_dir("errors")
        stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        path = folder / f"fpa-{stamp}-{os.getpid()}.txt"
        path.write_text(text)
        return str(path)
    except OSError as error:
        return f"(not written: {error})"


def _print_user_code_error(error: UserCodeError, as_json: bool) -> None:
    details = dict(error.details)
    worker = details.pop("worker", None)
    if as_json:
        record = {**error.to_dict(), "exit_code": int(ExitCode.USER_CODE), "kind": ExitCode.USER_CODE.name.lower()}
        record.pop("worker", None)
        print(records.dumps({"error": record, "worker": worker or {}}))
    at = f" (at {details['at']})" if details.get("at") else ""
    where = f" [{details['detail']}]" if details.get("detail") else ""
    err.print(
        f"[bold red]error:[/] the {error.side.value}'s code failed: {escape(printable(str(error) + at + where))}",
        highlight=False,
        soft_wrap=True,
    )
    if details.get("replay"):
        err.print(f"  reproduce: {shown(details['replay'])}", soft_wrap=True, highlight=False)
    if worker:
        print_worker(worker, err)


def main() -> None:
    """The command line, which the ``fpa`` script and ``python -m fp_analysis`` run (``fp_analysis.cli.entry``)."""
    app()
