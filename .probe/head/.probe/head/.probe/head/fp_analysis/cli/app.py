"""``fpa``: the command-line face of fp_analysis. It parses, calls the library and renders; nothing else.

Every command can print its result as data (``--json``); report and explain runs are appended to the
results store (``fp_analysis.store``) unless ``--no-store``. Errors end every command the same way
(``fp_analysis.errors.ExitCode``): one line on stderr, and with ``--json`` a JSON ``error`` record on
stdout, so a script always gets JSON it can parse.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as _dt
import os
import pathlib
import sys
import threading
import time
import traceback
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table
from typer.core import TyperGroup

from .. import records
from ..errors import ExitCode, FpaError, ParameterError, Side, UserCodeError
from ..options import (
    DEFAULT_TIMEOUT_S,
    PRESET_KERNEL_OPS,
    PRESET_NAMES,
    ExplainOptions,
    check_op,
    check_seconds,
    check_seed,
)
from ..run.interrupts import kept_signal_handlers, work_done

_EXIT_CODES = (
    "Exit status (every command): 0 explained by arithmetic, or equal, or done with nothing wrong found; "
    "1 a difference arithmetic does not explain (explain) or a failing example (fuzz); 2 usage error (bad "
    "options, missing files, a Model out of scope); 3 the user's code failed (it raised, exited, was killed, "
    "timed out or returned the wrong type, dtype or shape); 4 internal error of fpa (one line; the traceback is "
    "written to a file it names); 130 stopped by Ctrl-C, SIGTERM or SIGHUP (the job's processes ended too)."
)

# What an interrupt leaves: nothing unfinished was judged; a triage keeps the pairs it had stored.
_INTERRUPTED = "interrupted; what had not finished was not judged (a triage keeps the pairs it stored)"

# The exceptions of the click typer runs on (typer >= 0.20 carries its own copy of click), found from typer's own.
_ClickException = next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")

# A pipe or CI log is not a terminal: rich would fold tables to 80 columns, so give it room.
_out = Console(width=None if sys.stdout.isatty() else 200)
_err = Console(stderr=True, width=None if sys.stderr.isatty() else 200)


class _Group(TyperGroup):
    """Runs a command and turns whatever stops it into the documented exit status and message (``ExitCode``)."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        argv = list(sys.argv[1:] if args is None else args)
        as_json = "--json" in argv
        with kept_signal_handlers():  # called in a process that goes on (a test): its handlers are left as they were
            code = self._run(argv, prog_name, complete_var, as_json, **extra)
        if standalone_mode:
            sys.exit(code)
        return code

    def _run(self, argv, prog_name, complete_var, as_json: bool, **extra) -> int:
        try:
            code = super().main(argv, prog_name, complete_var, standalone_mode=False, **extra)
            if code == ExitCode.INTERRUPTED:  # typer turns Ctrl-C (and our SIGTERM) into this code
                code = _error_exit(ExitCode.INTERRUPTED, _INTERRUPTED, as_json)
        except _ClickException as error:  # the command line itself: unknown option, bad value...
            error.show()
            code = _error_exit(ExitCode.USAGE, error.format_message(), as_json, quiet=True)
        except (typer.Abort, KeyboardInterrupt):
            code = _error_exit(ExitCode.INTERRUPTED, _INTERRUPTED, as_json)
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
    help=__doc__.splitlines()[0],
    epilog=_EXIT_CODES,
    pretty_exceptions_enable=False,
)

Op = Annotated[str, typer.Argument(help=f"one of {', '.join(PRESET_NAMES)}")]
Device = Annotated[str, typer.Option(help="auto (GPU if torch sees one), cpu or cuda")]
AsJson = Annotated[bool, typer.Option("--json", help="print the result as JSON")]
NoStore = Annotated[bool, typer.Option("--no-store", help="do not append this run to the results store")]
Timeout = Annotated[
    float,
    typer.Option(help="seconds each call into the user's code (import, constructor, forward) may take; then exit 3"),
]
Samples = Annotated[int, typer.Option(help="sampled outputs (CPU twins and bounds); at least 1")]


def _error_exit(code: ExitCode, message: str, as_json: bool, traceback_text: str = "", quiet: bool = False) -> int:
    """Print one error line (and the JSON record with --json); keep a traceback in a file for internal errors."""
    record = {"exit_code": int(code), "kind": code.name.lower(), "message": message}
    if code is ExitCode.INTERNAL:
        where = _keep_traceback(traceback_text or message)
        record["traceback_file"] = where
        message = f"{message} (internal error of fpa; full traceback in {where})"
    if not quiet:
        label = "internal error" if code is ExitCode.INTERNAL else "error"
        _err.print(f"[bold red]{label}:[/] {_shown(message)}", highlight=False, soft_wrap=True)
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
    _err.print(
        f"[bold red]error:[/] the {error.side.value}'s code failed: {escape(_printable(str(error) + at + where))}",
        highlight=False,
        soft_wrap=True,
    )
    if details.get("replay"):
        _err.print(f"  reproduce: {_shown(details['replay'])}", soft_wrap=True, highlight=False)
    if worker:
        _print_worker(worker, _err)


