"""``fpa report``: the error of every kernel variant and of PyTorch's reference against fp64 (table, JSON or CSV).

The table fits the console's width (a terminal's own, or ``COLUMNS`` where set; on a pipe console.py's 200): one
table with the variants' full labels where it is wide enough; else the labels in short codes, explained in a legend
under the table; else the columns variants are compared by in one table, the others in a second; and narrower still,
as many tables as it takes, so that no label or number is cut.
"""

from __future__ import annotations

import csv
import pathlib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

import typer
from rich import box
from rich.markup import escape
from rich.progress import Progress
from rich.table import Table

from .. import records
from ..errors import ParameterError
from ..options import check_device, check_op
from ..run.interrupts import work_done
from .arguments import AsJson, Device, NoStore, Op, Samples, check_samples, csv_target, parse_shape
from .console import err, fmt, out
from .storing import store_run


def report(
    op: Op,
    samples: Samples = 2000,
    seed: Annotated[int, typer.Option(help="seed of the inputs and of the sampled outputs")] = 0,
    device: Device = "auto",
    batch: Annotated[int | None, typer.Option(help="override the preset's batch size")] = None,
    input_shape: Annotated[str | None, typer.Option(help="override the input shape, e.g. 2,32,64,64")] = None,
    as_json: AsJson = False,
    csv_path: Annotated[str | None, typer.Option("--csv", help="write rows as CSV (path, or - for stdout)")] = None,
    no_store: NoStore = False,
) -> None:
    """Max/mean error of every kernel variant and of PyTorch's reference (fp32, TF32) against fp64."""
    check_op(op)  # the options first, before torch's import: a mistake is said at once
    check_device(device)
    check_samples(samples)
    if as_json and csv_path == "-":
        raise ParameterError("Got --json and --csv -: both would print to stdout; give --csv a file path.")
    csv_file = csv_target(csv_path)
    from ..study.report import report as run_report

    with Progress(console=err, transient=True, disable=as_json or csv_path == "-") as progress:
        task = progress.add_task("variants", total=None)
        result = run_report(
            op,
            samples=samples,
            seed=seed,
            device=device,
            batch=batch,
            input_shape=parse_shape(input_shape),
            progress=lambda name: progress.update(task, description=name, advance=1),
        )
    store_run(
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
    _print_result(result)


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


@dataclass(frozen=True)
class _Column:
    """A numeric column of the table: its head (two short lines, so that no head is wider than its numbers) and
    how a row's cell reads."""

    head: str
    cell: Callable[[dict], str]


def _percent(value: float | None) -> str:
    """Return a percentage as ``17.33%``, or a dash when there is none."""
    return fmt(value, ".2f") + ("" if value is None else "%")


def _count(value: float | None) -> str:
    """Return a ULP count in at most 7 characters: from 10⁴ on in 3 digits (``2.46e5``), where one ULP is noise."""
    if value is None or value < 1e4:
        return fmt(value, ".1f")
    return f"{value:.2e}".replace("e+0", "e").replace("e+", "e")


# The columns variants are compared by, then those that say more about one: beside them where the terminal is wide
# enough, else in a second table.
_MAIN = (
    _Column("max\nabs", lambda r: fmt(r["max_abs"])),
    _Column("mean\nabs", lambda r: fmt(r["mean_abs"])),
    _Column("min bits", lambda r: fmt(r["bits_min"], ".1f")),
    _Column("det.\nbound", lambda r: fmt(r["deterministic_bound"])),
    _Column("prob.\nbound", lambda r: fmt(r["probabilistic_bound"])),
    _Column("err÷\nbound", lambda r: fmt(r["error_over_bound"], ".3f")),
    _Column("allclose\nfail", lambda r: _percent(r["allclose_fail_percent"])),
)
_DETAIL = (
    _Column("max\nrel", lambda r: fmt(r["max_rel"])),
    _Column("ulp\np50", lambda r: _count(r["ulp_p50"])),
    _Column("ulp\np99", lambda r: _count(r["ulp_p99"])),
    _Column("ulp\nmax", lambda r: _count(r["ulp_max"])),
    _Column("time\nms", lambda r: fmt(r["time_ms"], ".1f")),
)
_GPU_ONLY = "GPU only"  # the cell of a row that has no CPU twin, explained under the table


@dataclass(frozen=True)
class _Code:
    """How one part of a variant's label reads in short, and what it means (a line of the legend)."""

    code: str  # "" for a default, left out of the label
    kind: str  # the legend line it is explained on
    meaning: str


# The parts of ``VariantSpec.label`` (order/contraction/operand rounding, then the kernel's options) in short codes.
# A part that is not here (PyTorch's rows, a new option) is shown as it is.
_CODES = {
    "sequential": _Code("seq", "order", "one fp32 sum, term after term"),
    "kahan": _Code("kahan", "order", "Kahan-compensated sum"),
    "fp64": _Code("fp64", "order", "fp64 sum, rounded to fp32 once"),
    "fma": _Code("fma", "multiply-add", "fused (fmaf)"),
    "separate": _Code("sep", "multiply-add", "product rounded, then added"),
    "none": _Code("", "operands", "fp32, as given"),
    "tf32": _Code("tf32", "operands", "rounded to TF32, nearest even"),
    "tf32_rz": _Code("tf32rz", "operands", "rounded to TF32 toward zero"),
    "gelu-erf-fpa": _Code("erf", "GELU", "erf form"),
    "gelu-tanh-fpa": _Code("tanh", "GELU", "tanh form"),
    "gelu-erf-cuda": _Code("erf-cu", "GELU", "erf form by CUDA's erff"),
    "gelu-tanh-cuda": _Code("tanh-cu", "GELU", "tanh form by CUDA's tanhf"),
    "[tap_outer]": _Code("tap", "kernel", "kernel taps outermost, not input channels"),
    "tiled": _Code("tiled", "kernel", "shared-memory tiles"),
    "+fastmath": _Code("+fm", "kernel", "built with --use_fast_math"),
    "tf32_mma": _Code("tf32_mma", "kernel", "tensor cores, TF32 operands"),
    "3xtf32": _Code("3xtf32", "kernel", "tensor cores, 3 TF32 products per term"),
}
_SPLIT_K = re.compile(r"split_k(\d+)-tree")


def _code(part: str) -> _Code | None:
    """Return the short code of one part of a label (``sequential``, ``[tap_outer]`` …), None for a part shown as it
    is."""
    if match := _SPLIT_K.fullmatch(part):
        return _Code(f"sk{match[1]}", "order", "split-K: that many partial sums, added by a tree")
    return _CODES.get(part)


def compact_label(label: str) -> tuple[str, list[_Code]]:
    """Return ``label`` in short codes, ``sequential/fma/tf32 [tap_outer] +fastmath`` as ``seq/fma/tf32 tap +fm``,
    with the codes it uses."""
    words, used = [], []
    for word in label.split(" "):
        parts = []
        for part in word.split("/"):
            code = _code(part)
            used += [] if code is None else [code]
            parts += [part] if code is None else [code.code] if code.code else []
        words.append("/".join(parts))
    return " ".join(words), used


def _table(rows: list[dict], columns: tuple[_Column, ...], labels: list[str], gap: int) -> Table:
    """Return the table of ``rows`` with ``columns``, each row named by its label in ``labels``, ``gap`` spaces
    (1 or 2) between columns."""
    # Spaces, not lines, between the columns: the numbers line up by themselves, and 80 columns hold the main ones.
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0, 0, gap - 1), pad_edge=False)
    table.add_column("variant", overflow="fold")  # narrower than any layout: folded, never cut
    for column in columns:
        table.add_column(column.head, justify="right", no_wrap=True)
    for row, label in zip(rows, labels, strict=True):
        if _gpu_only(row):
            cells = [_GPU_ONLY] + [""] * (len(columns) - 1)
        else:
            cells = [column.cell(row) for column in columns]
        table.add_row(escape(label), *cells)  # labels such as "[tap_outer]" are text, not rich markup
    return table


