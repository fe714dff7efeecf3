"""On a GPU: `fpa triage --device cuda` on the load_inline pairs of experiments/triage_gpu_pairs.py.

Runs the command as a user would (a fresh `fpa` process, `--json`, the manifest with expected labels), while
`nvidia-smi` samples the GPUs' utilisation every 200 ms: first from cold (a cache folder of its own, empty: no
extension built yet), then again with another check (`--atol 1e-2`) on the same cache (issue 31: the builds are
found, only the explains run), then once per ``BUILDERS`` value given (cold again). Writes to
OUT/triage_<gpu>.json after each run: what triage measured (pairs per hour, seconds building ahead and explaining,
the share of its GPU slots' time no job held them), the share of nvidia-smi's samples with the GPU at 0 % (idle by
the hardware's account), and each pair's verdict against its label. Also what running the builds inside the jobs
(as `fpa explain` does, no building ahead) would have cost: each pair's build plus explain seconds, one slot after
another — a sum of measured times, not a run.

A run is ``cold`` (a cache and a results store of its own, empty) or ``cached`` (the last cold run's: a run with
another ``atol`` judges the stored rows again, one with another ``seed`` explains every pair again), then
``:option=value`` pairs passed to `fpa triage` as ``--option value`` (``cold:builders=12``,
``cached:seed=7:workers=4``; ``cold:ray=local``: on a local Ray instance, build tasks ahead of the GPU tasks; a plan
with a Ray run is written to OUT/triage_ray_<gpu>.json). Without runs: ``cold cached:atol=1e-2``. ``TRIAGE_PAIRS=N``:
N of the pairs (``_fewer``: every kind of solution from N = 12), for a shorter call.

    python experiments/device_triage.py OUT COMMIT [RUN ...]
"""

from __future__ import annotations

import csv
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from device_results import write_results
from triage_gpu_pairs import write

from fp_analysis.records import loads_strict
from fp_analysis.triage.summary import matches_expected

TIMEOUT_S = 90  # a load_inline build under eight parallel builds must fit in one call


def run_once(folder: pathlib.Path, cache: pathlib.Path, extra: tuple = ()) -> dict | None:
    """One `fpa triage` run with nvidia-smi sampling, fpa's cache in ``cache`` (``XDG_CACHE_HOME``), ``extra``
    options; its record, or None (printed why) when it gave no JSON."""
    samples = folder / "utilization.csv"
    with open(samples, "w") as handle:
        sampler = subprocess.Popen(
            ["nvidia-smi", "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits", "-lms", "200"],
            stdout=handle,
            stderr=subprocess.DEVNULL,
        )
        start = time.monotonic()
        command = [sys.executable, "-m", "fp_analysis", "triage", str(folder / "manifest.csv"), "--device", "cuda",
                   "--timeout", str(TIMEOUT_S), "--json"]  # fmt: skip
        command += list(extra)
        # fpa's caches (builds, the precompiled header) and its results store, both as cold as the run is
        env = {k: v for k, v in os.environ.items() if k != "TORCH_EXTENSIONS_DIR"} | {
            "XDG_CACHE_HOME": str(cache),
            "FPA_STORE": str(cache / "store"),
        }
        # fpa's progress lines to TRIAGE_PROGRESS where it is set (a call cut off by its limit still shows them)
        progress = os.environ.get("TRIAGE_PROGRESS")
        with open(progress or os.devnull, "a") as lines:
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=lines if progress else subprocess.PIPE,
                                  text=True, timeout=1500, env=env)  # fmt: skip
        wall = time.monotonic() - start
        sampler.terminate()
        sampler.wait()
    result = loads_strict(done.stdout)
    if result is None:
        print(f"triage gave no JSON (exit {done.returncode}):\n{done.stdout[-2000:]}\n{(done.stderr or '')[-3000:]}")
        return None
    utilization = [int(line.split(",")[1]) for line in samples.read_text().splitlines() if line.count(",") == 1
                   and line.split(",")[1].strip().isdigit()]  # fmt: skip
    pairs = [
        {k: row.get(k) for k in ("pair_id", "expected", "verdict", "check_passed", "max_abs", "candidate_vs_fp64",
                                 "reference_vs_fp64", "needed_atol", "atol_to_pass", "build_seconds", "seconds",
                                 "extensions_built", "extensions_found", "extensions_own", "extensions_failed",
                                 "error")}
        for row in result["pairs"]
    ]  # fmt: skip
    timing = result["timing"]
    serial = sum((row["build_seconds"] or 0.0) + row["seconds"] for row in result["pairs"]) / timing["slots"]
    record = {
        "command": " ".join(command[1:]).replace(str(folder), "<pairs>"),
        "exit_code": done.returncode,
        "wall_s_with_start": round(wall, 1),
        # the whole command's pairs per hour (its start included): a run that judges stored rows again explains none
        "command_pairs_per_hour": round(3600 * len(result["pairs"]) / wall, 1),
        "ran": result["ran"],
        "reused": result["reused"],
        "rejudged": result.get("rejudged"),
        "timing": timing,
        "nvidia_smi": {
            "samples": len(utilization),
            "idle_share": sum(u == 0 for u in utilization) / len(utilization) if utilization else None,
            "mean_utilization_percent": sum(utilization) / len(utilization) if utilization else None,
        },
        "builds_inside_jobs_estimate_s": round(serial, 1),
        "summary": result["summary"],
        "pairs": pairs,
    }
    matched, labelled = result["summary"]["expected_matched"]
    print(f"triage (builders {timing['builders']}): {len(pairs)} pairs, exit {done.returncode}, {matched}/{labelled} "
          f"as labelled; ran {result['ran']}, reused {result['reused']} ({result.get('rejudged')} judged again), "
          f"{record['command_pairs_per_hour']} pairs/hour with the command's start; timing {timing}")  # fmt: skip
    print(f"nvidia-smi: {record['nvidia_smi']}; builds inside the jobs would take ≈ {serial:.0f} s")
    for row in pairs:
        mark = "ok " if matches_expected(row) else "DIFF"
        print(f"  {mark} {row['pair_id']}: {row['verdict']} (expected {row['expected']}) build {row['build_seconds']} "
              f"(extensions built {row['extensions_built']}, found {row['extensions_found']}, own "
              f"{row['extensions_own']}, failed {row['extensions_failed']}) explain {row['seconds']:.1f} "
              f"{(row['error'] or '')[:120]}")  # fmt: skip
    return record


