"""``fpa explain`` on candidates whose outputs are wrong in telling ways: NaN and ±inf are counted and located
(never reported equal), one wrong channel is named with counts that add up, and a stateful, re-laid-out or
functional candidate is judged on what the check sees.
"""

from __future__ import annotations

import re

import pytest

from ..usercode_runs import explain_json, explain_text


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path.parent / f"{tmp_path.name}-store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FPA_HYPOTHESIS_DB", raising=False)


def test_an_all_nan_candidate_is_not_reported_as_equal():
    code, data, _ = explain_json("all_nan")
    m = data["mismatch"]
    assert code == 1 and data["verdict"] == "nonfinite"
    assert m["max_abs"] is None and m["finite_pairs"] == 0 and m["nonfinite"]["nan_actual"] == m["outputs"]
    assert "NaN or ±inf" in data["causes"][0]["evidence"]
    text = explain_text("all_nan", "problem", "--trials", "1")
    assert "no output is finite on both sides" in text.stdout and "max |difference| 0" not in text.stdout


def test_a_nan_patch_is_counted_and_located():
    code, data, _ = explain_json("nan_patch")
    nonfinite = data["mismatch"]["nonfinite"]
    assert code == 1 and (nonfinite["nan_actual"], nonfinite["inf_actual"]) == (4, 1)
    assert nonfinite["mismatched_nonfinite"] == 5 and nonfinite["examples"][0] == [0, 2, 3, 4]
    evidence = data["causes"][0]["evidence"]
    assert "5 of them NaN or ±inf" in evidence and "channel 2: 4 of" in evidence and "channel 5: 1 of" in evidence


@pytest.mark.parametrize("mode", ["fp32", pytest.param("tf32", marks=pytest.mark.slow)])
def test_one_wrong_channel_is_named_with_counts_that_add_up(mode):
    code, data, _ = explain_json("wrong_channel", "problem_wide", "--reference-mode", mode)
    evidence = data["causes"][0]["evidence"]
    assert code == 1 and data["causes"][0]["name"] == "bug"
    found = re.search(
        r"(\d+) of (\d+) outputs beyond the floor; all in 1 channel of 0…15 \(channel 1: (\d+) of its (\d+)\)",
        evidence,
    )
    assert found, evidence
    bad, total, in_channel, of_channel = map(int, found.groups())
    assert bad == in_channel == of_channel == total // 16  # every output of channel 1, and nothing else


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
    got, data, _ = explain_json(solution, problem, *extra)
    assert got == code and expect(data), data.get("verdict")
