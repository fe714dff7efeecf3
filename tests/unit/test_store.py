"""The results store: runs round-trip as one table, bad input is named (the killed writer is in
process/test_store.py).
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import pyarrow as pa
import pytest

from fp_analysis.errors import ParameterError
from fp_analysis.store import (
    UnreadableRunWarning,
    append_run,
    clean_temporaries,
    read_store,
    run_metadata,
    store_dir,
)

from ..results_store import cpu_run_meta
from ..results_store import store as store  # a pytest fixture

# ------------------------------------------------------------------------------------------ round trip


def test_two_runs_with_different_columns_read_back_as_one_table(store):
    report_rows = [
        {"preset": "conv3x3", "max_ulp": 1.5, "ok": True, "detail": {"order": "pairwise", "k": [1, 2]}},
        {"preset": "conv1x1", "max_ulp": 0.5, "ok": False, "detail": None},
    ]
    explain_rows = [{"preset": "conv3x3", "cause": "fma contraction", "residual_ulp": 0}] * 3
    path_a = append_run(report_rows, cpu_run_meta("report", preset="all"))
    path_b = append_run(explain_rows, cpu_run_meta("explain"))
    assert path_a.parent == path_b.parent == store
    assert path_a.name.startswith("run-") and path_a.suffix == ".parquet"

    table = read_store()
    assert isinstance(table, pa.Table)
    assert table.num_rows == 5
    assert {"preset", "max_ulp", "ok", "detail", "cause", "residual_ulp"} <= set(table.column_names)
    rows = table.to_pylist()
    # Runs are read in time order; each run's rows are null in the other run's columns.
    assert [r["meta_command"] for r in rows] == ["report"] * 2 + ["explain"] * 3
    assert all(r["cause"] is None and r["residual_ulp"] is None for r in rows[:2])
    assert all(r["max_ulp"] is None and r["ok"] is None for r in rows[2:])
    assert json.loads(rows[0]["detail"]) == {"order": "pairwise", "k": [1, 2]}
    assert rows[1]["detail"] is None

    for field in ("run_id", "timestamp", "command", "flags", "seed", "device", "numpy_version", "git_commit"):
        assert f"meta_{field}" in table.column_names, field
    assert json.loads(rows[0]["meta_flags"]) == {"preset": "all"}
    assert len({r["meta_run_id"] for r in rows}) == 2

    explained = read_store(command="explain")
    assert explained.num_rows == 3
    assert set(explained["meta_command"].to_pylist()) == {"explain"}
    assert read_store(command="no-such-command").num_rows == 0


def test_int_and_float_columns_of_different_runs_promote_and_numpy_scalars_are_accepted(store):
    append_run([{"x": 1}], cpu_run_meta("report"))
    append_run([{"x": np.float32(0.25)}, {"x": np.int64(3)}], cpu_run_meta("report"))
    assert read_store()["x"].to_pylist() == [1.0, 0.25, 3.0]


def test_empty_or_missing_store_reads_as_an_empty_table(tmp_path, store):
    assert read_store().num_rows == 0
    assert read_store(tmp_path / "never-created").num_rows == 0
    assert read_store(command="report").num_rows == 0


def test_explicit_directory_overrides_the_environment(tmp_path, store):
    elsewhere = tmp_path / "elsewhere"
    append_run([{"x": 1}], cpu_run_meta("report"), directory=elsewhere)
    assert read_store(elsewhere).num_rows == 1
    assert read_store().num_rows == 0


def test_store_dir_defaults_to_xdg_data_home_under_the_home_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("FPA_STORE", raising=False)
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    expected = tmp_path / ".local" / "share" / "fp_analysis" / "store"
    assert store_dir() == expected and expected.is_dir()


def test_run_metadata_records_the_invocation_and_environment():
    meta = run_metadata("explain", {"tol": 1e-3, "orders": ["a", "b"]}, seed=None, device="cuda:0")
    assert len(meta["run_id"]) == 32 and int(meta["run_id"], 16) >= 0
    assert meta["timestamp"].endswith("+00:00")
    assert json.loads(meta["flags"]) == {"orders": ["a", "b"], "tol": 1e-3}
    assert meta["seed"] is None and meta["device"] == "cuda:0"
    assert meta["numpy_version"] == np.__version__
    assert meta["python_version"] == ".".join(map(str, sys.version_info[:3]))
    commit = meta["git_commit"]
    assert commit is None or (len(commit) == 40 and int(commit, 16) >= 0)
    json.dumps(meta)  # every field is JSON-able, so it also fits a --json report


def test_published_files_are_readable_by_pandas(store):
    pd = pytest.importorskip("pandas")
    append_run([{"x": 1, "y": "a"}], cpu_run_meta("report"))
    frame = pd.read_parquet(store)
    assert list(frame["y"]) == ["a"]


def test_a_reused_run_id_does_not_overwrite_a_published_run(store):
    meta = cpu_run_meta("report")
    append_run([{"x": 1}], meta)
    with pytest.raises(ParameterError, match="run_id"):
        append_run([{"x": 2}], meta)
    assert read_store()["x"].to_pylist() == [1]


@pytest.mark.parametrize("damage", ["junk", "empty", "truncated"])
def test_an_unreadable_run_file_is_skipped_with_a_warning_that_names_it(store, damage):
    first = append_run([{"i": 1}], cpu_run_meta("report"), directory=store)
    append_run([{"i": 2}], cpu_run_meta("report"), directory=store)
    data = {"junk": b"not a parquet file", "empty": b"", "truncated": first.read_bytes()[: first.stat().st_size // 2]}
    bad = store / "run-20000101T000000.000000Z-damaged.parquet"
    bad.write_bytes(data[damage])
    with pytest.warns(UnreadableRunWarning, match=bad.name):
        table = read_store(store)
    assert sorted(table["i"].to_pylist()) == [1, 2]


# -------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("rows", "named"),
    [
        ([], "rows"),
        ({"x": 1}, "rows"),
        ([{"x": 1}, 2], r"rows\[1\]"),
        ([{"x": object()}], r"rows\[0\]\['x'\]"),
        ([{"x": 1}, {"x": "one"}], "column 'x'"),
        ([{"x": 2**70}], "column 'x'"),
        ([{"meta_command": "x"}], "meta_command"),
        ([{1: "x"}], r"rows\[0\]"),
    ],
)
def test_bad_rows_raise_parameter_error_naming_them(store, rows, named):
    with pytest.raises(ParameterError, match=named):
        append_run(rows, cpu_run_meta("report"))
    assert not list(store.glob("*"))  # nothing written, not even a temporary


@pytest.mark.parametrize(
    ("metadata", "named"),
    [
        ("report", "metadata"),
        ({"timestamp": "2024-01-01T00:00:00+00:00"}, "run_id"),
        ({"run_id": "../escape", "timestamp": "2024-01-01T00:00:00+00:00"}, "run_id"),
        ({"run_id": "abc"}, "timestamp"),
        ({"run_id": "abc", "timestamp": "yesterday"}, "timestamp"),
    ],
)
def test_bad_metadata_raises_parameter_error_naming_it(store, metadata, named):
    with pytest.raises(ParameterError, match=named):
        append_run([{"x": 1}], metadata)


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"command": ""}, "command"),
        ({"flags": ["--all"]}, "flags"),
        ({"flags": {"f": object()}}, "flags"),
        ({"seed": "7"}, "seed"),
        ({"seed": True}, "seed"),
        ({"device": None}, "device"),
    ],
)
def test_bad_run_metadata_arguments_raise_parameter_error_naming_them(kwargs, named):
    args = {"command": "report", "flags": {}, "seed": 0, "device": "cpu"} | kwargs
    with pytest.raises(ParameterError, match=named):
        run_metadata(**args)


def test_bad_reader_and_cleaner_arguments_raise_parameter_error_naming_them(store):
    with pytest.raises(ParameterError, match="command"):
        read_store(command=3)
    with pytest.raises(ParameterError, match="older_than_s"):
        clean_temporaries(older_than_s=-1)
    with pytest.raises(ParameterError, match="directory"):
        read_store(directory=3)


def test_the_store_never_touches_the_real_home_directory(store):
    assert os.environ["FPA_STORE"] == str(store)
    assert store_dir() == store