def _options(spec: str) -> tuple[str, tuple]:
    """``cold:builders=12`` → ("cold", ("--builders", "12"))."""
    kind, *pairs = spec.split(":")
    if kind not in ("cold", "cached") or not all("=" in pair for pair in pairs):
        raise SystemExit(f"a run is cold or cached, then :option=value pairs; got {spec!r}")
    return kind, tuple(part for pair in pairs for part in (f"--{pair.split('=')[0]}", pair.split("=", 1)[1]))


def _fewer(folder: pathlib.Path, rows: list[dict], count: int) -> list[dict]:
    """The manifest cut to ``count`` of its rows: the kinds of solution (its variants) in turn, each kind's rows on
    the problems in turn, starting each kind on another problem, so that a ``count`` of at least the kinds holds
    every kind (the one compile error too) and the problems are spread."""
    if not 0 < count < len(rows):
        kept = rows
    else:
        kinds: dict[str, list[dict]] = {}
        for row in rows:
            kinds.setdefault(row["id"].split("/")[1], []).append(row)
        turns = [each[index % len(each) :] + each[: index % len(each)] for index, each in enumerate(kinds.values())]
        kept = []
        while len(kept) < count:
            for turn in turns:
                if turn and len(kept) < count:
                    kept.append(turn.pop(0))
    with open(folder / "manifest.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["problem", "solution", "id", "expected"])
        writer.writeheader()
        writer.writerows(kept)
    return kept


def main(out: str, commit: str, *specs: str) -> int:
    folder = pathlib.Path(tempfile.mkdtemp(prefix="triage-gpu-"))
    rows = _fewer(folder, write(folder), int(os.environ.get("TRIAGE_PAIRS", "0")))
    # a run on Ray (``cold:ray=local``: the build tasks ahead of the GPU tasks) is recorded apart from the local pool's
    name = "triage_ray" if any(":ray=" in spec for spec in specs) else "triage"
    runs, cache = [], None
    for spec in specs or ("cold", "cached:atol=1e-2"):
        kind, extra = _options(spec)
        if kind == "cold" or cache is None:
            cache = pathlib.Path(tempfile.mkdtemp(prefix="triage-cache-"))
        run = run_once(folder, cache, extra)
        if run is None:
            return 1
        runs.append({"run": spec, **run})
        path = write_results(out, name, commit, {"runs": runs}, pairs=len(rows))  # a later run may outrun the call
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
