"""On a GPU: `fpa explain --device cuda` where the user's code is CUDA, and the full-size seed-000 pair.

Runs, each as a user would (a fresh `fpa` process, `--json`): a correct load_inline kernel whose build
prints ninja's lines to stdout (exit 0, and the JSON must still parse), one that makes an illegal memory
access (exit 3, named, the GPU left usable for the next run), one whose kernel outruns `--timeout`
(exit 3 within the timeout plus the start), and the full-size seed-000 files (reference_tf32). Writes
what each gave, with its wall time, to OUT/isolation_<gpu>.json.

    python experiments/device_isolation.py OUT COMMIT
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import time

from device_results import write_results

from fp_analysis.records import loads_strict

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ROOT / "experiments" / "device_cases"
SEED = ROOT / "experiments" / "kernelbench_seed000"

RUNS = [
    # name, problem, solution, extra options, expected exit code
    ("load_inline, correct, prints its build", CASES / "conv_problem.py", CASES / "inline_correct.py", [], 0),
    ("load_inline, illegal memory access", CASES / "conv_problem.py", CASES / "inline_illegal.py", [], 3),
    ("load_inline, kernel outruns --timeout 20", CASES / "conv_problem.py", CASES / "inline_spin.py",
     ["--timeout", "20"], 3),
    ("seed 000, full size", SEED / "problem.py", SEED / "solution.py", [], 0),
]  # fmt: skip


def summary(data: dict | None) -> dict:
    if data is None:
        return {}
    if "error" in data:
        e = data["error"]
        return {k: e.get(k) for k in ("kind", "message", "side", "where", "fate", "detail")}
    return {
        "verdict": data["verdict"],
        "explained": data["explained"],
        "failed_trials": data["mismatch"]["failed_trials"],
        "max_abs_difference": data["mismatch"]["max_abs"],
        "candidate_vs_fp64_max": data["candidate_vs_fp64"].get("max_abs"),
        "reference_vs_fp64_max": data["reference_vs_fp64"].get("max_abs"),
        "reference_tf32_forced": data["context"].get("reference_tf32_forced"),
        "worker_seconds": data["worker"]["seconds"],
        "solution_stdout_bytes": data["worker"]["solution"]["stdout_bytes"],
        "notes": data["notes"],
    }


def main(out: str, commit: str) -> int:
    records = []
    for name, problem, solution, extra, expected in RUNS:
        command = [sys.executable, "-m", "fp_analysis", "explain", "--problem", str(problem), "--solution",
                   str(solution), "--device", "cuda", "--json", "--no-store", *extra]  # fmt: skip
        start = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True, timeout=900)
        seconds = time.monotonic() - start
        data = loads_strict(done.stdout)
        record = {
            "run": name,
            "exit_code": done.returncode,
            "expected_exit_code": expected,
            "json_parses": data is not None,
            "wall_seconds": round(seconds, 2),
            "stderr_first_line": (done.stderr.strip().splitlines() or [""])[0][:300],
            **summary(data),
        }
        records.append(record)
        print(json.dumps(record)[:600], flush=True)
    result = {
        "runs": records,
        "all_as_expected": all(r["exit_code"] == r["expected_exit_code"] and r["json_parses"] for r in records),
    }
    path = write_results(out, "isolation", commit, result)
    print(f"wrote {path}; all as expected: {result['all_as_expected']}")
    return 0 if result["all_as_expected"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
