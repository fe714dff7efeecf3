"""Ending fpa ends its job: SIGTERM while the candidate hangs exits 130 and leaves no process of the job
(the worker, the candidate's process, the fork server they came from, what the candidate started) and no temporary
folder.
"""

from __future__ import annotations

import contextlib
import pathlib
import time

import pytest

from ..usercode_runs import CASES


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path.parent / f"{tmp_path.name}-store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FPA_HYPOTHESIS_DB", raising=False)


def test_ending_fpa_ends_its_workers(tmp_path):
    """SIGTERM to ``fpa triage`` while a candidate hangs: exit 130, and no process of the job is left (the worker,
    the candidate process, the fork server they came from, and what the candidate started in a process group of its
    own, as ninja starts a torch extension's compilers: the triage's end once left it running under init), and no
    temporary folder (the solution's, made by the worker, was once left in /tmp by every job ended so)."""
    import os
    import shutil
    import signal
    import subprocess
    import sys

    pair = tmp_path / "runs" / "level1" / "hang" / "compiling"
    pair.mkdir(parents=True)
    shutil.copy(CASES / "problem.py", pair.parent / "problem.py")
    shutil.copy(CASES / "hang_compiling.py", pair / "solution.py")
    for folder in (pair, pair.parent):
        shutil.copy(CASES / "_conv.py", folder / "_conv.py")
    args = ["triage", str(tmp_path / "runs"), "--device", "cpu", "--timeout", "60"]
    temporary = tmp_path / "tmp"  # fpa's temporary folders and the solution's: none may outlive the job
    temporary.mkdir()
    env = {**os.environ, "TMPDIR": str(temporary)}
    fpa = subprocess.Popen([sys.executable, "-m", "fp_analysis", *args, "--no-store"], stderr=subprocess.PIPE, env=env)

    def descendants():
        parents = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            parents[int(pid)] = int(stat.rsplit(")", 1)[1].split()[1])
        found, frontier = set(), {fpa.pid}
        while frontier:
            frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
            found |= frontier
        return found

    def alive(pid):
        try:
            return pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    def compiling():  # the candidate's own process group's process, once it started
        for pid in descendants():
            with contextlib.suppress(OSError):
                if b"time.sleep(600)" in pathlib.Path(f"/proc/{pid}/cmdline").read_bytes():
                    return pid
        return None

    deadline = time.monotonic() + 60
    while compiling() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    started = descendants()
    assert len(started) >= 3 and compiling() in started, "the job's processes never started"
    fpa.send_signal(signal.SIGTERM)
    _, stderr = fpa.communicate(timeout=30)
    assert fpa.returncode == 130 and b"interrupted" in stderr
    deadline = time.monotonic() + 10
    while any(map(alive, started)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(alive, started))
    assert not list(temporary.iterdir())
