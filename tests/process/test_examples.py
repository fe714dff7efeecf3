"""The README's examples on examples/: its explain, triage and fuzz commands, read from README.md and run as written
(the command line in this process, from the repository's root), exit with the codes the README gives them, and every
pair of examples/pairs.csv gets the verdict it is labelled with.
"""

from __future__ import annotations

import csv
import pathlib
import re
import shlex

import pytest

from fp_analysis.triage.discovery import discover

from ..cli_runs import fpa

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MANIFEST = "examples/pairs.csv"
# The verdicts examples/ is there to show, each by at least one pair of the manifest.
SHOWN = {"identical", "accumulation_order", "candidate_bf16", "gelu_approximation", "bug", "user_code_failed"}


@pytest.fixture(autouse=True)
def _at_the_root(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the README's paths are relative to the repository's root
    monkeypatch.setenv("FPA_STORE", str(tmp_path / "store"))
    monkeypatch.setenv("FPA_HYPOTHESIS_DB", str(tmp_path / "hypothesis"))


def readme_examples() -> list[tuple[list[str], int]]:
    """The `$ fpa …` commands of README's Examples section (a block each, `\\` continuations joined), but `fpa
    report`'s, each with the exit code the prose before its block gives ("exits N")."""
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## Examples\n")
    section = text[start : text.index("\n## ", start + 1)]
    parts = section.split("```")
    commands = []
    for prose, block in zip(parts[0::2], parts[1::2], strict=False):
        line = block.strip().replace("\\\n", " ").splitlines()[0]
        if not line.startswith("$ fpa ") or line.startswith("$ fpa report"):
            continue
        codes = re.findall(r"\bexits (\d+)\b", prose)
        assert codes, f"README gives no exit code ('exits N') before {line!r}"
        commands.append((shlex.split(line)[2:], int(codes[-1])))
    return commands


def _pairs(pairs) -> set[tuple[pathlib.Path, pathlib.Path]]:
    return {(p.problem.resolve(), p.solution.resolve()) for p in pairs}


def test_the_manifest_lists_the_runs_folder_and_shows_every_verdict():
    assert _pairs(discover(EXAMPLES / MANIFEST.removeprefix("examples/"))) == _pairs(discover(EXAMPLES / "runs"))
    with open(ROOT / MANIFEST, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) >= 8
    labels = {label for row in rows for label in row["expected"].split("|")}
    assert labels >= SHOWN | {"reference_tf32"}


def test_the_off_by_one_bias_is_located_in_the_last_feature():
    """examples/README.md's claim: the bug is found, and placed in the feature that lacks its bias."""
    runs = EXAMPLES / "runs" / "gemm_add_relu"
    run = fpa("explain", "--problem", runs / "problem.py", "--solution", runs / "bias_off_by_one.py", "--device", "cpu",
              "--json")  # fmt: skip
    assert run.code == 1 and run.data is not None, run.stdout + run.stderr
    assert [c["name"] for c in run.data["causes"]] == ["bug"]
    assert "all in 1 feature of 0…47 (feature 47:" in run.data["causes"][0]["evidence"]


@pytest.mark.long
def test_readme_examples_run_as_written():
    commands = readme_examples()
    kinds = [args[0] for args, _ in commands]
    assert {"explain", "triage", "fuzz"} <= set(kinds), kinds
    assert [MANIFEST] in [args[1:2] for args, _ in commands if args[0] == "triage"], "README triages examples/pairs.csv"
    assert all(path.startswith("examples/") for args, _ in commands for path in args if path.endswith(".py"))
    for args, code in commands:
        run = fpa(*args)
        assert run.code == code, (args, run.stdout + run.stderr)
        if args[0] == "triage":
            _check_triage(args)
        if args[0] == "fuzz":
            assert "minimal failing config" in run.stdout, run.stdout


def _check_triage(args: list[str]) -> None:
    """The same triage with --json: every pair has the verdict it should get."""
    run = fpa(*args, "--json")
    assert run.code == 0 and run.data is not None, run.stdout + run.stderr
    rows = {row["pair_id"]: row for row in run.data["pairs"]}
    if args[1] == MANIFEST:
        assert run.data["summary"]["expected_matched"] == [len(rows), len(rows)]
        wrong = {
            i: (r["verdict"], r["expected"]) for i, r in rows.items() if r["verdict"] not in r["expected"].split("|")
        }
        assert not wrong
        assert {r["verdict"] for r in rows.values()} >= SHOWN
        assert run.data["summary"]["false_passes"] == ["gemm_add_relu/relu_floor"]
        assert rows["conv2d_dilated/fp32_kernel"]["verdict"] == "accumulation_order"  # fp32 reference
        crash = rows["conv2d_dilated/tiled_crash"]
    else:  # the conv problem's folder under a TF32 reference
        assert "tf32" in args
        assert rows["fp32_kernel"]["verdict"] == "reference_tf32" and rows["fp32_kernel"]["check_passed"] is False
        crash = rows["tiled_crash"]
    assert crash["verdict"] == "user_code_failed" and crash["fate"] == "raised"
