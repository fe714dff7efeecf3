"""The fork server: a child forked from it is the fresh interpreter it replaces, and its end is reported.

Each test starts the ``describe`` target (``fp_analysis.run.forkserver_check.describe``: it prints what the
user's code would see of its process) through ``run.children.ChildProcess``, the class every job process is started
by.
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import subprocess
import sys

import pytest

from fp_analysis.errors import Fate, InternalError
from fp_analysis.explain.jobs import explain_files
from fp_analysis.options import ExplainOptions
from fp_analysis.run import forkserver
from fp_analysis.run.children import ChildProcess
from fp_analysis.run.forkserver import ForkedProcess


def _describe(folder: pathlib.Path, name: str, *args: str, env=None) -> tuple[ChildProcess, dict | None]:
    """Start ``describe`` with a pipe's write end passed on; the child and what it printed (None if nothing)."""
    read, write = os.pipe()
    try:
        child = ChildProcess("describe", list(args), folder, name, pass_fds=(write,), env=env)
    finally:
        os.close(read)
        os.close(write)
    child.proc.wait(60)
    stdout = child.output().stdout
    return child, (json.loads(stdout) if stdout.strip() else None)


def test_a_forked_child_sees_what_a_fresh_interpreter_sees(tmp_path, monkeypatch):
    """Same arguments, environment, folder, descriptors, signal dispositions, threads and sys.path both ways."""
    monkeypatch.chdir(tmp_path)
    env = {"FPA_PROBE_VALUE": "x y", "OMP_NUM_THREADS": "1"}
    monkeypatch.setenv("FPA_FORK_SERVER", "0")
    fresh, fresh_seen = _describe(tmp_path, "fresh", "a", "b c", env=env)
    monkeypatch.delenv("FPA_FORK_SERVER")
    forked, forked_seen = _describe(tmp_path, "forked", "a", "b c", env=env)
    assert isinstance(fresh.proc, subprocess.Popen) and isinstance(forked.proc, ForkedProcess)
    for seen in (fresh_seen, forked_seen):
        seen.pop("numpy_draw")
        seen.pop("numba_loaded")  # a fork after the server's warm-up has it: by design (the next test)
        seen.pop("symbolic_shapes_loaded")
        seen["env"].pop("FPA_FORK_SERVER", None)
    # the descriptor numbers depend on what this process had open at each start: compare how many and which kinds
    assert len(fresh_seen.pop("fds")) == len(forked_seen.pop("fds"))
    assert forked_seen == fresh_seen
    assert forked_seen["argv"] == ["-c", "a", "b c"] and forked_seen["cwd"] == str(tmp_path)
    assert forked_seen["env"]["FPA_PROBE_VALUE"] == "x y" and forked_seen["threads"] == 1
    assert forked_seen["own_session"] and forked_seen["stdin_is_devnull"] and not forked_seen["cuda_initialized"]


def test_the_server_warms_up_before_its_second_worker_not_before_its_first(tmp_path, monkeypatch):
    """A single job never waits for the warm-up (numba's twins, what torch._check imports); the jobs after the first
    start with it."""
    monkeypatch.setattr(forkserver, "_server", None)  # a server of this test's own, started by the first request
    monkeypatch.setattr(forkserver, "_server_key", None)
    try:
        before = _describe(tmp_path, "before")[1]
        assert before["numba_loaded"] is False and before["symbolic_shapes_loaded"] is False
        for number in (1, 2):
            worker = ChildProcess("worker", [str(tmp_path)], tmp_path, f"worker{number}")  # no job: it ends at once
            worker.proc.wait(60)
            worker.close()
            after = _describe(tmp_path, f"after{number}")[1]
            assert after["numba_loaded"] is after["symbolic_shapes_loaded"] is (number == 2)
    finally:
        if forkserver._server is not None:
            forkserver._server.close()


def test_a_server_launched_ahead_is_the_one_the_first_child_is_forked_from(tmp_path, monkeypatch):
    """``start_fork_server`` (what ``fpa explain`` calls first) launches the server without waiting for its imports;
    the first child waits for them and is forked from it."""
    from fp_analysis.run.children import start_fork_server

    monkeypatch.setattr(forkserver, "_server", None)
    monkeypatch.setattr(forkserver, "_server_key", None)
    try:
        start_fork_server()
        launched = forkserver._server
        assert launched is not None and not launched._ready  # not waited for
        child, seen = _describe(tmp_path, "first")
        assert isinstance(child.proc, ForkedProcess) and seen is not None
        assert forkserver._server is launched and launched._ready
    finally:
        if forkserver._server is not None:
            forkserver._server.close()


