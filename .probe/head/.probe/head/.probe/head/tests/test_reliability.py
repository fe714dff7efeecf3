"""The user's code runs apart: exits, hangs, crashes, output and leaked modules are findings, never our crash.

Every case runs the real command line (in-process through typer's runner; the user's files in the
worker process it starts) and asserts the exit code, the one-line message, that no raw traceback is
printed, and that ``--json`` parses as strict JSON.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import re
import time

import numpy as np
import pytest

from fp_analysis import flush_subnormals, round_to, ulp
from fp_analysis.errors import ExitCode

from .cli_runs import explain_args, fpa

CASES = pathlib.Path(__file__).parent / "usercode_cases"
FUZZ = pathlib.Path(__file__).parent / "fuzz_cases"


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path.parent / f"{tmp_path.name}-store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FPA_HYPOTHESIS_DB", raising=False)


def _run(*args: str):
    """Exit code, parsed --json stdout, stderr of one command; never a raw traceback on stderr."""
    run = fpa(*args, "--json")
    assert "Traceback (most recent call last)" not in run.stderr, run.stderr  # (the JSON may carry the user's)
    return run.code, run.data, run.stderr


def _explain(solution: str, problem: str = "problem", *extra: str):
    return _run(*explain_args(CASES / f"{problem}.py", CASES / f"{solution}.py", "--trials", "2", *extra))


def _text(solution: str, problem: str = "problem", *extra: str):
    """The same in text mode: what a person sees."""
    return fpa(*explain_args(CASES / f"{problem}.py", CASES / f"{solution}.py", "--no-store", *extra))


@pytest.mark.parametrize(
    ("solution", "problem", "side", "fate", "message"),
    [
        ("exit_in_forward", "problem", "solution", "exited", r"ModelNew\.forward called sys\.exit\(0\)"),
        ("exit_at_import", "problem", "solution", "exited", r"importing exit_at_import\.py called sys\.exit\(0\)"),
        ("os_exit", "problem", "solution", "exited", r"ModelNew\.forward: the solution's process exited with status 3"),
        (
            "segfault",
            "problem",
            "solution",
            "killed",
            r"ModelNew\.forward: the solution's process was killed by SIGSEGV",
        ),
        ("raises", "problem", "solution", "raised", r"ModelNew\.forward raised ValueError: the kernel's launch"),
        # bad_output once in CI (wrong_shape below); its other forms on the device
        pytest.param(
            "returns_float64",
            "problem",
            "solution",
            "bad_output",
            r"returned torch\.float64, but the reference returns",
            marks=pytest.mark.slow,
        ),
        pytest.param(
            "returns_tuple",
            "problem",
            "solution",
            "bad_output",
            r"ModelNew\.forward returned a tuple, not a tensor",
            marks=pytest.mark.slow,
        ),
        ("wrong_shape", "problem", "solution", "bad_output", r"returned shape \(2, 8, 12, 13\), but the reference"),
        ("prints", "problem_wrong_inputs", "problem", "raised", r"Model\.forward raised RuntimeError: .*4 channels"),
    ],
)
def test_a_failure_of_the_users_code_exits_3_with_one_line_naming_it(solution, problem, side, fate, message):
    code, data, stderr = _explain(solution, problem)
    assert code == ExitCode.USER_CODE == 3
    error = data["error"]
    assert error["exit_code"] == 3 and error["side"] == side and error["fate"] == fate
    assert re.search(message, error["message"]), error["message"]
    first = stderr.splitlines()[0]
    assert first.startswith(f"error: the {side}'s code failed: ") and re.search(message, first), stderr
    assert set(data["worker"]) >= {"seconds", "user_code_seconds", "problem", "solution"}


def test_a_candidate_that_never_returns_ends_within_the_timeout_with_exit_3():
    start = time.monotonic()
    code, data, stderr = _explain("hang", "problem", "--timeout", "2")
    took = time.monotonic() - start
    assert code == 3 and data["error"]["fate"] == "timed_out" and data["error"]["where"] == "ModelNew.forward"
    assert "did not return within 2 s" in stderr
    assert took < 2 + 15, took  # the worker's start (~3 s on 2 cores) and the kill, not a hang


def test_what_the_users_code_prints_is_captured_and_never_mixed_into_json():
    """--json has it all under worker.solution; text mode shows its tail, control characters escaped."""
    code, data, _ = _explain("prints")
    printed = data["worker"]["solution"]
    assert code == 0 and data["verdict"] == "identical"
    assert "ninja: no work to do." in printed["stdout"]  # written to file descriptor 1 directly
    assert printed["stdout"].count("forward called with (2, 4, 12, 14)") == 2
    assert "a warning of the kernel's" in printed["stderr"]
    text = _text("prints", "problem", "--trials", "2")
    assert text.code == 0 and "the solution's process printed" in text.stdout
    assert "| ninja: no work to do." in text.stdout
    assert "\x1b" not in text.stdout and "\\x1b[2J" in text.stdout  # the ANSI escape it printed, shown inert


def test_each_side_imports_its_own_helper_module():
    # Both folders hold a common.py; the solution's (which doubles the output) must be the one it gets.
    code, data, _ = _explain("leak_solution/solution", "leak_problem/problem")
    assert code == 1 and data["verdict"] == "bug"
    assert data["mismatch"]["max_abs"] > 0.1


def test_what_the_solution_changes_in_torch_never_reaches_the_reference():
    code, data, _ = _explain("changes_globals")  # F.conv2d replaced by one that doubles; TF32 switched off
    assert code == 0 and data["verdict"] == "identical"
    assert any("torch.backends.cudnn.allow_tf32 = False" in note for note in data["notes"])
    # nn.Conv2d.forward patched to double, the new TF32 API used, a default device set: in a shared process the
    # reference would double too and the pair would look identical; here the candidate's bug shows.
    code, data, _ = _explain("patches_torch")
    assert code == 1 and data["verdict"] == "bug" and data["mismatch"]["max_abs"] > 0.1
    assert any("fp32_precision = 'ieee'" in note for note in data["notes"])


def test_a_solution_file_of_any_name_is_imported(tmp_path):
    (tmp_path / "_conv.py").write_text((CASES / "_conv.py").read_text())
    (tmp_path / "solution.txt").write_text((CASES / "raises.py").read_text())
    code, data, _ = _run(
        "explain",
        "--problem",
        str(CASES / "problem.py"),
        "--solution",
        str(tmp_path / "solution.txt"),
        "--device",
        "cpu",
        "--trials",
        "1",
    )
    assert code == 3 and data["error"]["where"] == "ModelNew.forward"


def test_an_all_nan_candidate_is_not_reported_as_equal():
    code, data, _ = _explain("all_nan")
    m = data["mismatch"]
    assert code == 1 and data["verdict"] == "nonfinite"
    assert m["max_abs"] is None and m["finite_pairs"] == 0 and m["nonfinite"]["nan_actual"] == m["outputs"]
    assert "NaN or ±inf" in data["causes"][0]["evidence"]
    text = _text("all_nan", "problem", "--trials", "1")
    assert "no output is finite on both sides" in text.stdout and "max |difference| 0" not in text.stdout


def test_a_nan_patch_is_counted_and_located():
    code, data, _ = _explain("nan_patch")
    nonfinite = data["mismatch"]["nonfinite"]
    assert code == 1 and (nonfinite["nan_actual"], nonfinite["inf_actual"]) == (4, 1)
    assert nonfinite["mismatched_nonfinite"] == 5 and nonfinite["examples"][0] == [0, 2, 3, 4]
    evidence = data["causes"][0]["evidence"]
    assert "5 of them NaN or ±inf" in evidence and "channel 2: 4 of" in evidence and "channel 5: 1 of" in evidence


@pytest.mark.parametrize("mode", ["fp32", pytest.param("tf32", marks=pytest.mark.slow)])
def test_one_wrong_channel_is_named_with_counts_that_add_up(mode):
    code, data, _ = _explain("wrong_channel", "problem_wide", "--reference-mode", mode)
    evidence = data["causes"][0]["evidence"]
    assert code == 1 and data["causes"][0]["name"] == "bug"
    found = re.search(
        r"(\d+) of (\d+) outputs beyond the floor; all in 1 channel of 0…15 \(channel 1: (\d+) of its (\d+)\)",
        evidence,
    )
    assert found, evidence
    bad, total, in_channel, of_channel = map(int, found.groups())
    assert bad == in_channel == of_channel == total // 16  # every output of channel 1, and nothing else


def _explain_raises(*options: str) -> list[str]:
    """``fpa explain`` of the problem and the raising solution with ``options``: refused before anything runs."""
    return ["explain", "--problem", str(CASES / "problem.py"), "--solution", str(CASES / "raises.py"), *options]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            _explain_raises("--trials", "0"),
            "trials=0",
        ),
        (  # a typo's 10^9 trials would draw their seeds for minutes before any timeout applied
            _explain_raises("--trials", "1000000000"),
            r"trials=1000000000, but trials must be an integer >= 1 and <= 10000",
        ),
        (
            _explain_raises("--samples", "0"),
            "samples=0",
        ),
        (
            _explain_raises("--timeout", "0"),
            "timeout=0",
        ),
        (
            ["explain", "--problem", str(CASES / "nowhere.py"), "--solution", str(CASES / "raises.py")],
            "problem=",
        ),
        (
            ["explain", "--problem", str(CASES / "problem.py"), "--solution", str(CASES / "missing_model_new.py")],
            "does not define ModelNew",
        ),
        (["report", "dilated_conv2d", "--input-shape", "100000,32,512,512"], "needs about"),
        (["report", "dilated_conv2d", "--samples", "0"], "--samples 0"),
        (["report", "dilated_conv2d", "--csv", "/nonexistent-folder/rows.csv"], "does not exist"),
        (["tolerance", "conv3d_kk1", "--samples", "0"], "--samples 0"),
        (["fuzz", "dilated_conv2d", "--max-examples", "0"], "max_examples=0"),
        (
            [
                "fuzz",
                "--problem",
                str(FUZZ / "conv2d_problem.py"),
                "--solution",
                str(FUZZ / "correct_fp64.py"),
                "--replay",
                '{"config":{},"data":{}}',
            ],
            "input_shapes",
        ),
        (
            [
                "fuzz",
                "--problem",
                str(FUZZ / "conv2d_problem.py"),
                "--solution",
                str(FUZZ / "correct_fp64.py"),
                "--replay",
                "not json",
            ],
            "not JSON",
        ),
        (["report", "dilated_conv2d", "--input-shape", "8,x,4"], "--input-shape must look like"),
        (["explain", "--problem", str(CASES / "problem.py")], "Missing option '--solution'"),
    ],
)
def test_bad_options_are_refused_before_any_work_with_exit_2(args, message):
    start = time.monotonic()
    code, data, stderr = _run(*args)
    assert code == ExitCode.USAGE == 2
    assert data["error"]["exit_code"] == 2 and message in data["error"]["message"], data
    assert message in stderr
    assert time.monotonic() - start < 30  # refused up front, not after the computation


def test_the_huge_input_shape_refusal_gives_the_estimate():
    _, data, _ = _run("report", "dilated_conv2d", "--input-shape", "100000,32,512,512")
    assert re.search(r"needs about [\d.]+ TB of CPU memory .* is available", data["error"]["message"])


def test_an_internal_error_is_one_line_and_its_traceback_goes_to_a_file(monkeypatch):
    import fp_analysis.study.tolerance_report

    def broken(*args, **kwargs):
        return 1 / 0

    monkeypatch.setattr(fp_analysis.study.tolerance_report, "tolerance_report", broken)
    code, data, stderr = _run("tolerance", "conv3d_kk1")
    assert code == ExitCode.INTERNAL == 4
    assert stderr.count("\n") == 1 and stderr.startswith("internal error: ZeroDivisionError: division by zero")
    path = pathlib.Path(data["error"]["traceback_file"])
    assert path.is_file() and "Traceback (most recent call last)" in path.read_text() and path.name in stderr


def test_fuzz_of_a_solution_that_cannot_be_imported_ends_at_once_naming_the_import():
    started = time.monotonic()
    code, data, _ = _run("fuzz", "--problem", str(FUZZ / "conv2d_problem.py"), "--solution",
                         str(CASES / "exit_at_import.py"), "--device", "cpu", "--max-examples", "20")  # fmt: skip
    assert code == 3 and data["error"]["where"].startswith("importing exit_at_import.py"), data
    assert time.monotonic() - started < 60  # it used to wait 600 s for the process to start again


def test_fuzz_names_the_example_on_which_the_candidate_hangs():
    code, data, stderr = _run(
        "fuzz",
        "--problem",
        str(FUZZ / "conv2d_problem.py"),
        "--solution",
        str(FUZZ / "hang_on_groups.py"),
        "--device",
        "cpu",
        "--max-examples",
        "60",
        "--timeout",
        "2",
    )
    error = data["error"]
    assert code == 3 and error["fate"] == "timed_out" and error["where"] == "ModelNew.forward"
    config = json.loads(error["detail"].removeprefix("example "))
    assert config["groups"] > 1
    assert error["replay"].startswith("fpa fuzz --problem") and "--replay" in error["replay"]
    assert "reproduce: fpa fuzz" in stderr


def test_fuzz_names_the_example_on_which_the_candidate_ends_the_process():
    code, data, _ = _run(
        "fuzz",
        "--problem",
        str(FUZZ / "conv2d_problem.py"),
        "--solution",
        str(FUZZ / "exit_on_bias.py"),
        "--device",
        "cpu",
        "--max-examples",
        "30",
    )
    error = data["error"]
    assert code == 3 and error["fate"] == "exited" and error["status"] == 7
    assert json.loads(error["detail"].removeprefix("example "))["bias"] is True


def test_fuzz_writes_only_under_the_cache_and_counts_examples_apart_from_shrinking(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, data, _ = _run("fuzz", "dilated_conv2d", "--max-examples", "5", "--device", "cpu")
    assert code == 0 and data["examples"] == 5 and data["shrink_steps"] == 0
    code, data, _ = _run(
        "fuzz",
        "--problem",
        str(FUZZ / "conv2d_problem.py"),
        "--solution",
        str(FUZZ / "bug_edge_tile.py"),
        "--device",
        "cpu",
        "--max-examples",
        "30",
    )
    assert code == 1 and 1 <= data["examples"] <= 30 and data["shrink_steps"] >= 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"]  # nothing but the cache it was pointed at
    assert any((tmp_path / "cache" / "fp_analysis" / "hypothesis").iterdir())


def test_fuzz_takes_its_default_example_count_from_the_hypothesis_profile(monkeypatch):
    from fp_analysis.explain.jobs import default_max_examples

    monkeypatch.setenv("HYPOTHESIS_PROFILE", "thorough")
    assert default_max_examples() == 2000
    monkeypatch.delenv("HYPOTHESIS_PROFILE")
    assert default_max_examples() == 200


@pytest.mark.parametrize("value", [np.float32(1 + 2**-11), np.float64(1 + 2**-11), 1 + 2**-11])
def test_library_functions_given_a_scalar_return_a_scalar(value):
    rounded = round_to(value, "tf32")
    assert np.ndim(rounded) == 0 and rounded == 1.0  # ties to even
    assert np.ndim(ulp(value)) == 0 and np.ndim(flush_subnormals(np.float32(value))) == 0
    assert round_to(np.array([value, value]), "tf32").shape == (2,)


@pytest.mark.parametrize(
    ("solution", "problem", "extra", "code", "expect"),
    [
        # Right on the first call, stale after it: judged on the worst trial, never "identical".
        ("stateful", "problem", [], 1, lambda d: d["verdict"] == "bug" and d["context"]["analysed_trial"] > 0),
        # The weight kept in another layout holds the reference's values: no parameter mismatch.
        ("relayout", "problem", [], 0, lambda d: d["verdict"] == "identical"),
        # A conv reached through `from torch.nn.functional import conv2d` is emulated too.
        (
            "fp64_accumulated",
            "problem_functional",
            ["--reference-mode", "tf32"],
            0,
            lambda d: d["verdict"] == "reference_tf32" and d["mismatch"]["failed_trials"] == 2,
        ),
    ],
)
def test_what_the_check_sees_is_judged_whole(solution, problem, extra, code, expect):
    got, data, _ = _explain(solution, problem, *extra)
    assert got == code and expect(data), data.get("verdict")


@pytest.mark.parametrize(
    ("solution", "problem", "code", "message"),
    [
        ("prints", "problem_dropout", 2, "draws random numbers"),
        ("prints", "problem_empty", 2, "is empty"),
        ("raise_unprintable", "problem", 3, "raised Unprintable: (its message could not be printed)"),
        ("returns_sparse", "problem", 3, "returned a torch.sparse_coo tensor, not a dense one"),
    ],
)
def test_no_verdict_about_what_was_not_evaluated(solution, problem, code, message):
    got, data, stderr = _explain(solution, problem)
    assert got == code and message in data["error"]["message"], data
    assert stderr.count("\n") >= 1 and "internal error" not in stderr


def test_fuzz_judges_the_whole_model_and_finds_a_missing_relu():
    code, data, _ = _run(
        "fuzz", "--problem", str(CASES / "problem_relu.py"), "--solution", str(CASES / "fuzz_no_relu.py"),
        "--device", "cpu", "--max-examples", "20",
    )  # fmt: skip
    assert code == 1 and data["failures"][0]["explanation"]["verdict"] == "bug"


def test_fuzz_refuses_a_model_it_cannot_model():
    code, data, _ = _run(
        "fuzz", "--problem", str(CASES / "problem_dropout.py"), "--solution", str(CASES / "prints.py"),
        "--device", "cpu", "--max-examples", "5",
    )  # fmt: skip
    assert code == 2 and "draws random numbers" in data["error"]["message"]


def test_fuzz_names_a_nondeterministic_candidate():
    code, data, _ = _run(
        "fuzz", "--problem", str(FUZZ / "conv2d_problem.py"), "--solution", str(FUZZ / "flaky.py"),
        "--device", "cpu", "--max-examples", "20",
    )  # fmt: skip
    assert code == 1 and data["failures"][0]["explanation"]["verdict"] == "nondeterministic"


@pytest.mark.parametrize(
    "args",
    [
        ["explain", "--problem", str(CASES / "problem.py"), "--solution", str(CASES / "raises.py"),
         "--seed", str(2**64)],
        ["report", "dilated_conv2d", "--seed", str(2**64)],
        ["tolerance", "dilated_conv2d", "--samples", "30000000"],
        ["fuzz", "dilated_conv2d", "--timeout", "inf"],
        ["fuzz", "dilated_conv2d", "--seed", "-1"],
        ["fuzz", "--problem", str(FUZZ / "conv2d_problem.py"), "--solution", str(FUZZ / "correct_fp64.py"),
         "--replay", '{"config":{"groups":0,"input_shapes":[[1,4,9,9]]},"data":{"kind":"uniform","seed":0,'
         '"layout":"contiguous"}}'],
        ["fuzz", "--problem", str(FUZZ / "conv2d_problem.py"), "--solution", str(FUZZ / "correct_fp64.py"),
         "--replay", '{"config":{"input_shapes":[[100000,4,1000,1000]]},"data":{"kind":"uniform","seed":0,'
         '"layout":"contiguous"}}'],
    ],
)  # fmt: skip
def test_more_bad_options_exit_2(args):
    code, data, _ = _run(*args)
    assert code == 2 and data["error"]["kind"] == "usage", data


def test_a_helper_named_like_a_standard_module_in_the_current_folder_changes_nothing(tmp_path, monkeypatch):
    (tmp_path / "logging.py").write_text("HELPER = 1\n")
    monkeypatch.chdir(tmp_path)
    code, data, _ = _explain("prints", "problem", "--trials", "1")
    assert code == 0 and data["verdict"] == "identical"


def test_ending_fpa_ends_its_workers(tmp_path):
    """SIGTERM to fpa while the candidate hangs: exit 130, and no process of the job is left (the worker,
    the candidate process, the fork server they came from)."""
    import os
    import signal
    import subprocess
    import sys

    args = ["explain", "--problem", str(CASES / "problem.py"), "--solution", str(CASES / "hang.py"), "--device", "cpu"]
    fpa = subprocess.Popen([sys.executable, "-m", "fp_analysis", *args, "--no-store"], stderr=subprocess.PIPE)

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

    deadline = time.monotonic() + 60
    while len(descendants()) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(3)  # the candidate process started, into the hanging forward
    started = descendants()
    assert len(started) >= 2, "the job's processes never started"
    fpa.send_signal(signal.SIGTERM)
    _, stderr = fpa.communicate(timeout=30)
    assert fpa.returncode == 130 and b"interrupted" in stderr
    deadline = time.monotonic() + 10
    while any(map(alive, started)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(map(alive, started))


_WRITES_ITS_INPUT = """
import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, x):
        x.add_(1.0)  # a kernel that writes into its input
        return x * 2.0