def _gpu_only(row: dict) -> bool:
    """Return whether ``row`` is a variant's that has no CPU twin, run on a CPU: a row without numbers."""
    from ..study.report import RowKind  # here, not above: it imports torch, which `fpa --help` goes without

    return row["kind"] == RowKind.KERNEL_GPU_ONLY.value


def _tables(rows: list[dict], width: int) -> tuple[list[Table], bool]:
    """Return the tables that show ``rows`` in ``width`` columns, and whether their labels are in short codes: the
    first layout that fits of one table with full labels, one with short labels, two with short labels (the main
    columns, then the details), each with two spaces between columns or else one."""
    full = [r["variant"] for r in rows]
    short = [compact_label(label)[0] for label in full]
    for labels, groups in ((full, (_MAIN + _DETAIL,)), (short, (_MAIN + _DETAIL,)), (short, (_MAIN, _DETAIL))):
        for gap in (2, 1):
            tables = [_table(rows, columns, labels, gap) for columns in groups]
            if all(_natural_width(table) <= width for table in tables):
                return tables, labels is short
    return _as_many_as_fit(rows, _MAIN + _DETAIL, short, width), True


def _as_many_as_fit(rows: list[dict], columns: tuple[_Column, ...], labels: list[str], width: int) -> list[Table]:
    """Return ``columns`` in as few tables as fit in ``width``, in order: where the main columns do not fit, the
    numbers move to more tables rather than be cut (a table of one column is as narrow as it gets)."""
    tables, start = [], 0
    while start < len(columns):
        end = start + 1
        while end < len(columns) and _natural_width(_table(rows, columns[start : end + 1], labels, 1)) <= width:
            end += 1
        tables.append(_table(rows, columns[start:end], labels, 1))
        start = end
    return tables


