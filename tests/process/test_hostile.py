"""A hostile solution cannot reach the verdict: each way a generated solution can attack the grader is that
solution's failure (exit 3, named), never a verdict — and never the end of a run.

The solutions are in ``usercode_cases`` (each docstring says what it tries). Every case runs the real command line
or the library call a grader uses, and asserts the exit status, the fate and message, and that the attack had no
effect: no code ran in the worker, no file stayed edited, no pair was judged against an edit.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from fp_analysis.errors import ExitCode
from fp_analysis.records import loads_strict

from ..cli_runs import explain_args, fpa
from ..hostile_pairs import CASES, ZEROS, pair_folder

RIGHT = """
from _conv import Conv


class ModelNew(Conv):
    pass
"""
WRITES_INPUT = """
from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        out = super().forward(x)
        x.zero_()
        return out
"""


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


@pytest.fixture
def unsandboxed(monkeypatch):
    """The solution's process without its Landlock sandbox (as on a kernel without Landlock): the checks beneath it
    (snapshots, the journal, the signed result) must hold by themselves."""
    monkeypatch.setenv("FPA_SANDBOX", "0")


def _landlock() -> int:
    """The kernel's Landlock ABI (0: none)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return max(0, libc.syscall(444, None, ctypes.c_size_t(0), 1))


def _explain(problem: pathlib.Path, solution: pathlib.Path, *extra: str):
    """Exit code, strict-JSON stdout and stderr of ``fpa explain --json``; never a raw traceback of ours."""
    run = fpa(*explain_args(problem, solution, "--trials", "2", "--json", *extra))
    assert "Traceback (most recent call last)" not in run.stderr, run.stderr
    assert run.data is not None, run.stdout  # strict JSON, whatever happened
    return run.code, run.data, run.stderr


@pytest.mark.parametrize(
    ("solution", "fate", "message"),
    [
        (
            "forged_pickle",
            "malformed_reply",
            r"forward: the solution's process sent a malformed reply: it does not start",
        ),
        ("out_of_turn", "malformed_reply", r"sent a reply out of turn \(to request 1000000 where \d+ was asked\)"),
        (
            "oversized",
            "malformed_reply",
            r"sent a malformed reply: its tensor 0 has dimensions of \d+ elements, over the \d+ allowed",
        ),
        ("forks", "forked", r"ModelNew\.forward: the solution's process forked \(os\.fork\)"),
        ("closes_channel", "closed_channel", r"ModelNew\.forward closed the descriptors fpa talks to the solution's"),
        ("forges_result", "modified_files", r"the job's result was not the one fpa's worker wrote"),
    ],
)
def test_a_solution_that_tampers_with_fpas_channel_or_folder_fails_with_exit_3(solution, fate, message, tmp_path,
                                                                               monkeypatch, unsandboxed):  # fmt: skip
    canary = tmp_path / "ran-in-the-worker"
    monkeypatch.setenv("FPA_TEST_CANARY", str(canary))
    code, data, stderr = _explain(CASES / "problem.py", CASES / f"{solution}.py", "--timeout", "30")
    if solution == "forges_result" and "error" not in data:
        # the worker was not its sibling this time (its process came from the worker, not the fork server), so it
        # lived and wrote its own result over the forged one: the forged "identical" must not be the verdict
        assert code == ExitCode.NOT_EXPLAINED and data["verdict"] == "bug", data
        return
    error = data["error"]
    assert code == ExitCode.USER_CODE and error["side"] == "solution" and error["fate"] == fate, data
    assert re.search(message, error["message"]), error["message"]
    assert stderr.startswith("error: the solution's code failed: ")
    assert not canary.exists()  # nothing the solution's process sent was run


def test_where_a_solution_failed_and_how_to_reproduce_it_are_fpas_words_not_its_reply(unsandboxed):
    """A failure record the solution's process forged (an adversarial hunt): it named the problem's Model.forward as
    the code that failed and gave a "reproduce" command of its own (curl … | sh), which fpa printed."""
    code, data, stderr = _explain(CASES / "problem.py", CASES / "forges_failure.py")
    error = data["error"]
    assert code == ExitCode.USER_CODE and error["side"] == "solution" and error["where"] == "ModelNew.forward", data
    assert error["message"].startswith("ModelNew.forward: ") and "curl" not in json.dumps(data) + stderr