"""


def _run_solution(tmp_path, source: str, x, calls: int = 1):
    """``ModelNew`` of ``source`` built on x's device in the solution's own process and called on x ``calls``
    times: (the outputs, the device the first was made on, whether CUDA IPC stayed on)."""
    from fp_analysis.run.candidate import CandidateProcess

    solution = tmp_path / "solution.py"
    solution.write_text(source)
    with CandidateProcess(str(solution), tmp_path, timeout=60, cuda=x.is_cuda) as candidate:
        candidate.loaded()
        candidate.build([], {}, 0, x.device, where="ModelNew()")
        replies = [candidate.forward([x], like=x) for _ in range(calls)]  # the cases return x's shape
        return [out for out, _, _ in replies], replies[0][1], candidate.ipc


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_tensors_cross_and_each_process_keeps_its_own_copy(tmp_path, device):
    """The inputs and the output cross between the processes (on a GPU as CUDA IPC handles, no copy through the
    host: the output arrives on the GPU), the output is right, and what the solution wrote into its input stays
    in its own process."""
    import torch

    x = torch.rand(4, 1000, device=device)
    before = x.clone()
    (out, again), made_on, ipc = _run_solution(tmp_path, _WRITES_ITS_INPUT, x, calls=2)
    assert ipc and out.device.type == device and made_on.startswith(device)
    assert torch.equal(x, before)  # the worker's inputs are as they were
    assert torch.equal(out, (before + 1.0) * 2.0) and torch.equal(again, out)  # each call got a fresh copy


@pytest.mark.gpu
def test_where_an_ipc_handle_cannot_be_opened_the_tensors_travel_as_bytes(tmp_path, monkeypatch):
    """A handle the solution's process cannot open (a platform without CUDA IPC) is answered before any user
    code runs; the inputs are sent again as CPU tensors, and so is everything for the rest of the job."""
    import torch

    import fp_analysis.run.candidate as candidate_module

    # a handle of the right form that names no memory: it fails to open in the other process, as on a platform
    # without CUDA IPC
    share = candidate_module.share
    monkeypatch.setattr(candidate_module, "share", lambda t: dataclasses.replace(share(t), handle=bytes(64)))
    x = torch.rand(3, 7, device="cuda")
    (out,), made_on, ipc = _run_solution(tmp_path, _WRITES_ITS_INPUT, x)
    assert not ipc and not out.is_cuda and made_on.startswith("cuda")
    assert torch.equal(out.cuda(), (x + 1.0) * 2.0)  # the solution ran once, on the inputs sent as bytes


_COUNTED_INPUTS = """
import torch
from torch import nn

