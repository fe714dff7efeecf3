"""``fpa triage``'s pieces that start no pair: pairs found in a folder or a manifest, the false-pass summary,
options refused before any pair runs (Ray's too), the build-ahead order, the HTML report, a pair's key.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time

import pytest

from fp_analysis.errors import ParameterError, install_hint
from fp_analysis.options import ExplainOptions
from fp_analysis.triage.discovery import Pair, discover
from fp_analysis.triage.pairs import triage
from fp_analysis.triage.pool import Pool
from fp_analysis.triage.summary import summarize

from ..triage_corpus import EXPECTED, KERNELBENCH
from ..triage_corpus import runs as runs  # a pytest fixture


def test_discover_reads_the_runs_layout_and_manifests(runs, tmp_path):
    pairs = discover(runs)
    assert {p.id for p in pairs} == set(EXPECTED)  # the helper modules (_conv.py) are not solutions
    assert all(p.problem.name == "problem.py" and p.problem.parent in p.solution.parents for p in pairs)
    manifest = tmp_path / "pairs.csv"
    manifest.write_text("problem,solution,id,expected\nruns/level1/conv/problem.py,"
                        "runs/level1/conv/off_by_one/solution.py,one,bug\n")  # fmt: skip
    (pair,) = discover(manifest)
    assert (pair.id, pair.expected, pair.solution) == ("one", "bug", runs / "level1/conv/off_by_one/solution.py")
    as_json = tmp_path / "pairs.json"
    as_json.write_text(json.dumps({"pairs": [{"problem": "a.py", "solution": "b.py", "expected": ["bug", "nan"]}]}))
    with pytest.raises(ParameterError, match=r"row 1: problem '.*a\.py' does not exist"):
        discover(as_json)
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")
    assert discover(as_json)[0].solution == tmp_path / "b.py"
    assert discover(as_json)[0].expected == "bug|nan"  # a JSON list: any of these verdicts is right
    (tmp_path / "deep.json").write_text("[" * 100_000)
    with pytest.raises(ParameterError, match="nested too deep"):
        discover(tmp_path / "deep.json")
    for text, name, message in (
        ("problem,solution\n", "empty.csv", "lists no pairs"),
        ('[{"problem": "a.py"}]', "half.json", "give problem and solution"),
        ("{", "broken.json", "cannot be read"),
        ("x", "pairs.txt", "must end in .csv or .json"),
    ):
        (tmp_path / name).write_text(text)
        with pytest.raises(ParameterError, match=message):
            discover(tmp_path / name)
    with pytest.raises(ParameterError, match="neither a folder nor a manifest"):
        discover(tmp_path / "missing")
    # Not solutions: a folder named like one, a FIFO, a dangling link, a hidden folder's copy, setup.py.
    conv = runs / "level1" / "conv"
    (conv / "pkg.py").mkdir()
    os.mkfifo(conv / "pipe.py")
    (conv / "broken.py").symlink_to(tmp_path / "nowhere.py")
    (runs / "level1" / "odd" / "problem.py").mkdir(parents=True)  # a folder of that name is no problem file
    (conv / ".ipynb_checkpoints").mkdir()
    shutil.copy(KERNELBENCH / "conv_bf16.py", conv / ".ipynb_checkpoints" / "bf16-checkpoint.py")
    shutil.copy(KERNELBENCH / "conv_bf16.py", conv / "setup.py")
    assert {p.id for p in discover(runs)} == set(EXPECTED)
    # A spreadsheet's byte-order mark, numbers where strings are expected.
    bom = tmp_path / "bom.CSV"
    bom.write_bytes(b"\xef\xbb\xbfproblem,solution,id,expected\nruns/level1/conv/problem.py,b.py,0,3\n")
    (pair,) = discover(bom)
    assert (pair.id, pair.expected) == ("0", "3")
    with pytest.raises(ParameterError, match=r"no folder below it holds a problem\.py"):
        discover(KERNELBENCH)


def test_a_false_pass_is_a_passed_check_with_a_wrong_candidate():
    rows = [
        {"pair_id": "a", "problem": "p", "verdict": "bug", "check_passed": True, "explained": False},
        {"pair_id": "b", "problem": "p", "verdict": "bug", "check_passed": False, "explained": False},
        {"pair_id": "c", "problem": "p", "verdict": "identical", "check_passed": True, "explained": True,
         "needed_atol": 2e-6, "expected": "identical"},
        {"pair_id": "d", "problem": "q", "verdict": "reference_tf32", "check_passed": False, "explained": True,
         "needed_atol": 1e-3, "expected": "bug"},
        {"pair_id": "e", "problem": "q", "verdict": "accumulation_order", "check_passed": True, "explained": True,
         "needed_atol": 1e-6, "expected": "identical|accumulation_order"},  # any of several verdicts is right
    ]  # fmt: skip
    summary = summarize(rows, 1e-4, 1e-4)
    assert summary["false_passes"] == ["a"]
    # per precision: q's TF32 reference needs 1e-3, its fp32 pair 1e-6 (not raised by the TF32 one)
    assert summary["needed_atol_by_problem"] == {"p": {"fp32": 2e-6}, "q": {"fp32": 1e-6, "tf32": 1e-3}}
    assert summary["expected_matched"] == [2, 3] and summary["verdicts"] == {
        "bug": 2,
        "identical": 1,
        "reference_tf32": 1,
        "accumulation_order": 1,
    }


def test_bad_options_stop_before_any_pair_runs(runs):
    pairs = discover(runs)
    for kwargs, message in (({"trials": 0}, "trials"), ({"atol": -1.0}, "atol"),
                            ({"reference_mode": "fp8"}, "reference_mode"), ({"timeout": 0}, "timeout"),
                            ({"timeout": 1e10}, "at most"), ({"seed": 2**32}, "seed")):  # fmt: skip
        with pytest.raises(ParameterError, match=message):  # the options' record refuses it: no triage can start
            ExplainOptions(**{"device": "cpu", "timeout": 5, **kwargs})
    with pytest.raises(ParameterError, match="workers"):
        Pool(workers=0)
    options = ExplainOptions(device="cpu", timeout=5)
    with pytest.raises(ParameterError, match="must be an ExplainOptions"):
        triage(pairs, {"device": "cpu", "timeout": 5}, store=False)
    with pytest.raises(ParameterError, match="no pairs"):
        triage([], options)
    (runs / "a_file").write_text("")  # the store is what a resumed triage reads: refused before any pair runs
    with pytest.raises(ParameterError, match=r"cannot be written .*--no-store"):
        triage(pairs, options, store_dir=runs / "a_file")
    with pytest.raises(ParameterError, match="Cannot read"):
        triage([Pair("x", runs / "missing.py", runs / "missing.py")], options)


def test_pairs_built_ahead_are_run_once_built_and_the_others_as_they_come(tmp_path):
    """The GPU pipeline's order: builders take the pairs that build, in order; every pair is run exactly once, on a
    slot below ``workers``, with what its build gave; a pair that builds nothing does not wait for the builds."""
    import threading

    from fp_analysis.triage.pool import _as_finished

    pairs = []
    for i in range(12):  # the even ones build an extension
        (tmp_path / f"s{i}.py").write_text("from torch.utils.cpp_extension import load_inline\n" if i % 2 == 0 else "")
        pairs.append(Pair(f"p{i}", tmp_path / "p.py", tmp_path / f"s{i}.py"))
    release = threading.Event()

    def build(pair):
        assert int(pair.id[1:]) % 2 == 0
        release.wait(10)
        return {"built": pair.id}

    def run(pair, built, slot):
        return {"built": built, "slot": slot}

    results = _as_finished(pairs, 3, run, build, builders=2)
    first = [next(results) for _ in range(6)]  # the six that build nothing, while every build waits
    assert {p.id for p, _ in first} == {f"p{i}" for i in range(1, 12, 2)}
    release.set()
    rest = list(results)
    assert sorted(p.id for p, _ in first + rest) == sorted(p.id for p in pairs)
    for pair, result in first + rest:
        assert result["slot"] in (0, 1, 2)
        assert result["built"] == (None if int(pair.id[1:]) % 2 else {"built": pair.id})


def test_builds_are_dealt_one_problem_at_a_time_in_turn(tmp_path):
    """Samples of one problem are the likeliest to share a kernel (fpa's store builds it once): spread apart, a
    sample's turn comes after its twin's build has landed, not beside it, waiting on its lock."""
    from fp_analysis.triage.pool import _as_finished

    pairs = []
    for problem, count in (("a", 3), ("b", 1), ("c", 2)):
        for i in range(count):
            (tmp_path / f"{problem}{i}.py").write_text("from torch.utils.cpp_extension import load_inline\n")
            pairs.append(Pair(f"{problem}{i}", tmp_path / f"{problem}.py", tmp_path / f"{problem}{i}.py"))
    order = []
    results = _as_finished(pairs, 1, lambda pair, built, slot: {}, lambda pair: order.append(pair.id), builders=1)
    assert sorted(pair.id for pair, _ in results) == sorted(pair.id for pair in pairs)
    assert order == ["a0", "b0", "c0", "a1", "c1", "a2"]


def test_the_html_report_is_one_page_with_its_figures_and_escapes_what_the_files_named(tmp_path):
    pytest.importorskip("seaborn")
    from fp_analysis.triage.report import write_report

    rows = []
    for i, (verdict, passed, error) in enumerate([("bug", True, None), ("reference_tf32", False, None),
                                                  ("accumulation_order", True, None), ("user_code_failed", None,
                                                   "ModelNew.forward raised <b>RuntimeError</b>")]):  # fmt: skip
        rows.append({"pair_id": f"level1/p{i % 2}/<script>alert({i})</script>",
                     "problem": f"/r/level1/p{i % 2}/problem.py",
                     "verdict": verdict, "check_passed": passed, "explained": verdict != "bug" and passed is not None,
                     "max_abs": 1e-3 * (i + 1), "candidate_vs_fp64": 10.0 ** -(i + 2) if passed is not None else None,
                     "needed_atol": 2e-4 * (i + 1), "seconds": 1.0, "error": error, "expected": None})  # fmt: skip
    timing = {"device": "cpu", "wall_s": 4.0, "pairs": 4, "pairs_per_hour": 3600.0, "slots": 1, "builders": 0,
              "built_ahead": 0, "build_s": 0.0, "explain_s": 4.0, "slot_idle_share": 0.0}  # fmt: skip
    result = {"pairs": rows, "summary": summarize(rows, 1e-4, 1e-4), "ran": 4, "reused": 0, "timing": timing}
    page = write_report(result, tmp_path / "triage.html", title="fpa triage <runs>").read_text()
    assert page.count("data:image/png;base64,") == 3  # verdicts, errors vs fp64, tolerance needed
    assert "<script>" not in page and "&lt;script&gt;alert(0)&lt;/script&gt;" in page
    assert "&lt;b&gt;RuntimeError&lt;/b&gt;" in page and "False passes: the check passed" in page
    (tmp_path / "a_folder.html").mkdir()
    for bad, message in ((tmp_path / "triage.txt", "HTML page"), (tmp_path / "missing" / "t.html", "does not exist"),
                         (tmp_path / "a_folder.html", "is a folder"), ("", "empty")):  # fmt: skip
        with pytest.raises(ParameterError, match=message):
            write_report(result, bad, title="t")


def test_ray_options_are_checked_before_anything_runs(runs, monkeypatch):
    pairs = discover(runs)
    pytest.importorskip("ray")
    options = ExplainOptions(device="cpu", timeout=5)
    start = time.monotonic()
    with pytest.raises(ParameterError, match="nothing answers there"):  # Ray itself would retry for minutes
        triage(pairs, options, Pool(ray="127.0.0.1:1"), store=False)
    assert time.monotonic() - start < 30
    with pytest.raises(ParameterError, match="--workers and --builders size the local pool"):
        Pool(workers=2, ray="local")
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    with pytest.raises(ParameterError, match=re.escape(install_hint("cluster"))):
        triage(pairs, options, Pool(ray="auto"), store=False)


def test_a_pairs_key_holds_the_sources_it_may_read_and_not_the_other_samples(runs):
    """A helper in a package below the solution (``pkg/helper.py``) is part of the pair: editing it runs the pair
    again; the other samples below the problem's folder are not the problem's helpers."""
    from fp_analysis.run.snapshot import sources_of
    from fp_analysis.triage.discovery import solution_folders
    from fp_analysis.triage.keys import pair_key, snapshots

    pairs = discover(runs)
    skip = solution_folders(pairs)
    conv = runs / "level1" / "conv"
    assert sources_of(conv, skip) == [conv / "problem.py"]  # the sample folders below it are not its helpers
    pair = next(p for p in pairs if p.id.endswith("other_order/solution"))
    other = next(p for p in pairs if p.id.endswith("off_by_one/solution"))
    (pair.solution.parent / "pkg").mkdir()
    helper = pair.solution.parent / "pkg" / "helper.py"
    helper.write_text("SCALE = 1.0\n")
    assert helper in sources_of(pair.solution.parent, skip)

    def keys():
        given = snapshots(pairs)
        options = ExplainOptions(device="cpu")
        return pair_key(given[pair.id], options), pair_key(given[other.id], options)

    before, other_before = keys()
    helper.write_text("SCALE = 1.5\n")
    after, other_after = keys()
    assert after != before  # its helper changed: run it again
    assert other_after == other_before  # another sample's helper is not this pair's