@pytest.mark.slow
def test_a_solution_builds_its_extension_inside_the_sandbox(tmp_path):
    """A load_inline build (ninja, the C++ compiler, the linker) runs inside the solution's sandbox: it writes only its
    extensions folder and changes no file's mode (the seccomp filter refuses chmod; the tools do not need it). A build
    folder of its own is what fpa's store of builds leaves to the solution (tests/process/test_extension_store.py)."""
    folder = pair_folder(tmp_path, {"solution.py": (
        "import os\nfrom torch.utils.cpp_extension import load_inline\n"
        "ext = load_inline('sandboxed', cpp_sources='int twice(int a) { return 2 * a; }', functions=['twice'],\n"
        "                  build_directory=os.environ['TORCH_EXTENSIONS_DIR'])\n"
        "assert ext.twice(21) == 42\n" + RIGHT)})  # fmt: skip
    code, data, _ = _explain(folder / "problem.py", folder / "solution.py", "--timeout", "300")
    assert code == 0 and data["verdict"] == "identical", data


def test_a_torch_extensions_dir_in_fpas_environment_is_not_the_solutions_build_folder(tmp_path, monkeypatch):
    """Every solution explained under one ``TORCH_EXTENSIONS_DIR`` would build in one folder, where one could plant a
    library another loads, or hold its lock: each builds in the folder its own files name, which holds nothing else."""
    shared = tmp_path / "shared_extensions"
    monkeypatch.setenv("TORCH_EXTENSIONS_DIR", str(shared))
    folder = pair_folder(tmp_path, {"solution.py": 'import os\nprint("builds in", os.environ["TORCH_EXTENSIONS_DIR"])\n'
                                                    + RIGHT})  # fmt: skip
    code, data, _ = _explain(folder / "problem.py", folder / "solution.py")
    printed = data["worker"]["solution"]["stdout"]
    assert code == 0 and "builds in " in printed and str(shared) not in printed, printed
    assert not shared.exists()