_store_ready: threading.Thread | None = None


def _prepare_store(skip: bool) -> None:
    """Import and warm the results store in a thread while a job runs (``store.prepare``): the supervisor only
    waits for its worker then. A failure here is left to the write itself to report."""
    global _store_ready

    def prepare():
        try:
            from ..store import prepare

            prepare()
        except Exception:
            pass

    if not skip:
        _store_ready = threading.Thread(target=prepare, name="fpa-store-prepare", daemon=True)
        _store_ready.start()


def _store(
    command: str, rows: list[dict], flags: dict, seed: int | None, device: str, skip: bool, versions: dict | None = None
) -> None:
    if _store_ready is not None:
        _store_ready.join()
    if skip or not rows:
        return
    from ..store import append_run, run_metadata

    try:
        append_run(rows, run_metadata(command, flags, seed, device, versions))
    except (OSError, FpaError) as error:  # a full disk must not cost the user the result already printed
        _err.print(f"[yellow]warning:[/] the run was not stored: {error}")


def _shape(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(v) for v in text.replace("x", ",").split(","))
    except ValueError:
        raise typer.BadParameter(f"--input-shape must look like 8,32,512,512; got {text!r}") from None


def _check_samples(samples: int) -> None:
    if samples < 1:
        raise ParameterError(f"Got --samples {samples}, but --samples must be at least 1.")


def _csv_target(path: str | None) -> pathlib.Path | None:
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


def _write_csv(target: pathlib.Path | None, rows: list[dict]) -> None:
    try:
        stream = sys.stdout if target is None else open(target, "w", newline="")
        try:
            writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        finally:
            if stream is not sys.stdout:
                stream.close()
    except OSError as error:  # a full disk, /dev/full: the results are in the store and can be printed again
        raise ParameterError(f"Got --csv {target}, which could not be written: {error}") from None


def _fmt(value, spec: str = ".2e") -> str:
    return "—" if value is None else format(value, spec)


@app.command()
def report(
    op: Op,
    samples: Samples = 2000,
    seed: int = 0,
    device: Device = "auto",
    batch: Annotated[int | None, typer.Option(help="override the preset's batch size")] = None,
    input_shape: Annotated[str | None, typer.Option(help="override the input shape, e.g. 2,32,64,64")] = None,
    as_json: AsJson = False,
    csv_path: Annotated[str | None, typer.Option("--csv", help="write rows as CSV (path, or - for stdout)")] = None,
    no_store: NoStore = False,
) -> None:
    """Max/mean error of every kernel variant and of PyTorch's reference (fp32, TF32) against fp64."""
    from ..study.report import report as run_report

    _check_samples(samples)
    if as_json and csv_path == "-":
        raise ParameterError("Got --json and --csv -: both would print to stdout; give --csv a file path.")
    csv_file = _csv_target(csv_path)
    with Progress(console=_err, transient=True, disable=as_json or csv_path == "-") as progress:
        task = progress.add_task("variants", total=None)
        result = run_report(
            op,
            samples=samples,
            seed=seed,
            device=device,
            batch=batch,
            input_shape=_shape(input_shape),
            progress=lambda name: progress.update(task, description=name, advance=1),
        )
    _store(
        "report",
        result["rows"],
        {"op": op, "samples": samples, "batch": batch, "input_shape": input_shape},
        seed,
        result["device"],
        no_store,
    )
    if csv_path:
        _write_csv(csv_file, result["rows"])
        if csv_path == "-":
            return
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        print(records.dumps(result))
        return
    table = Table(
        title=f"{op}: {result['samples']} sampled outputs, K = {result['K']}, input {result['input_shape']}, "
        f"device {result['device']}",
        show_lines=False,
    )
    for column in (
        "variant",
        "max abs",
        "mean abs",
        "max rel",
        "ulp p50/p99/max",
        "bits",
        "bound det / prob",
        "err÷bound",
        "allclose fail",
        "time ms",
    ):
        table.add_column(column, justify="left" if column == "variant" else "right")
    for r in result["rows"]:
        ulps = "—" if r["ulp_p50"] is None else f"{r['ulp_p50']:.1f}/{r['ulp_p99']:.1f}/{r['ulp_max']:.0f}"
        table.add_row(
            escape(r["variant"]),  # labels such as "[tap_outer]" are text, not rich markup
            _fmt(r["max_abs"]),
            _fmt(r["mean_abs"]),
            _fmt(r["max_rel"]),
            ulps,
            _fmt(r["bits_min"], ".1f"),
            f"{_fmt(r['deterministic_bound'])} / {_fmt(r['probabilistic_bound'])}",
            _fmt(r["error_over_bound"], ".3f"),
            "—" if r["allclose_fail_percent"] is None else f"{r['allclose_fail_percent']:.2f}%",
            _fmt(r["time_ms"], ".1f"),
        )
    _out.print(table)
    _out.print(
        f"fp64 truth vs mpmath (50 digits) on 20 outputs: max difference {result['fp64_vs_mpmath_max']:.1e}. "
        "Bounds: Higham γ_n (det.), Higham & Mary 2019 (prob., all outputs at once, p = 0.99); "
        "allclose(1e-4, 1e-4) against fp64."
    )