def _natural_width(table: Table) -> int:
    """Return the columns ``table`` takes when nothing in it is cut or wrapped."""
    return out.measure(table, options=out.options.update_width(sys.maxsize)).maximum


def _legend(labels: list[str]) -> Table:
    """Return the legend of the short codes ``labels`` use, one line per kind of code."""
    used = list(dict.fromkeys(code for label in labels for code in compact_label(label)[1]))  # as first used
    kinds = [code.kind for code in _CODES.values()]
    meanings: dict[tuple[str, str], list[str]] = {}  # codes that mean the same (sk4, sk7) share a line
    for code in sorted(used, key=lambda c: kinds.index(c.kind)):
        meanings.setdefault((code.kind, code.meaning), []).append(code.code)
    legend = Table.grid(padding=(0, 1))
    legend.add_column(no_wrap=True)
    legend.add_column(no_wrap=True, style="bold")
    legend.add_column()
    shown_kinds = set()
    for (kind, meaning), codes in meanings.items():
        legend.add_row("" if kind in shown_kinds else kind, ", ".join(code or "(none)" for code in codes), meaning)
        shown_kinds.add(kind)
    return legend


def _print_result(result: dict) -> None:
    """Print the report's tables, sized to the terminal (see the module doc), and what they rest on."""
    rows = result["rows"]
    out.print(
        f"{result['op']} on {result['device']}: {result['samples']} sampled outputs, K = {result['K']}, "
        f"input {result['input_shape']}"
    )
    tables, short = _tables(rows, out.width)
    for table in tables:
        out.print(table)
    if short:
        out.print("Variant codes: order/multiply-add/operands, then the kernel's options.")
        out.print(_legend([r["variant"] for r in rows]))
    for note in sorted({row["note"] for row in rows if _gpu_only(row)}):
        out.print(f"{_GPU_ONLY} — {note}.")
    out.print(
        f"fp64 truth vs mpmath (50 digits) on 20 outputs: max difference {result['fp64_vs_mpmath_max']:.1e}. "
        "Bounds: Higham γ_n (det.), Higham & Mary 2019 (prob., all outputs at once, p = 0.99); "
        "allclose(1e-4, 1e-4) against fp64. Times leave out a first call's compilation.",
        highlight=False,
    )