def test_a_server_launched_ahead_and_never_used_ends_with_its_requester(monkeypatch):
    """``fpa explain`` stopping at a bad argument leaves no server importing torch behind it."""
    monkeypatch.setattr(forkserver, "_server", None)
    monkeypatch.setattr(forkserver, "_server_key", None)
    forkserver.prestart(dict(os.environ))
    launched = forkserver._server
    forkserver._end_unused()  # what the exit runs
    assert launched._process.returncode == -signal.SIGKILL  # ended, not left to finish its imports


def test_a_ctrl_c_while_the_server_starts_ends_it_and_the_next_child_starts_a_new_one(tmp_path, monkeypatch):
    """Interrupted is not failed: the interrupt reaches the caller, the half-started server is killed, and the
    process's next child is forked from a new server (not a fresh interpreter for the rest of its life)."""
    import select as select_module

    from fp_analysis.run.children import start_fork_server

    monkeypatch.setattr(forkserver, "_server", None)
    monkeypatch.setattr(forkserver, "_server_key", None)
    monkeypatch.setattr(forkserver, "_failed_key", None)
    start_fork_server()  # under the environment the children will have
    interrupted = forkserver._server

    class Interrupting:
        def select(self, *args):
            monkeypatch.setattr(forkserver, "select", select_module)  # once
            raise KeyboardInterrupt

    monkeypatch.setattr(forkserver, "select", Interrupting())
    try:
        with pytest.raises(KeyboardInterrupt):
            _describe(tmp_path, "interrupted")
        assert interrupted._process.returncode == -signal.SIGKILL and forkserver._failed_key is None
        child, seen = _describe(tmp_path, "next")
        assert isinstance(child.proc, ForkedProcess) and seen is not None and forkserver._server is not interrupted
    finally:
        if forkserver._server is not None:
            forkserver._server.close()


@pytest.mark.parametrize(
    "arguments, launched",
    [(["explain", "--problem", "p.py"], True), (["explain", "--help"], False), (["report", "--help"], False)],
)
def test_the_command_launches_the_server_first_for_explain_only(arguments, launched):
    """In a fresh interpreter, as ``fpa`` starts: the launch comes before the command line (typer) is imported."""
    code = (
        "import json, sys; import fp_analysis.run.children as w, fp_analysis.run.forkserver as f; seen = []; "
        "w.start_fork_server = lambda: seen.append(sorted(m for m in sys.modules if m == 'typer' "
        "or m.startswith('fp_analysis.cli.') and m != 'fp_analysis.cli.entry')); "
        "f.atexit.register(lambda: print(json.dumps(seen))); "
        "sys.argv = ['fpa', *sys.argv[1:]]; from fp_analysis.cli.entry import main; main()"
    )
    done = subprocess.run([sys.executable, "-c", code, *arguments], capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout.strip().splitlines()[-1]) == ([[]] if launched else []), done.stderr[-2000:]


def test_a_server_that_cannot_start_leaves_fresh_interpreters_and_is_not_tried_again(tmp_path, monkeypatch):
    """Its imports failing (here: it says so at once) is no job's failure: every child starts as a fresh
    interpreter, and no second server is launched under the same environment."""
    from fp_analysis.run.children import _child_env as child_env

    failing = (
        "import json, socket, sys; "
        "socket.socket(fileno=int(sys.argv[1])).send(json.dumps({'error': 'ImportError: no torch'}).encode())"
    )
    monkeypatch.setattr(forkserver, "_SERVER_COMMAND", failing)
    monkeypatch.setattr(forkserver, "_server", None)
    monkeypatch.setattr(forkserver, "_server_key", None)
    monkeypatch.setattr(forkserver, "_failed_key", None)
    launched = []
    launch = forkserver.ForkServer.launch.__func__
    monkeypatch.setattr(
        forkserver.ForkServer, "launch", classmethod(lambda cls, env: launched.append(1) or launch(cls, env))
    )
    child, seen = _describe(tmp_path, "first")
    assert isinstance(child.proc, subprocess.Popen) and seen is not None and not seen["numba_loaded"]
    again = forkserver.ChildSpec("describe", [], 1, 2, (), child_env(None))  # the next request: no server again
    assert forkserver.spawn(again) is None
    assert launched == [1] and forkserver._server is None and forkserver._failed_key is not None


def test_a_forked_child_holds_exactly_the_descriptors_passed_to_it(tmp_path):
    """Stdio and the passed descriptors at the numbers the requester chose; nothing of the server's."""
    read, write = os.pipe()
    child = ChildProcess("describe", [], tmp_path, "fds", pass_fds=(write,))
    os.close(write)
    child.proc.wait(60)
    os.close(read)
    seen = json.loads(child.output().stdout)
    # 0-2, the pipe the child watches for its parent's end (``child_setup``), and the one passed
    assert len(seen["fds"]) == 5 and write in seen["fds"], seen["fds"]