@pytest.mark.skipif(_landlock() < 1, reason="the kernel has no Landlock: the checks beneath the sandbox are tested")
def test_the_sandbox_lets_the_solution_write_only_what_a_build_needs_and_signal_nothing_of_fpas(tmp_path, monkeypatch):
    """Under its Landlock sandbox the solution's process may write its temporary folder and the extensions' build
    folder (where fpa's own kernels are built for it too), but not the problem, fpa's installation, the results store,
    fpa's journal, torch's kernel cache (which the worker reads) or fpa's kernel cache; nor open an IPv4 or IPv6
    socket, TCP or MPTCP (a local Ray cluster's tasks would run its code outside the sandbox); and, with Landlock ABI
    6, not signal fpa's processes. Nor may it set resource limits on them, or change any file's mode or owner (seccomp),
    the problem's or its own. What it tried is printed; the output is right, so the pair is identical."""
    import socket

    import fp_analysis

    listener = socket.create_server(("127.0.0.1", 0))  # as a Ray head's port on this machine
    port = listener.getsockname()[1]

    folder = pair_folder(tmp_path, {})
    cache = pathlib.Path(os.environ["XDG_CACHE_HOME"])
    monkeypatch.setenv("FPA_KERNEL_CACHE", str(cache / "fp_analysis" / "kernels"))
    targets = {"problem": folder / "problem.py", "installation": pathlib.Path(fp_analysis.__file__).parent / "_probe",
               "store": pathlib.Path(os.environ["FPA_STORE"]) / "run-forged.parquet",
               "journal": cache / "fp_analysis" / "journal" / "forged.json",
               "torch's kernel cache": cache / "torch" / "kernels" / "planted.cubin",
               "fpa's kernel cache": cache / "fp_analysis" / "kernels" / "planted.cubin"}  # fmt: skip
    for target in targets.values():
        target.parent.mkdir(parents=True, exist_ok=True)
    probe = f"""
import os, signal, tempfile
from _conv import Conv

for name, path in {dict((k, str(v)) for k, v in targets.items())!r}.items():
    try:
        open(path, "a").close()
        print("wrote", name)
    except PermissionError:
        print("refused", name)
from fpa_kernels.build import cache_dir

for name, folder in (("tmp", tempfile.gettempdir()), ("extensions", os.environ["TORCH_EXTENSIONS_DIR"]),
                     ("its fpa kernels", str(cache_dir()))):
    with open(os.path.join(folder, "probe"), "w") as out:
        out.write("allowed")
    print("wrote", name)
try:
    os.kill(os.getppid(), 0)  # the fork server
    print("signalled the fork server")
except PermissionError:
    print("refused a signal")
import resource
try:
    resource.prlimit(os.getppid(), resource.RLIMIT_CPU, (1, 1))
    print("limited the fork server")
except PermissionError:
    print("refused a limit")
own = os.path.join(tempfile.gettempdir(), "probe")
for name, path in (("the problem", {str(folder / "problem.py")!r}), ("its own file", own)):
    try:
        os.chmod(path, 0o600)
        print("changed the mode of", name)
    except PermissionError:
        print("refused the mode of", name)
import socket
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=5).close()
    print("connected over TCP")
except PermissionError:
    print("refused TCP")
try:  # MPTCP, which Landlock's TCP rule does not cover, falls back to TCP against a TCP server
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262) as mptcp:
        mptcp.settimeout(5)
        mptcp.connect(("127.0.0.1", {port}))
    print("connected over MPTCP")
except PermissionError:
    print("refused MPTCP")
except OSError:
    print("no MPTCP here")


class ModelNew(Conv):
    pass
"""
    (folder / "solution.py").write_text(probe)
    with listener:
        code, data, _ = _explain(folder / "problem.py", folder / "solution.py")
    printed = data["worker"]["solution"]["stdout"]
    assert code == 0 and data["verdict"] == "identical", data
    assert all(f"refused {name}" in printed for name in targets), printed
    assert not targets["installation"].exists() and not targets["store"].exists()
    assert "wrote tmp" in printed and "wrote extensions" in printed and "wrote its fpa kernels" in printed
    assert ("refused a signal" in printed) == (_landlock() >= 6), printed
    assert "refused a limit" in printed, printed
    assert "refused the mode of the problem" in printed and "refused the mode of its own file" in printed, printed
    assert "refused TCP" in printed and "connected over" not in printed, printed  # seccomp refuses IPv4/IPv6 sockets


def test_a_process_the_solution_leaves_in_a_session_of_its_own_does_not_outlive_its_job():
    """The fork server adopts the orphans of its children's descendants and ends them: a daemon cannot act on later
    jobs (edit their files, signal their processes)."""
    code, data, _ = _explain(CASES / "problem.py", CASES / "leaves_a_daemon.py")
    assert code == 0 and data["verdict"] == "identical"
    pid = int(re.search(r"daemon (\d+)", data["worker"]["solution"]["stdout"]).group(1))
    status = pathlib.Path(f"/proc/{pid}/stat")
    deadline = time.monotonic() + 10
    while status.exists() and status.read_text().rsplit(")", 1)[1].split()[0] != "Z" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not status.exists() or status.read_text().rsplit(")", 1)[1].split()[0] == "Z", "the daemon still runs"


def test_what_forward_returns_is_read_as_the_users_code():
    code, data, _ = _explain(CASES / "problem.py", CASES / "returns_unreadable.py")
    error = data["error"]
    assert code == 3 and error["fate"] == "bad_output", data
    assert error["message"] == "ModelNew.forward returned something that cannot be read (SystemExit)"


def test_a_solution_that_stops_fpas_processes_does_not_stop_the_run(unsandboxed):
    """Where Landlock does not scope signals, a solution may SIGSTOP the fork server and the worker: they are
    resumed, and the job ends as it would have."""
    code, data, _ = _explain(CASES / "problem.py", CASES / "stops_fpa.py", "--timeout", "60")
    assert code == 0 and data["verdict"] == "identical", data


def test_a_candidate_wrong_on_some_calls_is_analysed_on_a_call_where_it_errs():
    code, data, _ = _explain(CASES / "problem.py", CASES / "errs_on_some_calls.py")
    assert code == 1 and data["verdict"] == "bug" and data["context"]["analysed_trial"] == 0, data


