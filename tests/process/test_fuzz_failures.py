"""``fpa fuzz`` on user code that fails: a solution that cannot be imported, hangs, ends its process or
answers differently each time is named with the example it failed on; fuzz judges the whole Model, refuses
one it cannot model, and writes only under its cache.
"""

from __future__ import annotations

import json
import time

import pytest

from ..usercode_runs import CASES, FUZZ, fpa_json


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path.parent / f"{tmp_path.name}-store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FPA_HYPOTHESIS_DB", raising=False)


def test_fuzz_of_a_solution_that_cannot_be_imported_ends_at_once_naming_the_import():
    started = time.monotonic()
    code, data, _ = fpa_json("fuzz", "--problem", str(FUZZ / "conv2d_problem.py"), "--solution",
                         str(CASES / "exit_at_import.py"), "--device", "cpu", "--max-examples", "20")  # fmt: skip
    assert code == 3 and data["error"]["where"].startswith("importing exit_at_import.py"), data
    assert time.monotonic() - started < 60  # it used to wait 600 s for the process to start again


def test_a_wrong_output_shape_is_a_bug_of_the_example_not_a_failure_of_the_code():
    code, data, _ = fpa_json("fuzz", "--problem", str(CASES / "problem.py"), "--solution",
                             str(CASES / "wrong_shape.py"), "--device", "cpu", "--max-examples", "20")  # fmt: skip
    assert code == 1 and "error" not in data, data
    (failure,) = data["failures"]
    assert failure["explanation"]["verdict"] == "bug"
    assert "returns shape" in failure["explanation"]["causes"][0]["evidence"]


def test_fuzz_names_the_example_on_which_the_candidate_hangs():
    code, data, stderr = fpa_json(
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
    code, data, _ = fpa_json(
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
    code, data, _ = fpa_json("fuzz", "dilated_conv2d", "--max-examples", "5", "--device", "cpu")
    assert code == 0 and data["examples"] == 5 and data["shrink_steps"] == 0
    code, data, _ = fpa_json(
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


def test_fuzz_judges_the_whole_model_and_finds_a_missing_relu():
    code, data, _ = fpa_json(
        "fuzz", "--problem", str(CASES / "problem_relu.py"), "--solution", str(CASES / "fuzz_no_relu.py"),
        "--device", "cpu", "--max-examples", "20",
    )  # fmt: skip
    assert code == 1 and data["failures"][0]["explanation"]["verdict"] == "bug"


def test_fuzz_refuses_a_model_it_cannot_model():
    code, data, _ = fpa_json(
        "fuzz", "--problem", str(CASES / "problem_dropout.py"), "--solution", str(CASES / "prints.py"),
        "--device", "cpu", "--max-examples", "5",
    )  # fmt: skip
    assert code == 2 and "draws random numbers" in data["error"]["message"]


def test_fuzz_names_a_nondeterministic_candidate():
    code, data, _ = fpa_json(
        "fuzz", "--problem", str(FUZZ / "conv2d_problem.py"), "--solution", str(FUZZ / "flaky.py"),
        "--device", "cpu", "--max-examples", "20",
    )  # fmt: skip
    assert code == 1 and data["failures"][0]["explanation"]["verdict"] == "nondeterministic"