@app.command()
def explain(
    problem: Annotated[str, typer.Option(help="KernelBench problem file (Model, get_inputs, get_init_inputs)")],
    solution: Annotated[str, typer.Option(help="KernelBench solution file (ModelNew)")],
    device: Device = "auto",
    reference_mode: Annotated[
        str | None, typer.Option(help="CPU only: emulate the reference's operand precision: fp32, tf32, bf16 or fp16")
    ] = None,
    trials: Annotated[int, typer.Option(help="KernelBench trials, each with fresh inputs; 1 to 10000")] = 5,
    seed: int = 42,
    atol: float = 1e-4,
    rtol: float = 1e-4,
    samples: Annotated[int, typer.Option(help="sampled outputs for the hypotheses; at least 1")] = 4000,
    timeout: Timeout = DEFAULT_TIMEOUT_S,
    as_json: AsJson = False,
    no_store: NoStore = False,
) -> None:
    """Why does the candidate fail (or pass) KernelBench's check? Exit 0 if arithmetic explains it, 1 if not.

    Both files run in a worker process of their own (each file sees its own folder's modules); what they
    print is captured and shown shortened (all of it under "worker" with --json).
    """
    from ..run.children import start_fork_server

    start_fork_server()  # first: the rest of this command's start overlaps the server's imports
    from ..explain.jobs import explain_files

    options = ExplainOptions(device, reference_mode, trials, seed, atol, rtol, samples, timeout)
    _prepare_store(no_store)
    with _WorkerStatus(enabled=not as_json) as status:
        result = explain_files(problem, solution, options, on_event=status.update)
    data = result.to_dict()
    common = {
        "explained": result.explained,
        "verdict": result.verdict,
        "problem": problem,
        "solution": solution,
        "mismatch_max_abs": result.mismatch["max_abs"],
    }
    rows = [
        {"cause": c["name"], "side": c["side"], "residual_max": c["residual_max"], "evidence": c["evidence"], **common}
        for c in data["causes"]
    ] or [{"cause": None, **common}]
    _store(
        "explain",
        rows,
        {
            "problem": problem,
            "solution": solution,
            "reference_mode": reference_mode,
            "trials": trials,
            "atol": atol,
            "rtol": rtol,
        },
        seed,
        result.context.get("device", device),
        no_store,
        (result.worker or {}).get("versions"),
    )
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        print(records.dumps(data))
    else:
        _print_explanation(result)
    raise typer.Exit(ExitCode.OK if result.explained else ExitCode.NOT_EXPLAINED)


class _WorkerStatus:
    """What the worker is doing, on stderr: on a terminal a transient status line naming its current call into the
    user's code or analysis step (not with --json); elsewhere (a log file, a pipe) a line every ``HEARTBEAT_S``
    seconds of the job saying the same, so that a long job is never silent, and a short one prints nothing."""

    HEARTBEAT_S = 30.0

    def __init__(self, enabled: bool):
        self.enabled = enabled and _err.is_terminal
        self.status = None
        self.text = "starting the worker"
        self._stop = threading.Event()
        self._started = time.monotonic()

    def __enter__(self):
        if self.enabled:
            self.status = _err.status(f"{self.text}…")
            self.status.__enter__()
        elif not _err.is_terminal:
            threading.Thread(target=self._heartbeat, name="fpa-heartbeat", daemon=True).start()
        return self

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.HEARTBEAT_S):
            print(f"fpa: {time.monotonic() - self._started:.0f} s: {self.text}", file=sys.stderr, flush=True)

    def update(self, event: dict) -> None:
        if event.get("event") == "enter":
            detail = f" ({event['detail']})" if event.get("detail") else ""
            self.text = f"running the {event['side']}'s {event['where']}{detail}"
        elif event.get("event") == "leave":
            self.text = "analysing"
        elif event.get("event") == "progress":
            self.text = str(event.get("text", ""))
        else:
            return
        if self.status is not None:
            self.status.update(_shown(f"{self.text}…"))

    def __exit__(self, *exc):
        self._stop.set()
        if self.status is not None:
            self.status.__exit__(*exc)
        return False