CALLS = []


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.drawn = nn.Linear(8, 8)  # its weights come from the seeded stream the trials' draws reseed

    def forward(self, x):
        return x * 2.0


def get_inputs():
    CALLS.append(1)
    if len(CALLS) == {fail_at}:
        raise RuntimeError("no more inputs")
    return [torch.rand(4, 8)]


def get_init_inputs():
    return []
"""


_DRIFTING = """
from torch import nn


class ModelNew(nn.Module):
    calls = 0

    def forward(self, x):
        ModelNew.calls += 1  # further off on each call: the last trial is the worst
        return x * 2.0 + 1e-3 * ModelNew.calls
"""


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_each_trials_inputs_are_kernelbenchs_and_a_failing_draw_names_its_trial(tmp_path, device):
    """On a GPU a trial's inputs are drawn in a thread while the candidate process works (builds ModelNew, runs
    the trial before): the reference is still built from KernelBench's seeded stream, each trial still gets the
    inputs KernelBench's sequence gives (its seed, then get_inputs()), and get_inputs() failing on a later trial
    is that trial's error, after the trials before it ran."""
    import torch

    from fp_analysis.errors import UserCodeError
    from fp_analysis.explain.kernelbench import load_problem, run_check
    from fp_analysis.run.candidate import CandidateProcess
    from fp_analysis.run.usercode import seed_all

    problem = tmp_path / "problem.py"
    problem.write_text(_COUNTED_INPUTS.replace("{fail_at}", "0"))
    solution = tmp_path / "solution.py"
    solution.write_text(_DRIFTING)
    dev = torch.device(device)
    with CandidateProcess(str(solution), tmp_path, timeout=60, cuda=dev.type == "cuda") as candidate:
        reference, _, results, worst = run_check(load_problem(problem), candidate, dev, trials=3, seed=7)
    seed_all(7)
    assert torch.equal(reference.drawn.weight.cpu(), torch.nn.Linear(8, 8).weight)
    generator = torch.Generator().manual_seed(7)
    seeds = [int(torch.randint(0, 2**31 - 1, (1,), generator=generator).item()) for _ in range(3)]
    assert [r.seed for r in results] == seeds
    assert worst.trial == 2  # drawn in the thread on a GPU
    seed_all(seeds[2])
    assert torch.equal(worst.inputs[0].cpu(), torch.rand(4, 8))
    settling = tmp_path / "settling.py"  # worst on its first call: the first trial's inputs, drawn while it builds
    settling.write_text(_DRIFTING.replace("1e-3 * ModelNew.calls", "1e-3 / ModelNew.calls"))
    with CandidateProcess(str(settling), tmp_path, timeout=60, cuda=dev.type == "cuda") as candidate:
        _, _, _, worst = run_check(load_problem(problem), candidate, dev, trials=3, seed=7)
    seed_all(seeds[0])
    assert worst.trial == 0 and torch.equal(worst.inputs[0].cpu(), torch.rand(4, 8))

    failing = tmp_path / "failing.py"
    failing.write_text(_COUNTED_INPUTS.replace("{fail_at}", "3"))
    failing_problem = load_problem(failing)
    with CandidateProcess(str(solution), tmp_path, timeout=60, cuda=dev.type == "cuda") as candidate:
        with pytest.raises(UserCodeError, match=r"get_inputs\(\) raised RuntimeError") as raised:
            run_check(failing_problem, candidate, dev, trials=3, seed=7)
    assert raised.value.details.get("detail") == "trial 3 of 3"
    assert len(failing_problem.module.CALLS) == 3  # the first two trials' draws came first