def test_forked_children_do_not_share_numpys_global_stream(tmp_path):
    draws = {_describe(tmp_path, f"draw{i}")[1]["numpy_draw"] for i in range(3)}
    assert len(draws) == 3


@pytest.mark.parametrize(
    "ending, fate, how",
    [("exit=3", Fate.EXITED, "exited with status 3"), ("signal=SIGSEGV", Fate.KILLED, "was killed by SIGSEGV")],
)
def test_how_a_forked_child_ended_is_reported(tmp_path, ending, fate, how):
    # a test before may have killed the server: the first child after that is a fresh interpreter, while a new
    # server starts (test_a_server_that_died_is_replaced_...), so this one asks for a child after that first
    _describe(tmp_path, "after a server that may have died")
    child, _ = _describe(tmp_path, "ending", ending)
    assert isinstance(child.proc, ForkedProcess)
    assert child.ending()[:2] == (fate, how)
    child.close()


def test_a_request_that_is_not_ours_does_not_stop_the_server(tmp_path):
    """User code in a worker can write to its connection: the server drops what it cannot read and goes on."""
    _describe(tmp_path, "first")
    server = forkserver._server
    assert server is not None
    junk_read, junk_write = os.pipe()
    a_request = {"target": "describe", "args": [], "env": {}, "cwd": "/", "fds": []}
    for message in (
        b"not json",
        b"[" * 200_000,  # nested too deep for the JSON reader: RecursionError
        json.dumps({"target": "os.system", "args": []}).encode(),
        json.dumps(a_request).encode(),  # with a pipe where the status socket belongs
    ):
        socket.send_fds(server._connection, [message], [junk_read, junk_write, junk_read])
    os.close(junk_read)
    os.close(junk_write)
    child, seen = _describe(tmp_path, "after")
    assert forkserver._server is server and isinstance(child.proc, ForkedProcess) and seen is not None


def test_a_server_that_died_is_replaced_and_a_child_it_leaves_says_its_end_is_unknown(tmp_path):
    _describe(tmp_path, "first")
    server = forkserver._server
    sleeper = ChildProcess("describe", ["sleep=30"], tmp_path, "sleeper")
    assert isinstance(sleeper.proc, ForkedProcess)
    server._process.kill()
    server._process.wait()
    with pytest.raises(InternalError, match="fork server ended before the sleeper process"):
        sleeper.ending()
    sleeper.close()
    # the next start finds the server gone and starts the child fresh; the one after gets a new server
    fallback, seen = _describe(tmp_path, "fallback")
    child, seen_again = _describe(tmp_path, "new_server")
    assert isinstance(fallback.proc, subprocess.Popen) and seen is not None and seen_again is not None
    assert isinstance(child.proc, ForkedProcess) and forkserver._server is not server


def test_a_job_whose_code_kills_the_fork_server_still_ends(tmp_path):
    """The problem's import kills its parent, the fork server: the worker's end is then lost, but the job ends
    with its result (not waiting for an end nobody will report), and the candidate is started fresh."""
    cases = pathlib.Path(__file__).parent.parent / "usercode_cases"
    problem = tmp_path / "problem.py"
    problem.write_text(
        "import os, pathlib, signal\n"
        "if b'forkserver' in pathlib.Path(f'/proc/{os.getppid()}/cmdline').read_bytes():  # never the test itself\n"
        "    os.kill(os.getppid(), signal.SIGKILL)\n" + (cases / "problem_relu.py").read_text()
    )
    for name in ("relu_same.py", "_conv.py"):
        (tmp_path / name).write_text((cases / name).read_text())
    _describe(tmp_path, "start_a_server")
    server = forkserver._server
    explanation = explain_files(problem, tmp_path / "relu_same.py", ExplainOptions("cpu", trials=1, timeout=60))
    assert explanation.verdict == "identical"
    assert server._process.wait(10) == -9  # it was the server that died


def test_the_children_a_gone_client_asked_for_are_ended_even_stopped():
    """A solution's process is stopped (SIGSTOP) while fpa builds for it: if its worker dies then, its watch on the
    worker's pipe cannot run, and it waited for ever. The server ends what a client asked for once its connection
    closes; SIGKILL ends a stopped process."""
    from fp_analysis.run.forkserver_loop import _end_orphaned

    stopped = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        os.kill(stopped.pid, signal.SIGSTOP)
        gone, alive = socket.socketpair()
        owners = {stopped.pid: gone, other.pid: alive}
        _end_orphaned(gone, owners, {stopped.pid: None, other.pid: None})
        assert stopped.wait(10) == -signal.SIGKILL
        assert other.poll() is None and owners == {other.pid: alive}  # another client's child is left alone
    finally:
        for process in (stopped, other):
            process.kill()
            process.wait()
        gone.close()
        alive.close()