def _stat(stats: dict, key: str) -> str:
    value = stats.get(key)
    return "n/a" if value is None else f"{value:.3g}"


def _differences(stats: dict, over: str = "") -> str:
    """'max |difference| …, mean …' of an error record, or that no output is finite on both sides."""
    if stats.get("max_abs") is None:
        return "no output is finite on both sides"
    return f"max |difference| {_stat(stats, 'max_abs')}, mean {_stat(stats, 'mean_abs')}{over}"


def _nonfinite_line(nf: dict, names: tuple[str, str] = ("candidate", "reference"), where: bool = True) -> str | None:
    """NaN/Inf counted per side, or None when neither side has any."""
    if not (nf.get("nan_actual") or nf.get("nan_reference") or nf.get("inf_actual") or nf.get("inf_reference")):
        return None
    first = f", the first at output {tuple(nf['examples'][0])}" if where and nf.get("examples") else ""
    return (
        f"non-finite: {names[0]} {nf['nan_actual']} NaN and {nf['inf_actual']} ±inf, {names[1]} "
        f"{nf['nan_reference']} NaN and {nf['inf_reference']} ±inf; {nf['mismatched_nonfinite']} outputs "
        f"non-finite on one side only{first}"
    )


def _print_explanation(result) -> None:
    m = result.mismatch
    colour = "green" if result.explained else "red"
    nonfinite = _nonfinite_line(m.get("nonfinite") or {})
    over = f" over the {m['finite_pairs']} of {m['outputs']} outputs finite on both sides" if nonfinite else ""
    _out.print(
        f"KernelBench check: {m['failed_trials']} of {len(result.trials)} trials fail allclose(atol={m['atol']}, "
        f"rtol={m['rtol']}); {_differences(m, over)}; up to "
        f"{100 * m['allclose_fail_fraction']:.2f}% of elements failing.",
        highlight=False,
    )
    if nonfinite:
        _out.print(f"  {nonfinite} (trial {m['nonfinite']['trial'] + 1})", highlight=False)
    how = "explained by arithmetic" if result.explained else "not explained by arithmetic"
    _out.print(f"[bold {colour}]verdict: {result.verdict}[/] ({how})")
    for c in result.causes:
        residual = "" if c.residual_max is None else f" Residual max {c.residual_max:.3g}."
        _out.print(f"  • [bold]{c.name}[/] ({c.side}): {_shown(c.evidence)}.{residual}", highlight=False)
    items = result.context.get("analysed_batch_items")
    scope = f" (batch item {items['items'][0]} of {items['of']})" if items else ""
    for name, stats in (("candidate", result.candidate_vs_fp64), ("reference", result.reference_vs_fp64)):
        if stats:
            line = f"  {name} vs the Model in fp64{scope}: {_differences(stats)}"
            extra = _nonfinite_line(stats.get("nonfinite") or {}, (name, "fp64"), where=False)
            _out.print(line + (f"; {extra}" if extra else ""), highlight=False)
    if result.floor:
        f = result.floor
        linear = [o["description"] for o in result.ops if o["kind"] == "linear"]
        _out.print(
            f"  floor: {f['floor_units']:.1f} units of σ (8 × the fp32 Model's own {f['baseline_units']:.2f}; σ from "
            f"{f['runs'] + 2} Monte-Carlo runs) over {f['outputs']} outputs; {len(result.ops)} ops, linear: "
            f"{', '.join(linear)}",
            highlight=False,
        )
    tol = result.recommended_tolerance
    if tol.get("atol") is not None:
        _out.print(
            f"  principled tolerance: atol = {tol['atol']:.3g}, rtol = {tol['rtol']} ({tol['basis']})",
            highlight=False,
        )
    for note in result.notes:
        _out.print(f"  note: {_shown(note)}", highlight=False)
    _print_worker(result.worker)


def _printable(text: str) -> str:
    """``text`` with control characters (ANSI escapes, NUL, bells) shown as escapes, for the terminal: what
    the user's code printed or raised must not drive our terminal."""
    return "".join(c if c.isprintable() or c in "\t" else repr(c)[1:-1] for c in text)