def test_inputs_are_drawn_in_a_thread_only_where_a_thread_sees_the_same_torch_state():
    """torch's default device and its mode stacks are per thread: where a problem set one, a thread would draw
    other inputs (on another device's generator), so they are drawn in turn."""
    import torch

    from fp_analysis.explain.kernelbench import _thread_draws_alike

    assert _thread_draws_alike()
    with torch.device("meta"):  # what torch.set_default_device does: a mode on the function stack
        assert not _thread_draws_alike()
    assert _thread_draws_alike()


_NEGATED_VIEW = """
import torch
from torch import nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.complex(x, 2.0 * x).conj().imag  # a view with torch's lazy negation bit set
"""


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_an_output_with_a_lazy_negation_arrives_negated(tmp_path, device):
    """A CUDA IPC handle names memory, not torch's lazy bits: a negated view is resolved before it is shared."""
    import torch

    x = torch.rand(3, 5, device=device)
    (out,), _, _ = _run_solution(tmp_path, _NEGATED_VIEW, x)
    assert torch.equal(out.to(device), -2.0 * x)


@pytest.mark.gpu
def test_an_output_unlike_the_references_crosses_as_bytes_and_the_worker_opens_no_handle_of_the_solutions(
    tmp_path, monkeypatch
):
    """A GPU output is written into the buffer the worker exported for the reference's shape and dtype; one of
    another shape cannot be, and crosses as CPU bytes (so the check can name its shape). The worker never opens a
    handle the solution's process made (its sizes are the sender's word)."""
    import torch

    from fp_analysis.run.tensor_ipc import SharedCuda

    def refuse(self):
        raise AssertionError("the worker opened a handle")

    x = torch.rand(3, 7, device="cuda")
    monkeypatch.setattr(SharedCuda, "open", refuse)  # in this process only: the candidate opens its inputs
    monkeypatch.setattr(SharedCuda, "view", refuse)
    (out,), made_on, ipc = _run_solution(tmp_path, _WRITES_ITS_INPUT, x)
    assert ipc and out.is_cuda and torch.equal(out, (x + 1.0) * 2.0)
    (tmp_path / "shorter").mkdir()
    (out,), made_on, ipc = _run_solution(tmp_path / "shorter", _WRITES_ITS_INPUT.replace("x * 2.0", "x[:2] * 2.0"), x)
    assert ipc and not out.is_cuda and made_on.startswith("cuda") and out.shape == (2, 7)
