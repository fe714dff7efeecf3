"""How long `fpa fuzz` takes on a CPU: 200 examples of each correct pair, and finding + shrinking each planted bug.

    python experiments/bench_fuzz.py [--examples 200] [--out experiments/results/fuzz_cpu.json]

Each pair of tests/fuzz_cases runs as a user runs it: a fresh `fpa fuzz ... --device cpu --json` process (its
start, the worker's and the candidate's, included) with a fresh example database, one pair at a time. Prints
wall seconds, examples, shrink runs and verdict counts per pair, and writes them with the machine (CPU model,
cores, Python, torch) and the commit. Target (issue: fuzz through the user's constructor): 200 examples of a
small correct pair in ≤ 60 s on the 2-core CPU machine.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "fuzz_cases"
CORRECT = [
    ("kk1_int_problem", "kk1_int_correct"),
    ("conv3d_full_problem", "conv3d_full_correct"),
    ("convT2d_problem", "convT2d_correct"),
    ("convT3d_gelu_problem", "convT3d_gelu_tanh"),
    ("conv_norm_affine_problem", "conv_norm_affine_fused"),
]
BUGGY = [
    ("kk1_int_problem", "kk1_int_bug_depth_padding"),
    ("kk1_int_problem", "kk1_int_bug_depth_stride"),
    ("conv3d_full_problem", "conv3d_full_bug_group_offset"),
    ("convT2d_problem", "convT2d_bug_output_padding"),
    ("conv_norm_affine_problem", "conv_norm_affine_bug_bias_channel"),
]


def _run(problem: str, solution: str, examples: int) -> dict:
    with tempfile.TemporaryDirectory() as database:
        command = [sys.executable, "-m", "fp_analysis", "fuzz", "--problem", str(CASES / f"{problem}.py"),
                   "--solution", str(CASES / f"{solution}.py"), "--device", "cpu", "--max-examples", str(examples),
                   "--json"]  # fmt: skip
        start = time.perf_counter()
        done = subprocess.run(
            command, capture_output=True, text=True, env={**os.environ, "FPA_HYPOTHESIS_DB": database}
        )
        seconds = time.perf_counter() - start
    data = json.loads(done.stdout)
    if "error" in data:  # the search could not run (exit 2) or the user's code failed outside an example (3)
        return {"problem": problem, "solution": solution, "exit_code": done.returncode,
                "wall_seconds": round(seconds, 2), "error": data["error"].get("message"), "examples": 0,
                "shrink_steps": 0, "refused": 0, "verdicts": {}, "minimal_failure": None}  # fmt: skip
    failure = data["failures"][0]["config"] if data["failures"] else None
    return {
        "problem": problem,
        "solution": solution,
        "exit_code": done.returncode,
        "wall_seconds": round(seconds, 2),
        "worker_seconds": round(data["worker"]["seconds"], 2),
        "examples": data["examples"],
        "shrink_steps": data["shrink_steps"],
        "refused": data["refused"],
        "verdicts": data["verdicts"],
        "minimal_failure": failure,
    }


def _cpu() -> str:
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--out", default=str(ROOT / "experiments" / "results" / "fuzz_cpu.json"))
    args = parser.parse_args()
    import torch

    rows = []
    for kind, pairs in (("correct", CORRECT), ("buggy", BUGGY)):
        for problem, solution in pairs:
            row = {"kind": kind, **_run(problem, solution, args.examples)}
            rows.append(row)
            verdicts = ", ".join(f"{n} {v}" for v, n in sorted(row["verdicts"].items(), key=lambda kv: -kv[1]))
            counts = f"{row['examples']:4d} examples  {row['shrink_steps']:4d} shrink runs  exit {row['exit_code']}"
            print(f"{solution:36s} {row['wall_seconds']:6.1f} s  {counts}  ({verdicts})", flush=True)
    correct = [r["wall_seconds"] for r in rows if r["kind"] == "correct"]
    print(f"correct pairs, {args.examples} examples: {min(correct):.1f} … {max(correct):.1f} s (target ≤ 60 s)")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    meta = {
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "commit": commit,
        "date": time.strftime("%Y-%m-%d"),
        "examples": args.examples,
    }
    pathlib.Path(args.out).write_text(json.dumps({"meta": meta, "runs": rows}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
