"""fpa report's table in the terminals people have (80 and 100 columns): no line wider than the terminal, every
variant named whole in every table, each short code explained under it, and rows without numbers saying why.

A terminal's width reaches fpa as its stdout console's width (rich reads ``COLUMNS``, else asks the terminal); the
runner's stdout is no terminal, so the tests give the console the width that ``COLUMNS=80`` gives it on one."""

from __future__ import annotations

import csv
import re

import pytest
from fpa_kernels import Op, variant_matrix

from fp_analysis.cli.console import out
from fp_analysis.cli.report import compact_label
from fp_analysis.study.report import RowKind

from ..cli_runs import fpa


@pytest.fixture(autouse=True)
def _store(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path / "store"))


def _legend(lines: list[str]) -> list[str]:
    """The legend's lines: from its heading to the notes under it."""
    start = next(i for i, line in enumerate(lines) if line.startswith("Variant codes"))
    end = next(i for i, line in enumerate(lines) if i > start and line.startswith(("GPU only —", "fp64 truth")))
    return lines[start + 1 : end]


@pytest.mark.parametrize("width", [80, 100])
def test_the_report_fits_the_terminal_and_names_every_variant_whole(width, tmp_path, monkeypatch):
    monkeypatch.setattr(out, "width", width)
    rows_csv = tmp_path / "rows.csv"  # the rows as data, from the same run that prints the table
    run = fpa(
        "report", "dilated_conv2d", "--input-shape", "1,32,20,30", "--samples", "100", "--no-store", "--csv", rows_csv
    )
    assert run.code == 0, run.stdout + run.stderr
    rows = list(csv.DictReader(rows_csv.open()))
    lines = run.stdout.splitlines()

    assert max(len(line) for line in lines) <= width
    assert "…" not in run.stdout  # nothing cut short, numbers included
    tables = sum(line.startswith("variant ") for line in lines)
    legend = _legend(lines)
    for row in rows:
        label, codes = compact_label(row["variant"])
        # the whole label, then its first number (or why there is none): in each table, one line
        named = [line for line in lines if re.match(rf"{re.escape(label)} +(GPU only|\d|—)", line)]
        assert len(named) == tables, (label, named)
        if row["kind"] == RowKind.KERNEL_GPU_ONLY.value:
            assert all(line.split()[-1] == "only" for line in named), named  # "GPU only", and no row of dashes
        for code in codes:
            shown = code.code or "(none)"
            explained = rf"(?<![\w-]){re.escape(shown)}(?![\w-]).* {re.escape(code.meaning)}"
            assert any(re.search(explained, line) for line in legend), (shown, legend)
    assert any(row["kind"] == RowKind.KERNEL_GPU_ONLY.value for row in rows)  # the CPU has rows without numbers
    assert re.search(r"^GPU only — .*: run with --device cuda\.$", run.stdout, re.M)


@pytest.mark.parametrize("op", list(Op))
def test_short_labels_tell_every_variant_apart(op):
    labels = [variant.label for variant in variant_matrix(op)]
    assert len({compact_label(label)[0] for label in labels}) == len(labels)


def test_a_short_label_reads_part_by_part():
    assert compact_label("sequential/fma/tf32_rz [tap_outer] +fastmath")[0] == "seq/fma/tf32rz tap +fm"
    assert compact_label("split_k7-tree/separate/none tiled")[0] == "sk7/sep tiled"  # fp32 operands: no code
    assert compact_label("sequential/fma/none gelu-tanh-cuda")[0] == "seq/fma tanh-cu"
    assert compact_label("pytorch_tf32") == ("pytorch_tf32", [])  # not a variant's label: shown as it is