def _shown(text) -> str:
    """Text from the user's code or the file system (a pair's name, an error, a note) as rich may print it: its
    control characters escaped (``_printable``), its markup inert."""
    return escape(_printable(str(text)))


def _print_worker(worker: dict, console: Console = _out) -> None:
    """The time the worker took and, shortened, what the user's code printed."""
    if not worker:
        return
    from ..run.children import CapturedOutput

    console.print(
        f"  worker: {worker['seconds']:.1f} s, of which {worker['user_code_seconds']:.1f} s in the user's code",
        highlight=False,
    )
    for side in Side:
        lines = CapturedOutput(**worker[side.value]).tail() if side.value in worker else []
        if lines:
            where = "the problem's process (with fpa's analysis)" if side is Side.PROBLEM else "the solution's process"
            console.print(f"  {where} printed (all of it under 'worker' with --json):", highlight=False)
            for line in lines:
                console.print(f"  {escape(_printable(line))}", highlight=False)


@app.command()
def tolerance(
    op: Op,
    mode: Annotated[str, typer.Option(help="the reference's precision: fp32, tf32, bf16, fp16")] = "tf32",
    samples: Samples = 2000,
    seed: int = 0,
    as_json: AsJson = False,
) -> None:
    """atol/rtol for comparing an fp32 kernel with a reference in MODE, from the bounds and measured errors."""
    from ..study.tolerance_report import tolerance_report

    _check_samples(samples)
    result = tolerance_report(op, mode, samples=samples, seed=seed)
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        print(records.dumps(result))
        return
    for line in result["reasoning"]:
        _out.print(escape(line))
    _out.print(f"[bold]recommended: atol = {result['atol']:.3g}, rtol = {result['rtol']}[/]")


@app.command()
def orders(
    preset: Annotated[str, typer.Option(help=f"one of {', '.join(PRESET_NAMES)}")] = "dilated_conv2d",
    samples: Samples = 2000,
    seed: int = 0,
    batch: Annotated[int | None, typer.Option(help="override the preset's batch size")] = None,
    as_json: AsJson = False,
) -> None:
    """The accumulation-order error table: every order × operand rounding on sampled outputs, with bounds."""
    from ..study.order_table import format_table, mpmath_spot_check, order_table, preset_terms

    check_op(preset)
    _check_samples(samples)
    spec, terms = preset_terms(preset, samples, seed, batch)
    rows = order_table(spec, terms)
    spot = mpmath_spot_check(terms)
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        table = {"preset": preset, "samples": terms.M, "K": terms.K, "seed": seed, "fp64_vs_mpmath_max": spot}
        print(records.dumps({**table, "rows": [r.to_dict() for r in rows]}))
        return
    print(
        f"{preset}: {terms.M} sampled outputs, K = {terms.K} terms each, seed {seed}; errors against the correctly "
        f"rounded fp64 sum (fp64 vs 50-digit mpmath on 20 outputs: {spot:.1e})\n"
    )
    print(format_table(rows))