def test_every_trial_is_judged_so_a_smaller_error_than_another_calls_arithmetic_is_not_hidden():
    """The worst trial (TF32 operands: explained) is not the one that errs; every other trial is held against the
    re-creations that explained it, and the one they do not re-create gives the verdict. Run again on the worst
    trial's inputs, the candidate (whose arithmetic follows its call count) returns another output: nondeterministic
    too."""
    code, data, _ = _explain(CASES / "problem.py", CASES / "tf32_then_smaller_bug.py")
    judged = data["context"]["judged"]
    assert code == 1 and data["verdict"] == "nondeterministic + bug", data
    assert judged["trials"] == [0, 1] and judged["not_explained"] == 1 and data["context"]["analysed_trial"] == 1


@pytest.mark.long
def test_a_small_bug_in_one_batch_item_of_a_large_output_is_the_item_analysed(tmp_path):
    """A large output is analysed one batch item at a time: the item where the candidate departs furthest, so a bug
    below the tolerance in one item, beside equal items, is found (the check passes: a false pass), not hidden."""
    problem = (CASES / "problem.py").read_text().replace("torch.rand(2, 4, 12, 14)", "torch.rand(3, 4, 512, 400)")
    folder = pair_folder(tmp_path, {"solution.py": RIGHT.replace("    pass", (
        "    def forward(self, x):\n"
        "        out = super().forward(x)\n"
        "        out[1, 3, 100:110, 100:110] += 5e-5  # below the tolerance, in item 1 only\n"
        "        return out\n"))})  # fmt: skip
    (folder / "problem.py").write_text(problem)
    code, data, _ = _explain(folder / "problem.py", folder / "solution.py", "--trials", "1")
    assert code == 1 and data["verdict"] == "bug" and data["mismatch"]["failed_trials"] == 0, data
    assert data["context"]["analysed_batch_items"] == {"items": [1], "of": 3}


@pytest.mark.long
def test_a_solution_that_edits_the_problem_fails_and_no_pair_is_judged_against_the_edit(tmp_path, unsandboxed):
    """In a triage the edit is undone at once; the pairs after it are judged against the problem as it was read, and
    stored; the editing pair is not stored, so a resume runs it (and only it) again, with the same finding."""
    from fp_analysis.options import ExplainOptions
    from fp_analysis.store import read_store
    from fp_analysis.triage.discovery import discover
    from fp_analysis.triage.pairs import triage
    from fp_analysis.triage.pool import Pool

    folder = pair_folder(tmp_path / "runs", {"a_edits.py": (CASES / "edits_problem.py").read_text(),
                                             "b_zeros.py": ZEROS, "c_right.py": RIGHT,
                                             "d_writes_input.py": WRITES_INPUT})  # fmt: skip
    original = (folder / "problem.py").read_bytes()
    options, pool = ExplainOptions(device="cpu", trials=1, timeout=30), Pool(workers=1)
    first = triage(discover(tmp_path / "runs"), options, pool, store_dir=tmp_path / "store")
    rows = {pathlib.Path(row["pair_id"]).name: row for row in first["pairs"]}
    assert rows["a_edits"]["verdict"] == "user_code_failed" and rows["a_edits"]["fate"] == "modified_files"
    assert "files the job was given changed while it ran" in rows["a_edits"]["error"]
    assert "put them back" in rows["a_edits"]["error"]
    assert rows["b_zeros"]["verdict"] == "bug" and rows["c_right"]["verdict"] == "identical"  # the original problem
    assert rows["d_writes_input"]["verdict"] == "identical"  # on its own copy of the inputs, and named:
    assert "ModelNew.forward writes into its input 0" in rows["d_writes_input"]["notes"]
    assert (folder / "problem.py").read_bytes() == original
    stored = sorted(pathlib.Path(p).name for p in read_store(tmp_path / "store")["pair_id"].to_pylist())
    assert stored == ["b_zeros", "c_right", "d_writes_input"]
    again = triage(discover(tmp_path / "runs"), options, pool, store_dir=tmp_path / "store")
    assert (again["ran"], again["reused"]) == (1, 3)
    assert [row["verdict"] for row in again["pairs"]] == ["user_code_failed", "bug", "identical", "identical"]
    assert (folder / "problem.py").read_bytes() == original


