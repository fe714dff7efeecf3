"""``fpa triage`` running pairs: each explained apart (a crash or hang is its own row), stored as it finishes
and not run again after a kill, locally or as Ray tasks.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time

import pytest

from fp_analysis.numerics import allclose
from fp_analysis.options import ExplainOptions
from fp_analysis.store import read_store
from fp_analysis.triage.discovery import discover
from fp_analysis.triage.pairs import triage
from fp_analysis.triage.pool import Pool

from ..triage_corpus import EXPECTED, FALSE_PASS, write_corpus
from ..triage_corpus import runs as runs  # a pytest fixture

# Seconds a call into a corpus pair's code may take: the hang waits this long, and on CI's two loaded cores a
# pair summing its convolutions in fp64 once took over 4 s.
CORPUS_TIMEOUT = 8


@pytest.mark.long
def test_thirty_nine_pairs_get_their_verdicts_and_a_killed_triage_resumes(tmp_path):
    """``fpa triage`` on tests/triage_corpus.py's folder, killed (SIGKILL, workers and all) after a few pairs are
    stored; the next triage runs only the others, and every pair gets its verdict: identical, TF32, fp64 sums,
    GELU's tanh form, bugs (one under the check's tolerance: a false pass), NaN, and user code that raises,
    hangs, exits, segfaults, prints or is no KernelBench solution, each only its own row."""
    runs, store = tmp_path / "runs", tmp_path / "store"
    expected = write_corpus(runs)
    assert len(expected) == 39
    env = {**os.environ, "FPA_STORE": str(store)}
    command = [sys.executable, "-m", "fp_analysis", "triage", str(runs), "--device", "cpu", "--workers", "2",
               "--trials", "1", "--timeout", str(CORPUS_TIMEOUT), "--json"]  # fmt: skip
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(store.glob("run-*.parquet"))) < 5 and process.poll() is None:
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)  # the triage, its fork server and its workers, as an OOM killer would
    process.wait()
    finished = {row["pair_id"] for row in read_store(store, command="triage").to_pylist()}
    assert 5 <= len(finished) < len(expected)

    seen = []
    options = ExplainOptions(device="cpu", timeout=CORPUS_TIMEOUT, trials=1)
    result = triage(discover(runs), options, Pool(workers=2), store_dir=store, on_progress=seen.append)
    assert result["reused"] >= len(finished) and result["reused"] + result["ran"] == len(expected)
    wrong = {
        r["pair_id"]: (r["verdict"], r["error"]) for r in result["pairs"] if r["verdict"] not in expected[r["pair_id"]]
    }
    assert not wrong
    assert [s["done"] for s in seen] == list(range(result["reused"] + 1, len(expected) + 1))
    assert result["summary"]["false_passes"] == [FALSE_PASS]
    rows = {row["pair_id"]: row for row in result["pairs"]}
    failures = {name: rows[f"level1/conv2d_mish/{name}/solution"]["error"] for name in ("hangs", "exits", "segfault")}
    assert f"did not return within {CORPUS_TIMEOUT} s" in failures["hangs"]
    assert "exited with status 7" in failures["exits"]
    assert "SIGSEGV" in failures["segfault"]
    assert len(read_store(store, command="triage")) == len(expected)  # each pair stored once


def test_a_stored_pair_is_reused_only_for_the_same_files_options_and_helpers(runs, tmp_path):
    """Resuming: a pair stored with the same files, check options and helper modules is not run again, and is
    shown as the pair it is now (another pair may have stored the same contents); other options run it again."""
    store = tmp_path / "store"
    options, pool = ExplainOptions(device="cpu", timeout=4, trials=1), Pool(workers=2)
    result = triage(discover(runs), options, pool, store_dir=store)
    assert result["ran"] + result["reused"] == 6
    assert {row["pair_id"]: row["verdict"] for row in result["pairs"]} == EXPECTED, result["pairs"]
    rows = {row["pair_id"]: row for row in result["pairs"]}
    assert "raised ValueError" in rows["level1/usercode/raises/solution"]["error"]
    assert "did not return within 4 s" in rows["level1/usercode/hangs/solution"]["error"]
    assert rows["level1/conv/off_by_one/solution"]["exit_code"] == 1 and rows["level1/gelu/tanh/solution"]["explained"]
    assert rows["level1/conv/off_by_one/solution"]["needed_atol"] is None  # no atol makes a bug right
    assert rows["level1/gelu/tanh/solution"]["needed_atol"] > 0
    summary = result["summary"]
    assert summary["by_problem"][str(runs / "level1/usercode/problem.py")] == {"user_code_failed": 3}
    assert set(summary["needed_atol_by_problem"]) == {str(runs / "level1/conv/problem.py"),
                                                       str(runs / "level1/gelu/problem.py")}  # fmt: skip
    assert len(read_store(store, command="triage")) <= 6  # one stored run per pair at most
    again = triage(discover(runs), options, pool, store_dir=store)
    assert (again["ran"], again["reused"]) == (0, 6)
    # A reused result is shown as the pair it is now, even where another pair stored it (same contents).
    assert [r["pair_id"] for r in again["pairs"]] == [p.id for p in discover(runs)]
    assert [r["verdict"] for r in again["pairs"]] == [r["verdict"] for r in result["pairs"]]
    # Another atol: every stored row is the pair's, its check judged again from the smallest atol that passes it —
    # as the check run afresh at that atol judges it (here the GELU pair's own: it passes there, and below it not).
    threshold = rows["level1/gelu/tanh/solution"]["atol_to_pass"]
    assert threshold > 0.0  # the tanh form differs from erf's
    checks = {}
    for atol, gelu_passes in ((threshold, True), (allclose._below(threshold), False)):
        judged = triage(discover(runs), dataclasses.replace(options, atol=atol), pool, store_dir=store)
        assert (judged["ran"], judged["reused"], judged["rejudged"]) == (0, 6, 6)
        checks[atol] = {r["pair_id"]: r["check_passed"] for r in judged["pairs"]}
        assert checks[atol]["level1/gelu/tanh/solution"] is gelu_passes
        assert [r["verdict"] for r in judged["pairs"]] == [r["verdict"] for r in result["pairs"]]
    explained = [p for p in discover(runs) if rows[p.id]["check_passed"] is not None]
    assert len(explained) == 3
    fresh = triage(explained, dataclasses.replace(options, atol=threshold), pool, store=False)
    afresh = {r["pair_id"]: r["check_passed"] for r in fresh["pairs"]}
    assert afresh == {p.id: checks[threshold][p.id] for p in explained}
    pair = next(p for p in discover(runs) if p.id.endswith("raises/solution"))
    other_trials = dataclasses.replace(options, trials=2)
    assert triage([pair], other_trials, pool, store_dir=store)["ran"] == 1  # other check options: not the stored pair
    other_timeout = dataclasses.replace(options, timeout=6)
    assert triage([pair], other_timeout, pool, store_dir=store)["ran"] == 1  # nor another timeout
    (pair.solution.parent / "_conv.py").write_text((pair.solution.parent / "_conv.py").read_text() + "\n# edited\n")
    assert triage([pair], options, pool, store_dir=store)["ran"] == 1  # nor an edited helper module beside the solution


# What a solution the triage takes for one that builds an extension (it names torch.utils.cpp_extension) adds to
# its import: a line counting the import (``tag``, and what it saw) in a file of the folder its builds go to, then
# ``then``
_COUNTED_IMPORT = """
import os, pathlib  # torch.utils.cpp_extension: built ahead, as a load_inline solution
with open(pathlib.Path(os.environ["TORCH_EXTENSIONS_DIR"]) / "imports.txt", "a") as counted:
    counted.write(f"{tag} {{os.environ.get('TORCH_CUDA_ARCH_LIST')!r}} {{os.environ.get('CUDA_VISIBLE_DEVICES')!r}}\\n")
{then}
"""
_BUILT_AHEAD = {  # sample: what its import does after counting itself, its verdict
    "built_ahead": ("", EXPECTED["level1/conv/other_order/solution"]),
    "compile_fails": ("raise RuntimeError(\"Error building extension 'case': \" + __file__)", "user_code_failed"),
    "needs_a_gpu": ("raise RuntimeError('Found no NVIDIA driver on your system')", "user_code_failed"),
}


@pytest.mark.long
def test_a_triage_on_a_local_ray_instance_gives_the_local_pools_verdicts(runs, tmp_path, monkeypatch):
    """``--ray local``: each pair a Ray task (its files shipped as contents, explained on the node in its own
    processes); the verdicts ``EXPECTED`` holds for the local pool, a hang only its own row (arithmetic, a bug and
    a hang: the whole corpus through Ray is the slow test below). With ``--build-cache`` each task's solution builds
    in that folder (one a cluster's nodes all mount), not in the node's own cache. A solution that builds an
    extension is imported first by a build task of its own, with no GPU visible, then by its explain task, in the
    same folder under the same architectures, and its row has the build's seconds; one whose extension does not
    compile is reported from its build, not compiled again; one whose import fails otherwise (without a GPU, say) is
    imported again by its explain task."""
    pytest.importorskip("ray")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "node_cache"))
    tools = tmp_path / "tools"  # an nvidia-smi that lists one Hopper GPU: the architectures the builds are made for
    tools.mkdir()
    (tools / "nvidia-smi").write_text("#!/bin/sh\necho 9.0\n")
    (tools / "nvidia-smi").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    shared = tmp_path / "shared_builds"
    other_order = (runs / "level1/conv/other_order/solution.py").read_text()
    for sample, (then, _) in _BUILT_AHEAD.items():
        (runs / "level1" / "conv" / sample).mkdir()
        text = other_order + _COUNTED_IMPORT.format(tag=sample, then=then)
        (runs / "level1" / "conv" / sample / "solution.py").write_text(text)
    picked = ("other_order", "off_by_one", "hangs", *_BUILT_AHEAD)
    pairs = [p for p in discover(runs) if p.id.split("/")[2] in picked]
    pool = Pool(ray="local", build_cache=str(shared))
    result = triage(pairs, ExplainOptions(device="cpu", timeout=3, trials=1), pool, store=False)
    # a folder per solution whose files differ (each solution process is given its own, and may write only there)
    assert len([folder for folder in shared.iterdir() if not folder.name.startswith(".")]) == len(pairs)  # not locks
    assert not (tmp_path / "node_cache" / "fp_analysis" / "extensions").exists()
    expected = {**EXPECTED, **{f"level1/conv/{sample}/solution": v for sample, (_, v) in _BUILT_AHEAD.items()}}
    assert {row["pair_id"]: row["verdict"] for row in result["pairs"]} == {p.id: expected[p.id] for p in pairs}
    rows = {row["pair_id"]: row for row in result["pairs"]}
    assert "did not return within 3 s" in rows["level1/usercode/hangs/solution"]["error"]
    assert rows["level1/conv/off_by_one/solution"]["solution"] == str(runs / "level1/conv/off_by_one/solution.py")
    assert result["timing"]["slots"] >= 1 and result["ran"] == len(pairs)
    imports = {sample: [] for sample in _BUILT_AHEAD}  # the (TORCH_CUDA_ARCH_LIST, CUDA_VISIBLE_DEVICES) each saw
    for counted in shared.glob("*/imports.txt"):
        for sample, *seen in (line.split() for line in counted.read_text().splitlines()):
            imports[sample].append(tuple(seen))
    # the build task's import sees no GPU and builds for the one nvidia-smi lists; the explain's for the same, so it
    # finds the build
    assert imports["built_ahead"] == [("'9.0+PTX'", "''"), ("'9.0+PTX'", imports["built_ahead"][1][1])]
    assert len(imports["compile_fails"]) == 1 and len(imports["needs_a_gpu"]) == 2
    assert rows["level1/conv/compile_fails/solution"]["error"] == (  # the original file named, not the node's copy
        f"importing solution.py raised RuntimeError: Error building extension 'case': "
        f"{runs / 'level1/conv/compile_fails/solution.py'}"
    )
    assert all(rows[f"level1/conv/{sample}/solution"]["build_seconds"] > 0 for sample in _BUILT_AHEAD)
    assert all(rows[p.id]["build_seconds"] is None for p in pairs if p.id.split("/")[2] not in _BUILT_AHEAD)


@pytest.mark.slow
def test_the_thirty_nine_pairs_on_a_local_ray_instance_get_their_verdicts(tmp_path):
    """The corpus of ``test_thirty_nine_pairs_get_their_verdicts_and_a_killed_triage_resumes`` through Ray."""
    pytest.importorskip("ray")
    expected = write_corpus(tmp_path / "runs")
    options = ExplainOptions(device="cpu", timeout=CORPUS_TIMEOUT, trials=1)
    result = triage(discover(tmp_path / "runs"), options, Pool(ray="local"), store=False)
    wrong = {
        r["pair_id"]: (r["verdict"], r["error"]) for r in result["pairs"] if r["verdict"] not in expected[r["pair_id"]]
    }
    assert not wrong and result["summary"]["false_passes"] == [FALSE_PASS]