@app.command()
def triage(
    path: Annotated[str, typer.Argument(help="a folder of problems (problem.py + solutions) or a .csv/.json manifest")],
    device: Device = "cpu",
    workers: Annotated[
        int | None, typer.Option(help="pairs explained at once (default: a CPU job per 2 cores; one per GPU)")
    ] = None,
    builders: Annotated[
        int | None,
        typer.Option(help="GPU only: solutions whose extensions are built ahead at once (default: cores/2, at most 8)"),
    ] = None,
    reference_mode: Annotated[
        str | None, typer.Option(help="CPU only: emulate the reference's operand precision: fp32, tf32, bf16 or fp16")
    ] = None,
    trials: Annotated[int, typer.Option(help="KernelBench trials per pair; 1 to 10000")] = 5,
    seed: int = 42,
    atol: float = 1e-4,
    rtol: float = 1e-4,
    timeout: Timeout = DEFAULT_TIMEOUT_S,
    rerun: Annotated[bool, typer.Option("--rerun", help="explain every pair again, even those already stored")] = False,
    report: Annotated[
        str | None, typer.Option(help="also write a self-contained HTML report with figures to this .html file")
    ] = None,
    ray: Annotated[
        str | None,
        typer.Option(help="run the pairs as Ray tasks: auto, local, ray://HOST:PORT, HOST:PORT (the cluster extra)"),
    ] = None,
    as_json: AsJson = False,
    no_store: NoStore = False,
) -> None:
    """Explain many pairs at once: each in its own worker, a crash or hang only its own row; finished pairs are
    stored at once and not run again (same files, options, device, version) unless --rerun."""
    from ..triage.discovery import discover
    from ..triage.pairs import triage as triage_pairs
    from ..triage.pool import Pool

    pairs = discover(path)
    if report is not None:
        from ..triage.report import check_report_path

        check_report_path(report)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=_err, disable=as_json, transient=True) as progress:
        task = progress.add_task(f"triage: {len(pairs)} pairs", total=len(pairs))

        def show(state: dict) -> None:
            counts = ", ".join(f"{v} {n}" for v, n in sorted(state["verdicts"].items(), key=lambda kv: -kv[1]))
            progress.update(task, completed=state["done"], description=f"triage: {escape(counts)}")

        result = triage_pairs(
            pairs,
            ExplainOptions(device, reference_mode, trials, seed, atol, rtol, timeout=timeout),
            Pool(workers, builders, ray),
            rerun=rerun,
            store=not no_store,
            on_progress=show,
        )
    work_done()  # the work is done: a signal now does not cut its output short
    for line in result["not_stored"]:
        _err.print(f"[yellow]warning:[/] not stored (a rerun will explain it again): {_shown(line)}")
    for line in result["unreadable"]:
        _err.print(f"[yellow]warning:[/] a stored file was skipped: {_shown(line)}")
    if as_json:
        print(records.dumps(result))
    else:
        _print_triage(result, path, atol, rtol)
    if report is not None:  # after the results are out: a report that fails costs only itself
        from ..triage.report import write_report

        try:
            written = write_report(result, report, title=f"fpa triage {records.safe_text(path)}")
            _err.print(f"report: {_shown(str(written))}", highlight=False)
        except Exception as error:  # e.g. the disk filled during the run
            _err.print(f"[yellow]warning:[/] the report was not written: {_shown(str(error))}")


def _print_triage(result: dict, path: str, atol: float, rtol: float) -> None:
    """The text output of ``fpa triage``: the pairs' table, their errors, the summary, the time spent."""
    from ..triage.summary import matches_expected

    summary = result["summary"]
    table = Table(title=f"fpa triage {_shown(path)}: {summary['pairs']} pairs ({result['ran']} run, {result['reused']} "
                  "stored)")  # fmt: skip
    labelled = any(row.get("expected") for row in result["pairs"])
    columns = ("pair", "verdict", *(("expected",) if labelled else ()), "check", "max |diff|", "candidate vs fp64",
               "needed atol", "s")  # fmt: skip
    for col in columns:
        table.add_column(col, justify="left" if col in ("pair", "verdict", "expected") else "right")
    for row in result["pairs"]:
        check = "-" if row.get("check_passed") is None else ("pass" if row["check_passed"] else "fail")
        expected = []
        if labelled:
            mark = "" if not row.get("expected") or matches_expected(row) else " ✗"
            expected = [_shown(row.get("expected") or "") + mark]
        table.add_row(
            _shown(row["pair_id"]), _shown(row["verdict"]), *expected, check, _num(row.get("max_abs")),
            _num(row.get("candidate_vs_fp64")), _num(row.get("needed_atol") if row.get("explained") else None),
            f"{row.get('seconds') or 0:.1f}",
        )  # fmt: skip
    _out.print(table)
    for row in result["pairs"]:
        if row.get("error"):
            _out.print(f"{_shown(row['pair_id'])}: {_shown(row['error'])}", highlight=False)
        for note in (row.get("notes") or "").split(" | "):
            if note:
                _out.print(f"{_shown(row['pair_id'])}: note: {_shown(note)}", highlight=False)
    _out.print("verdicts: " + ", ".join(f"{v} {n}" for v, n in sorted(summary["verdicts"].items())))
    matched, labelled_count = summary["expected_matched"]
    if labelled_count:
        _out.print(f"expected labels: {matched} of {labelled_count} matched", highlight=False)
    if summary["false_passes"]:
        _out.print(f"[bold]false passes at atol={atol}, rtol={rtol}:[/] " + _shown(", ".join(summary["false_passes"])))
    for problem, need in summary["needed_atol_by_problem"].items():
        _out.print(f"{_shown(problem)}: its explained pairs need atol ≈ {need:.3g}")
    timing = result["timing"]
    if timing["pairs"]:
        built = f", {timing['build_s']:.0f} s building {timing['built_ahead']} ahead" if timing["built_ahead"] else ""
        _out.print(
            f"{timing['pairs']} pairs in {timing['wall_s']:.0f} s ({timing['pairs_per_hour']:.0f} pairs/hour) on "
            f"{timing['slots']} {timing['device']} slot(s): {timing['explain_s']:.0f} s explaining{built}; the slots "
            f"idle {100 * timing['slot_idle_share']:.0f} % of the time",
            highlight=False,
        )


