"""Each side's code runs in a process of its own: what it prints is captured (never mixed into ``--json``),
each side imports its own helper modules, and what the solution changes in torch, or a module of the
current folder named like a standard one, never reaches the reference.
"""

from __future__ import annotations

import pytest

from ..usercode_runs import explain_json, explain_text


@pytest.fixture(autouse=True)
def _isolated_files(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path.parent / f"{tmp_path.name}-store"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FPA_HYPOTHESIS_DB", raising=False)


def test_what_the_users_code_prints_is_captured_and_never_mixed_into_json():
    """--json has it all under worker.solution; text mode shows its tail, control characters escaped."""
    code, data, _ = explain_json("prints")
    printed = data["worker"]["solution"]
    assert code == 0 and data["verdict"] == "identical"
    assert "ninja: no work to do." in printed["stdout"]  # written to file descriptor 1 directly
    # each trial's call, and the worst trial's again (is it deterministic?)
    assert printed["stdout"].count("forward called with (2, 4, 12, 14)") == 3
    assert "a warning of the kernel's" in printed["stderr"]
    text = explain_text("prints", "problem", "--trials", "2")
    assert text.code == 0 and "the solution's process printed" in text.stdout
    assert "| ninja: no work to do." in text.stdout
    assert "\x1b" not in text.stdout and "\\x1b[2J" in text.stdout  # the ANSI escape it printed, shown inert


def test_each_side_imports_its_own_helper_module():
    # Both folders hold a common.py; the solution's (which doubles the output) must be the one it gets.
    code, data, _ = explain_json("leak_solution/solution", "leak_problem/problem")
    assert code == 1 and data["verdict"] == "bug"
    assert data["mismatch"]["max_abs"] > 0.1


def test_what_the_solution_changes_in_torch_never_reaches_the_reference():
    code, data, _ = explain_json("changes_globals")  # F.conv2d replaced by one that doubles; TF32 switched off
    assert code == 0 and data["verdict"] == "identical"
    assert any("torch.backends.cudnn.allow_tf32 = False" in note for note in data["notes"])
    # nn.Conv2d.forward patched to double, the new TF32 API used, a default device set: in a shared process the
    # reference would double too and the pair would look identical; here the candidate's bug shows.
    code, data, _ = explain_json("patches_torch")
    assert code == 1 and data["verdict"] == "bug" and data["mismatch"]["max_abs"] > 0.1
    assert any("fp32_precision = 'ieee'" in note for note in data["notes"])


def test_a_helper_named_like_a_standard_module_in_the_current_folder_changes_nothing(tmp_path, monkeypatch):
    (tmp_path / "logging.py").write_text("HELPER = 1\n")
    monkeypatch.chdir(tmp_path)
    code, data, _ = explain_json("prints", "problem", "--trials", "1")
    assert code == 0 and data["verdict"] == "identical"