def test_fuzz_tries_the_problems_own_configuration():
    fuzz_cases = pathlib.Path(__file__).parent.parent / "fuzz_cases"
    run = fpa("fuzz", "--problem", fuzz_cases / "conv2d_problem.py", "--solution", fuzz_cases / "wrong_at_own_shape.py",
              "--device", "cpu", "--max-examples", "5", "--json")  # fmt: skip
    assert run.code == 1 and run.data["failures"][0]["config"]["input_shapes"] == [[1, 4, 9, 9]], run.stdout


def test_explain_and_fuzz_of_a_solution_that_edits_the_problem_exit_3_and_leave_it_as_it_was(tmp_path, unsandboxed):
    folder = pair_folder(tmp_path, {"solution.py": (CASES / "edits_problem.py").read_text()})
    original = (folder / "problem.py").read_bytes()
    code, data, _ = _explain(folder / "problem.py", folder / "solution.py")
    assert (
        code == 3
        and data["error"]["fate"] == "modified_files"
        and data["error"]["files"] == [str(folder / "problem.py")]
    )
    assert (folder / "problem.py").read_bytes() == original
    fuzz = fpa("fuzz", "--problem", folder / "problem.py", "--solution", folder / "solution.py", "--device", "cpu",
               "--max-examples", "2", "--json")  # fmt: skip
    assert fuzz.code == 3 and fuzz.data["error"]["fate"] == "modified_files", fuzz.stdout
    assert (folder / "problem.py").read_bytes() == original


def test_an_edit_left_by_a_job_that_was_killed_is_refused_until_put_back(tmp_path):
    """A solution that edits the problem and then SIGKILLs fpa leaves the edit; the journal the job left says so, and
    the next run given that file refuses it (exit 2) until the file is put back, naming the copy to put back."""
    from fp_analysis.run.snapshot import Given, Journal

    folder = pair_folder(tmp_path, {"solution.py": RIGHT})
    original = (folder / "problem.py").read_bytes()
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    journal = Journal(Given.take(folder / "problem.py", folder / "solution.py")).__enter__()
    record = json.loads(journal.path.read_text())
    journal.path.write_text(json.dumps({**record, "pid": ended.pid}))  # as a job killed mid-run leaves it
    (folder / "problem.py").write_bytes(original.replace(b"return self.conv(x)", b"return 0 * self.conv(x)"))
    code, data, _ = _explain(folder / "problem.py", folder / "solution.py")
    assert code == ExitCode.USAGE and str(folder / "problem.py") in data["error"]["message"], data
    copy = re.search(r"as it was read: (\S+);", data["error"]["message"]).group(1)
    assert pathlib.Path(copy).read_bytes() == original
    shutil.copy(copy, folder / "problem.py")
    code, data, _ = _explain(folder / "problem.py", folder / "solution.py")
    assert (
        code == 0 and data["verdict"] == "identical" and not journal.path.exists() and not pathlib.Path(copy).exists()
    )


def test_text_utf8_cannot_encode_is_printed_parsed_and_stored_safely(tmp_path):
    """A message with lone surrogates, a NUL and an escape, from a solution whose file and folder names are not
    UTF-8: explain's --json parses and text mode prints; a triage stores the row and shows the names."""
    from fp_analysis.options import ExplainOptions
    from fp_analysis.store import read_store
    from fp_analysis.triage.discovery import discover
    from fp_analysis.triage.pairs import triage
    from fp_analysis.triage.pool import Pool

    root = pathlib.Path(os.fsdecode(bytes(tmp_path) + b"/runs-\xff"))
    folder = pair_folder(root, {})
    solution = pathlib.Path(os.fsdecode(bytes(folder) + b"/s\xfe\xff.py"))
    solution.write_text((CASES / "raises_surrogates.py").read_text())
    code, data, _ = _explain(folder / "problem.py", solution)
    message = data["error"]["message"]
    assert code == 3 and "\\udcff" in message and "\\ud800" in message and "s\\xfe\\xff.py" in data["error"]["at"]
    text = fpa(*explain_args(folder / "problem.py", solution, "--trials", "1", "--no-store"))
    assert text.code == 3 and "\\ud800" in text.stderr and "\x1b" not in text.stderr
    shown = fpa("triage", root, "--device", "cpu", "--trials", "1", "--no-store")
    assert shown.code == 0 and "\x1b" not in shown.stdout and "s\\xfe\\xff" in shown.stdout, shown.stdout
    options = ExplainOptions(device="cpu", trials=1, timeout=30)
    result = triage(discover(root), options, Pool(workers=1), store_dir=tmp_path / "store")
    (row,) = result["pairs"]
    assert row["verdict"] == "user_code_failed" and row["pair_id"] == "conv/s\\xfe\\xff" and "\\udcff" in row["error"]
    assert result["not_stored"] == [] and read_store(tmp_path / "store")["pair_id"].to_pylist() == ["conv/s\\xfe\\xff"]


