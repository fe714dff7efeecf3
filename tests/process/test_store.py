"""The results store against a writer killed mid-write (a child process, SIGKILLed once its temporary file
holds bytes): no partial rows are ever read.
"""

from __future__ import annotations

import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

import fp_analysis
from fp_analysis import store as store_module
from fp_analysis.store import (
    append_run,
    clean_temporaries,
    read_store,
)

from ..results_store import cpu_run_meta
from ..results_store import store as store  # a pytest fixture

PACKAGE_DIR = pathlib.Path(fp_analysis.__file__).resolve().parent


# -------------------------------------------------------------------------------------------- kill test

# The child imports fp_analysis.store without running fp_analysis/__init__ (which imports torch, ~4 s):
# a stub package whose __path__ is the real one makes `fp_analysis.store` and its `.errors` import alone.
_CHILD = r"""
import sys, types
package_dir, directory, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
stub = types.ModuleType("fp_analysis")
stub.__path__ = [package_dir]
sys.modules["fp_analysis"] = stub
from fp_analysis.store import append_run

rows = [{"i": i, "a": f"alpha-{i}-{i * 7919}", "b": f"beta-{i * 31}", "c": f"gamma-{i % 977}-{i}"} for i in range(n)]
append_run(rows, {"run_id": "killed", "timestamp": "2000-01-01T00:00:00+00:00", "command": "report"},
           directory=directory)
"""

# Rows of the child's run on the first attempt; doubled on each retry where the child won the race.
# 200k rows take ~0.1 s to write, bytes reaching the temporary file throughout (measured), against a
# ~0.5 ms polling interval.
_KILL_ROWS = 200_000
_KILL_ATTEMPTS = 4
_KILL_TIMEOUT_S = 60.0

# Last bytes of every complete Parquet file (the footer's magic, Parquet format spec, "File format").
_PARQUET_MAGIC = b"PAR1"


def _start_and_kill_mid_write(directory: pathlib.Path, n: int) -> dict:
    """Start a writer of n rows, SIGKILL it once its temporary file holds bytes; return what was seen."""
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(PACKAGE_DIR), str(directory), str(n)])
    deadline = time.monotonic() + _KILL_TIMEOUT_S
    try:
        while child.poll() is None and time.monotonic() < deadline:
            try:
                started = any(p.stat().st_size > 0 for p in directory.glob(".tmp-*"))
            except FileNotFoundError:  # published between the glob and the stat
                started = False
            if started:
                child.send_signal(signal.SIGKILL)
                break
            time.sleep(0.0005)
    finally:
        if child.poll() is None and time.monotonic() >= deadline:
            child.kill()
        child.wait()
    temps = sorted(directory.glob(".tmp-*"))
    sizes = [p.stat().st_size for p in temps]
    complete = [p.read_bytes()[-4:] == _PARQUET_MAGIC for p in temps]
    return {
        "returncode": child.returncode,
        "published": sorted(p.name for p in directory.glob("run-*killed*")),
        "temps": temps,
        "sizes": sizes,
        "complete": complete,
    }


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")
def test_a_writer_killed_mid_write_leaves_no_partial_rows(store):
    good_rows = [{"i": -k, "a": f"good-{k}"} for k in range(5)]
    append_run(good_rows, cpu_run_meta("report"), directory=store)

    observed = []
    n = _KILL_ROWS
    for _ in range(_KILL_ATTEMPTS):
        seen = _start_and_kill_mid_write(store, n)
        observed.append((n, seen))
        # Mid-write: killed, nothing published, and a temporary holding some bytes but no Parquet footer.
        killed_mid_write = (
            seen["returncode"] == -signal.SIGKILL
            and not seen["published"]
            and len(seen["temps"]) == 1
            and seen["sizes"][0] > 0
            and not seen["complete"][0]
        )
        if killed_mid_write:
            break
        assert seen["returncode"] in (0, -signal.SIGKILL), f"writer failed on its own: {seen}"
        # The child published (or finished writing) before the kill landed: clear up, try a longer write.
        for name in seen["published"]:
            (store / name).unlink()
        clean_temporaries(store, older_than_s=0)
        n *= 2
    else:
        pytest.fail(f"never killed a writer mid-write in {_KILL_ATTEMPTS} attempts: {observed}")

    # The reader needs no lock and sees exactly the good run; the half-written file is invisible to it.
    table = read_store(store)
    assert table.num_rows == len(good_rows), observed
    assert table.select(["i", "a"]).to_pylist() == good_rows
    assert "killed" not in set(table["meta_run_id"].to_pylist())

    # The next write removes the killed writer's temporary (its process is gone, its file a minute old) and
    # keeps a live writer's.
    live = store / f".tmp-{store_module._HOST}-{os.getpid()}-run-live-x.part"
    live.write_bytes(b"a live writer's first bytes")
    minute_ago = time.time() - 61
    for path in [*seen["temps"], live]:
        os.utime(path, (minute_ago, minute_ago))
    append_run(good_rows, cpu_run_meta("report"), directory=store)
    assert not any(t.exists() for t in seen["temps"]) and live.exists()
    assert read_store(store).num_rows == 2 * len(good_rows)
    # A temporary of a writer on another host goes only once it is older than the threshold.
    elsewhere = store / ".tmp-00000000-1-run-elsewhere-x.part"
    elsewhere.write_bytes(b"")
    assert clean_temporaries(store) == []
    assert clean_temporaries(store, older_than_s=0) == sorted([elsewhere, live])
    print(f"\nkilled a writer of {n} rows with {seen['sizes'][0]} bytes written, attempt {len(observed)}")
