"""The tool's own speed on this machine, the current tree side by side with a baseline tree, in one run.

Each figure is the median of ``--repeats`` fresh processes, as a user starts them: `fpa --help`, and
`fpa explain` on the small KernelBench pair of tests/kernelbench_cases (conv_problem.py, conv_other_order.py;
the results store in a temporary folder, as by default). Each tree runs from its own checkout (the baseline
from a `git worktree` of ``--baseline``) with the same Python and packages, alternating between trees so that a
change in the machine's load falls on both. Writes the figures, the ratio and the machine to ``--out``.

    python experiments/bench_speed.py --baseline 3d1589a --out experiments/results/speed_cpu.json
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAIR = ("tests/kernelbench_cases/conv_problem.py", "tests/kernelbench_cases/conv_other_order.py")


def _wall(tree: pathlib.Path, args: list[str], store: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "FPA_STORE": store}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "fp_analysis", *args], cwd=tree, env=env, capture_output=True)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{tree}: fpa {' '.join(args)} exited {done.returncode}:\n{done.stderr.decode()[-2000:]}")
    return seconds


def _machine() -> dict:
    model = next((line.split(":", 1)[1].strip() for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())  # fmt: skip
    return {"cpus": os.cpu_count(), "cpu": model, "python": platform.python_version(), "platform": platform.platform()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", help="a git revision to compare with (omit: the current tree alone)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    options = parser.parse_args()
    if options.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {options.repeats}")
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    trees = {"current": ROOT}
    with tempfile.TemporaryDirectory(prefix="fpa-speed-") as scratch:
        if options.baseline:
            base = pathlib.Path(scratch) / "baseline"
            subprocess.run(["git", "worktree", "add", "--detach", str(base), options.baseline], cwd=ROOT,
                           check=True, capture_output=True)  # fmt: skip
            trees["baseline"] = base
        try:
            cases = {"fpa --help": ["--help"], "fpa explain (small pair)": ["explain", "--problem", PAIR[0],
                                                                            "--solution", PAIR[1]]}  # fmt: skip
            times: dict = {name: {tree: [] for tree in trees} for name in cases}
            for repeat in range(options.repeats):
                for name, args in cases.items():
                    for tree, path in trees.items():
                        store = tempfile.mkdtemp(dir=scratch)
                        times[name][tree].append(_wall(path, args, store))
                print(f"repeat {repeat + 1}/{options.repeats} done", file=sys.stderr)
        finally:
            if options.baseline:
                subprocess.run(["git", "worktree", "remove", "--force", str(trees["baseline"])], cwd=ROOT,
                               capture_output=True)  # fmt: skip
    figures = {}
    for name, by_tree in times.items():
        figures[name] = {tree: {"median_s": statistics.median(v), "runs_s": v} for tree, v in by_tree.items()}
        if "baseline" in by_tree:
            figures[name]["baseline_over_current"] = (
                figures[name]["baseline"]["median_s"] / figures[name]["current"]["median_s"]
            )
    record = {"commit": commit, "baseline": options.baseline, "date": time.strftime("%Y-%m-%d"),
              "machine": _machine(), "repeats": options.repeats, "figures": figures}  # fmt: skip
    options.out.write_text(json.dumps(record, indent=1))
    for name, figure in figures.items():
        line = ", ".join(f"{tree} {figure[tree]['median_s']:.2f} s" for tree in trees)
        ratio = f" ({figure['baseline_over_current']:.2f}× faster)" if "baseline_over_current" in figure else ""
        print(f"{name}: {line}{ratio}")
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