def test_inputs_either_side_writes_into_are_named_and_reach_neither_the_other_side_nor_the_analysis():
    code, data, _ = _explain(CASES / "problem_writes_input.py", CASES / "writes_input.py")
    assert code == 0 and data["verdict"] == "identical", data  # each side ran on get_inputs() as made
    notes = " ".join(data["notes"])
    assert "Model.forward writes into its input 0" in notes and "ModelNew.forward writes into its input 0" in notes
    assert all(trial["inputs_written"] == {"reference": [0], "candidate": [0]} for trial in data["trials"])


def test_the_solutions_process_cannot_open_the_memory_or_descriptors_of_fpas_processes():
    """fpa's processes are not dumpable and the solution's holds no CAP_SYS_PTRACE (``fp_analysis.run.hardening``):
    their memory and descriptors are out of its reach; the same probe without the guards opens both."""
    hold = (
        "import time; from fp_analysis.run.hardening import not_dumpable; {}print('ready', flush=True); time.sleep(60)"
    )
    probe = (
        "import sys; from fp_analysis.run.hardening import drop_privileges\n"
        "if sys.argv[2] == 'guarded': drop_privileges()\n"
        "for name in ('mem', 'fd/1'):\n"
        "    try:\n        open(f'/proc/{sys.argv[1]}/{name}', 'rb'); print('opened', name)\n"
        "    except PermissionError:\n        print('refused', name)\n"
    )
    outcomes = {}
    for guarded in ("guarded", "plain"):
        code = hold.format("not_dumpable(); " if guarded == "guarded" else "")
        target = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        try:
            assert target.stdout.readline().strip() == "ready"
            seen = subprocess.run(
                [sys.executable, "-c", probe, str(target.pid), guarded], capture_output=True, text=True
            )
            outcomes[guarded] = seen.stdout.split()
        finally:
            target.kill()
            target.wait()
    assert outcomes["guarded"] == ["refused", "mem", "refused", "fd/1"], outcomes
    assert outcomes["plain"] == ["opened", "mem", "opened", "fd/1"], outcomes


def test_an_interrupted_job_puts_back_what_the_solution_edited(tmp_path, unsandboxed):
    """SIGTERM while the solution runs (after it edited the problem): exit 130, and the problem as it was read."""
    source = (
        (CASES / "edits_problem.py")
        .read_text()
        .replace("class ModelNew", "import time\ntime.sleep(30)\n\n\nclass ModelNew")
    )
    folder = pair_folder(tmp_path, {"solution.py": source})
    original = (folder / "problem.py").read_bytes()
    command = [sys.executable, "-m", "fp_analysis", "explain", "--problem", str(folder / "problem.py"),
               "--solution", str(folder / "solution.py"), "--device", "cpu", "--no-store"]  # fmt: skip
    fpa_process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while (folder / "problem.py").read_bytes() == original and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (folder / "problem.py").read_bytes() != original, "the solution never edited the problem"
    fpa_process.send_signal(signal.SIGTERM)
    fpa_process.communicate(timeout=60)
    assert fpa_process.returncode == 130 and (folder / "problem.py").read_bytes() == original