def _num(value) -> str:
    return "-" if value is None else f"{value:.3g}"


@app.command()
def fuzz(
    op: Annotated[str | None, typer.Argument(help=f"one of {', '.join(PRESET_NAMES)}: fuzz our own variants")] = None,
    problem: Annotated[str | None, typer.Option(help="KernelBench problem file to fuzz against")] = None,
    solution: Annotated[str | None, typer.Option(help="KernelBench solution file (ModelNew) to fuzz")] = None,
    max_examples: Annotated[
        int | None,
        typer.Option(help="examples to try, at least 1 (default 200; 2000 with HYPOTHESIS_PROFILE=thorough)"),
    ] = None,
    device: Device = "auto",
    seed: int = 0,
    replay: Annotated[str | None, typer.Option(help="replay one example (the JSON a failure prints)")] = None,
    timeout: Timeout = DEFAULT_TIMEOUT_S,
    as_json: AsJson = False,
) -> None:
    """Search configs and data for a failure, shrink it to a minimal example. Exit 1 when one is found, 3 when
    the candidate's code itself fails (raises, exits, crashes, hangs) on an example."""
    from ..explain.jobs import fuzz_files, replay_files

    if (problem is None) != (solution is None):
        raise ParameterError("give both --problem and --solution, or neither")
    if problem is not None and op is not None:
        raise ParameterError("give OP or --problem/--solution, not both")
    if problem is None and op is None:
        raise ParameterError(f"give OP ({', '.join(PRESET_NAMES)}) or --problem and --solution")
    if op is not None:
        check_op(op)
    if replay is not None and problem is None:
        raise ParameterError("--replay replays an example of a KernelBench pair: give --problem and --solution too")
    check_seconds("timeout", timeout)
    check_seed("seed", seed)
    with _WorkerStatus(enabled=not as_json) as status:
        if replay is not None:
            result = replay_files(problem, solution, replay, device=device, timeout=timeout, on_event=status.update)
        elif problem is not None:
            result = fuzz_files(
                problem,
                solution,
                max_examples=max_examples,
                device=device,
                seed=seed,
                timeout=timeout,
                on_event=status.update,
            )
        else:
            from ..fuzz.variants import fuzz_op  # in this process: our own kernels, no user code

            result = fuzz_op(op, max_examples=max_examples, device=device, seed=seed)
    failures = result["failures"]
    user_code = any(f.get("user_code") for f in failures)
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        print(records.dumps(result))
    else:
        shrink = f" (then {result['shrink_steps']} runs to shrink the failure)" if result.get("shrink_steps") else ""
        asked = result.get("max_examples")
        short = (
            f" (of {asked} asked: the rest were refused or too large)" if asked and result["examples"] < asked else ""
        )
        if failures:
            short = ""  # the search stops at the first failure
        _out.print(f"{result['examples']} examples tried{short}{shrink}; {len(failures)} failure(s).", highlight=False)
        if result.get("verdicts"):
            seen = ", ".join(
                f"{n} {verdict}" for verdict, n in sorted(result["verdicts"].items(), key=lambda kv: -kv[1])
            )
            _out.print(f"  verdicts of the examples: {seen}", highlight=False)
        if result.get("refused"):
            top = result.get("refusals") or [{}]
            most = f" (most often: {_shown(top[0]['reason'])})" if top[0] else ""
            _out.print(
                f"  {result['refused']} drawn configurations the problem's own Model refused were not examples{most}",
                highlight=False,
            )
        if result.get("drawn"):
            _out.print(f"  drawn: {', '.join(result['drawn'])} and the input shapes", highlight=False)
        for note in result.get("notes", []):
            _out.print(f"  note: {_shown(note)}", highlight=False)
        for f in failures:
            explanation = f.get("explanation") or {}
            verdict = explanation.get("verdict")
            evidence = explanation.get("evidence") or "; ".join(c["evidence"] for c in explanation.get("causes", []))
            _out.print(f"[bold red]minimal failing config[/]: {_shown(records.dumps(f['config'], indent=None))}")
            for conv in f.get("convs") or []:
                _out.print(f"  {_shown(conv)}", highlight=False)
            if f.get("not_from_get_init_inputs"):
                _out.print(
                    f"  note: {', '.join(f['not_from_get_init_inputs'])} set away from the default, which "
                    "get_init_inputs() never passes (KernelBench does not check such configurations)",
                    highlight=False,
                )
            _out.print(f"  {verdict}: {_shown(str(evidence))}", highlight=False)
            _out.print(f"  reproduce: {_shown(f['command'])}", soft_wrap=True, highlight=False)
        if result.get("worker"):
            _print_worker(result["worker"])
    if user_code:
        raise typer.Exit(ExitCode.USER_CODE)
    raise typer.Exit(ExitCode.NOT_EXPLAINED if failures else ExitCode.OK)


