"""A failure of the user's code is a finding, never our crash: a solution or problem that exits, crashes,
raises, hangs or returns what cannot be compared ends ``fpa explain`` with exit 3 (2 where nothing could be
evaluated) and one line naming it, never a raw traceback, and ``--json`` still parses as strict JSON.
"""

from __future__ import annotations

import re
import time

import pytest

from fp_analysis.errors import ExitCode

from ..usercode_runs import CASES, explain_json, fpa_json


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path.parent / f"{tmp_path.name}-store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FPA_HYPOTHESIS_DB", raising=False)


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
        # bad_output once in CI (a tuple); what cannot be read on the device
        (
            "returns_tuple",
            "problem",
            "solution",
            "bad_output",
            r"ModelNew\.forward returned a tuple, not a tensor",
        ),
        ("prints", "problem_wrong_inputs", "problem", "raised", r"Model\.forward raised RuntimeError: .*4 channels"),
    ],
)
def test_a_failure_of_the_users_code_exits_3_with_one_line_naming_it(solution, problem, side, fate, message):
    code, data, stderr = explain_json(solution, problem)
    assert code == ExitCode.USER_CODE == 3
    error = data["error"]
    assert error["exit_code"] == 3 and error["side"] == side and error["fate"] == fate
    assert re.search(message, error["message"]), error["message"]
    first = stderr.splitlines()[0]
    assert first.startswith(f"error: the {side}'s code failed: ") and re.search(message, first), stderr
    assert set(data["worker"]) >= {"seconds", "user_code_seconds", "problem", "solution"}


@pytest.mark.parametrize(("solution", "last"), [("raises", "ValueError: the kernel's launch"),
                                               ("raises_in_init", "RuntimeError: no kernel image")])  # fmt: skip
def test_a_raised_exceptions_traceback_is_the_users_frames_alone(solution, last):
    """The traceback ``--json`` carries is the user's: their file's frames, each with its source line, and the
    exception it was raised from, none of fpa's frames (those that called into the solution: its forward, its
    constructor)."""
    _, data, _ = explain_json(solution, "problem")
    shown = data["error"]["traceback"]
    assert shown.startswith("Traceback (most recent call last):") and f"{solution}.py" in shown, shown
    assert "fp_analysis" not in shown and shown.splitlines()[-1].startswith(last), shown
    if solution == "raises_in_init":
        assert "KeyError: 'conv_forward'" in shown and "direct cause" in shown, shown


@pytest.mark.parametrize(
    ("solution", "words"),
    [
        (
            "wrong_shape",
            r"ModelNew\.forward returns shape \(2, 8, 12, 13\) where the reference returns \(2, 8, 12, 14\)",
        ),
        ("returns_float64", r"ModelNew\.forward returns torch\.float64 where the reference returns torch\.float32"),
    ],
)
def test_a_wrong_shape_or_dtype_is_a_wrong_result_a_bug_with_exit_1(solution, words):
    code, data, _ = explain_json(solution, "problem")
    assert code == ExitCode.NOT_EXPLAINED == 1 and data["verdict"] == "bug" and not data["explained"]
    assert re.search(words, data["causes"][0]["evidence"]) and re.search(words, data["mismatch"]["wrong_output"])
    assert data["context"]["analysed_trial"] == 0


def test_a_candidate_that_never_returns_ends_within_the_timeout_with_exit_3():
    start = time.monotonic()
    code, data, stderr = explain_json("hang", "problem", "--timeout", "2")
    took = time.monotonic() - start
    assert code == 3 and data["error"]["fate"] == "timed_out" and data["error"]["where"] == "ModelNew.forward"
    assert "did not return within 2 s" in stderr
    assert took < 2 + 15, took  # the worker's start (~3 s on 2 cores) and the kill, not a hang


def test_a_solution_file_of_any_name_is_imported(tmp_path):
    (tmp_path / "_conv.py").write_text((CASES / "_conv.py").read_text())
    (tmp_path / "solution.txt").write_text((CASES / "raises.py").read_text())
    code, data, _ = fpa_json(
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
    got, data, stderr = explain_json(solution, problem)
    assert got == code and message in data["error"]["message"], data
    assert "verdict" not in data and "causes" not in data, data  # an error record, and no verdict beside it
    assert stderr.startswith("error: ") and message in stderr.splitlines()[0] and "internal error" not in stderr