@pytest.mark.long
@pytest.mark.parametrize(
    "moment",
    [pytest.param("after the first pair is stored", marks=pytest.mark.slow), "0.1 s after the last pair is stored"],
)
def test_sigterm_at_any_moment_of_a_triage_ends_it_with_130_or_its_result(tmp_path, moment):
    """Never death by the signal: 130 with an error record while pairs remain, or the whole result once all are
    stored; --json is one strict JSON document either way, and what was stored stays readable."""
    from fp_analysis.store import read_store

    pair_folder(tmp_path / "runs", {"a_right.py": RIGHT, "b_zeros.py": ZEROS})
    store = tmp_path / "store"
    command = [sys.executable, "-m", "fp_analysis", "triage", str(tmp_path / "runs"), "--device", "cpu",
               "--workers", "1", "--trials", "1", "--json"]  # fmt: skip
    fpa_process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env={**os.environ, "FPA_STORE": str(store)})  # fmt: skip
    wanted = 1 if moment.startswith("after the first") else 2
    deadline = time.monotonic() + 120
    while len(list(store.glob("run-*.parquet"))) < wanted and time.monotonic() < deadline:
        time.sleep(0.02)
    assert fpa_process.poll() is None or wanted == 2, "the triage ended before the signal"
    time.sleep(0.1 if wanted == 2 else 0.0)
    fpa_process.send_signal(signal.SIGTERM)
    stdout, stderr = fpa_process.communicate(timeout=60)
    assert fpa_process.returncode in (0, 130), (fpa_process.returncode, stderr)
    data = loads_strict(stdout.decode())
    assert data is not None, stdout
    assert ("error" in data) == (fpa_process.returncode == 130)
    assert b"Traceback" not in stderr
    assert len(read_store(store)) >= wanted


def test_a_reply_of_the_right_form_cannot_come_from_a_copy_of_the_process(tmp_path):
    """The worker takes a reply only from the process it started: one whose header names another pid is refused."""
    from fp_analysis.run.candidate import CandidateProcess

    source = (
        "import os, socket, sys\nimport torch\nfrom torch import nn\nfrom fp_analysis.run import wire\n\n"
        "class ModelNew(nn.Module):\n    def forward(self, x):\n"
        "        channel = socket.socket(fileno=os.dup(int(sys.argv[-1])))\n"
        "        pid = os.fork()\n"
        "        if pid == 0:  # a copy answers with its own pid, and the original says nothing\n"
        "            wire.send(channel, 3, {'output': x, 'device': 'cpu', 'mutated': []}); os._exit(0)\n"
        "        os.waitpid(pid, 0); os._exit(0)\n"
    )
    (tmp_path / "solution.py").write_text(source)
    import torch

    with CandidateProcess(str(tmp_path / "solution.py"), tmp_path, timeout=30) as candidate:
        candidate.build([], {}, 0, "cpu", where="ModelNew()")
        with pytest.raises(Exception, match=r"forked: it sent a reply from another process \(pid \d+\)") as caught:
            candidate.forward([torch.rand(3)], like=torch.rand(3))
        assert caught.value.fate.value == "forked"
    assert json.dumps(caught.value.to_dict())  # a record like any failure


@pytest.mark.parametrize("sandboxed", [True, False])
def test_a_solution_that_changes_a_given_files_mode_fails_and_the_mode_is_kept(tmp_path, monkeypatch, sandboxed):
    """A solution that chmods the problem (to 000, unreadable for a user who is not root) fails, exit 3: in its
    sandbox the call is refused (its import raises PermissionError); without it (``FPA_SANDBOX=0``, as on a kernel
    without seccomp or Landlock) the change to the files it was given is found and the mode put back."""
    if not sandboxed:
        monkeypatch.setenv("FPA_SANDBOX", "0")
    chmods = (
        "import os\n\nfrom _conv import Conv\n\n"
        "os.chmod(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'problem.py'), 0o000)\n\n\n"
        "class ModelNew(Conv):\n    pass\n"
    )
    folder = pair_folder(tmp_path, {"solution.py": chmods})
    (folder / "problem.py").chmod(0o640)
    code, data, _ = _explain(folder / "problem.py", folder / "solution.py")
    if sandboxed:
        assert code == 3 and data["error"]["fate"] == "raised" and "PermissionError" in data["error"]["message"], data
    else:
        assert code == 3 and data["error"]["fate"] == "modified_files", data
        assert data["error"]["files"] == [str(folder / "problem.py")]
    assert (folder / "problem.py").stat().st_mode & 0o777 == 0o640