@app.command()
def bench(
    op: Annotated[str, typer.Argument(help=f"one of {', '.join(PRESET_NAMES)} (timed at its full size)")],
    batch: Annotated[int | None, typer.Option(help="replace the preset's batch size (default: full size)")] = None,
    reps: Annotated[int, typer.Option(help="timed calls per row (fewer for rows slower than --budget)")] = 20,
    rotate: Annotated[int, typer.Option(help="input sets used in turn, so no call finds its input in L2")] = 3,
    budget: Annotated[float, typer.Option(help="seconds of timed calls per row at most (at least 3 calls)")] = 10.0,
    tiled_only: Annotated[bool, typer.Option("--tiled-only", help="time only the tiled variants")] = False,
    match: Annotated[str | None, typer.Option(help="time only the kernel rows whose label contains this text")] = None,
    out: Annotated[
        str | None, typer.Option(help="JSON to merge into (default experiments/results/bench_<gpu>.json)")
    ] = None,
    figure: Annotated[
        str | None, typer.Option(help="Pareto PNG (default experiments/figures/bench_<op>_<gpu>.png)")
    ] = None,
    kernels_tree: Annotated[
        str | None, typer.Option(help="tree id of kernels/ (default: git rev-parse HEAD:kernels)")
    ] = None,
    replot: Annotated[
        str | None, typer.Option(help="no GPU: redraw the Pareto plot of OP from this results file, then stop")
    ] = None,
    as_json: AsJson = False,
) -> None:
    """GPU: time every fast variant beside cuDNN fp32/TF32/fp64 and the fp64 reference; error vs fp64; Pareto plot."""
    from ..study import bench as bench_lib

    kernel_op = PRESET_KERNEL_OPS[check_op(op)]  # the results and figures are named by the kernels' op
    if replot:
        try:
            result = bench_lib.load(replot, op)
        except OSError as error:
            raise ParameterError(f"Got --replot {replot}, which cannot be read: {error}") from None
        path = figure or f"experiments/figures/bench_{kernel_op}_{bench_lib.gpu_slug(result.meta['device'])}.png"
        bench_lib.plot_pareto(result, path)
        _out.print(f"wrote {path}")
        return
    from fpa_kernels.variants import Schedule

    variants = bench_lib.default_variants(kernel_op)
    if tiled_only and variants is not None:
        variants = [v for v in variants if v.schedule is Schedule.TILED]
    tree = kernels_tree or bench_lib.kernels_tree_of_checkout()
    result = bench_lib.bench(
        op,
        variants,
        bench_lib.BenchOptions(batch=batch, rotate=rotate, reps=reps, budget_s=budget, match=match),
        kernels_tree=tree,
        log=lambda line: _err.print(escape(line), highlight=False),
    )
    slug = bench_lib.gpu_slug(result.meta["device"])
    out_path = out or f"experiments/results/bench_{slug}.json"
    fig_path = figure or f"experiments/figures/bench_{kernel_op}_{slug}.png"
    bench_lib.save(result, out_path)
    bench_lib.plot_pareto(result, fig_path)
    work_done()  # the work is done: a signal now does not cut its output short
    if as_json:
        print(records.dumps({"meta": result.meta, "records": result.records}))
        return
    table = Table(title=f"fpa bench {op} — {result.meta['device']} ({out_path}, {fig_path})")
    for col in ("variant", "kind", "kernel", "time ms", "TFLOP/s", "% fp32 peak", "max |err| vs fp64", "allclose fail"):
        table.add_column(col, justify="left" if col in ("variant", "kind", "kernel") else "right")
    for r in sorted(result.records, key=lambda r: r["time_ms"]):
        pct = r["pct_fp32_peak"]
        table.add_row(
            escape(r["variant"]),
            r["kind"],
            r.get("kernel", "-"),
            f"{r['time_ms']:.3f}",
            f"{r['tflops']:.1f}",
            "-" if pct is None else f"{pct:.0f}",
            _fmt(r["max_abs_err_vs_fp64"]),
            f"{100 * r['allclose_1e-4_fail_frac']:.2f}%",
        )
    _out.print(table)


def main() -> None:
    """The command line, which the ``fpa`` script and ``python -m fp_analysis`` run (``fp_analysis.cli.entry``)."""
    app()
