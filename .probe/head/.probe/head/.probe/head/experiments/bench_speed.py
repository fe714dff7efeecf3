"""The tool's own speed on this machine, the current tree side by side with a baseline tree, in one run.

Each figure is the median of ``--repeats`` fresh processes, as a user starts them, the trees alternating so that
a change in the machine's load falls on both; each tree runs from its own checkout with the same Python and
packages (the baseline from a `git worktree` of ``--baseline REV``, or from ``--baseline-tree DIR``, a prepared
checkout, where the machine has no history: the GPU machine). Both trees' packages are compiled to bytecode
first (where PYTHONDONTWRITEBYTECODE is set, as on the project's machines, an uncompiled tree pays ~0.9 s of
compiling per process), and numba's cache of each tree's twins is filled, as every run after a first finds it.
The cases (``--cases``, default ``help small_pair``):

- ``help``: `fpa --help`;
- ``small_pair``: `fpa explain` on tests/kernelbench_cases (conv_problem.py, conv_other_order.py), on the CPU;
- ``seed000_cuda``: `fpa explain --device cuda` on the full-size seed-000 pair (experiments/kernelbench_seed000,
  the fpa_kernels direct conv, built before the timing: the build is the solution's, not the tool's);
- ``seed000_cpu``: `fpa explain --reference-mode tf32` on the full-size seed-000 pair with the CPU solution.

Each explain records its verdict and numbers (``--json``), to show they are the same on both trees, and the
peak memory of its processes (the summed proportional set size of the `fpa` process and every process below it,
sampled every 0.25 s). Writes the figures, the ratios and the machine to ``--out``.

    python experiments/bench_speed.py --baseline 3d1589a --out experiments/results/speed_cpu.json
    python experiments/bench_speed.py --baseline-tree /tmp/base --cases seed000_cuda --repeats 1 --out OUT/speed.json
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SEED = "experiments/kernelbench_seed000"
SMALL = ("tests/kernelbench_cases/conv_problem.py", "tests/kernelbench_cases/conv_other_order.py")
CASES = {
    "help": ["--help"],
    "small_pair": ["explain", "--problem", SMALL[0], "--solution", SMALL[1], "--json"],
    "seed000_cuda": ["explain", "--problem", f"{SEED}/problem.py", "--solution", f"{SEED}/solution.py",
                     "--device", "cuda", "--json", "--timeout", "600"],
    "seed000_cpu": ["explain", "--problem", f"{SEED}/problem.py", "--solution", f"{SEED}/solution_cpu.py",
                    "--device", "cpu", "--reference-mode", "tf32", "--json", "--timeout", "1200"],
}  # fmt: skip
# What each explain's --json must agree on between the trees: the verdict and the numbers it rests on.
NUMBERS = ("verdict", "explained", "mismatch.max_abs", "mismatch.failed_trials", "candidate_vs_fp64.max_abs",
           "reference_vs_fp64.max_abs", "recommended_tolerance.atol")  # fmt: skip


def _tree_pss_kb(root_pid: int) -> int:
    """The summed proportional set size (kB) of ``root_pid`` and every process below it, now."""
    children: dict[int, list[int]] = {}
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            for line in pathlib.Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def _tree_env(tree: pathlib.Path, **extra: str) -> dict:
    """The environment a process of ``tree`` runs in: its checkout first on the module path."""
    path = os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


def _run(tree: pathlib.Path, args: list[str], store: str) -> dict:
    """One fresh `fpa` process in ``tree``: its wall time, peak memory, exit code and, for --json, its record."""
    env = _tree_env(tree, FPA_STORE=store)
    peak = [0]
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "fp_analysis", *args], cwd=tree, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip

    def sample():
        while process.poll() is None:
            peak[0] = max(peak[0], _tree_pss_kb(process.pid))
            time.sleep(0.25)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = process.communicate()
    seconds = time.perf_counter() - start
    sampler.join()
    if process.returncode not in (0, 1):
        raise SystemExit(f"{tree}: fpa {' '.join(args)} exited {process.returncode}:\n{err.decode()[-3000:]}")
    run = {"seconds": seconds, "peak_mb": peak[0] / 1024, "exit_code": process.returncode}
    if "--json" in args:
        record = json.loads(out)
        run["numbers"] = {name: _field(record, name) for name in NUMBERS}
        run["worker_seconds"] = (record.get("worker") or {}).get("seconds")
    return run


def _field(record: dict, dotted: str):
    for part in dotted.split("."):
        record = record.get(part) if isinstance(record, dict) else None
    return record


def _warm_caches(tree: pathlib.Path, scratch: str) -> None:
    """One untimed explain of the small pair on the CPU in ``tree``: fills numba's cache of its twins
    (fp_analysis/__pycache__), as any run after a first finds it."""
    _run(tree, [*CASES["small_pair"], "--device", "cpu"], tempfile.mkdtemp(dir=scratch))


def _build_seed000_kernel(tree: pathlib.Path) -> float:
    """Build the seed-000 solution's kernel (fpa_kernels' direct conv) so that no timed run builds it."""
    code = ("import torch; from fpa_kernels import VariantSpec, run_variant; from fp_analysis.ops.conv import "
            "conv2d_spec; s = conv2d_spec(32, 64, (5, 9), padding=(2, 4), dilation=(2, 3), bias=False); "
            "run_variant(VariantSpec('conv2d'), s, torch.rand(1, 32, 64, 64, device='cuda'), "
            "torch.rand(64, 32, 5, 9, device='cuda')); torch.cuda.synchronize()")  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], cwd=tree, env=_tree_env(tree),
                          capture_output=True, text=True)  # fmt: skip
    if done.returncode:
        raise SystemExit(f"{tree}: building the seed-000 kernel failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - start


def _machine() -> dict:
    model = next((line.split(":", 1)[1].strip() for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())  # fmt: skip
    machine = {"cpus": os.cpu_count(), "cpu": model, "python": platform.python_version(),
               "platform": platform.platform()}  # fmt: skip
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True).stdout.strip()  # fmt: skip
    except FileNotFoundError:
        gpu = ""
    if gpu:
        machine["gpu"] = gpu
    return machine


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    base = parser.add_mutually_exclusive_group()
    base.add_argument("--baseline", help="a git revision to compare with (omit both: the current tree alone)")
    base.add_argument("--baseline-tree", type=pathlib.Path, help="a checkout to compare with, as it is")
    parser.add_argument("--baseline-name", help="what to call --baseline-tree in the record (e.g. its commit)")
    parser.add_argument("--cases", nargs="+", choices=sorted(CASES), default=["help", "small_pair"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--commit", help="the current tree's commit, where it has no git history (the GPU machine)")
    parser.add_argument("--out", type=pathlib.Path, required=True)
    options = parser.parse_args()
    if options.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {options.repeats}")
    if options.baseline_tree is not None and not (options.baseline_tree / "fp_analysis").is_dir():
        parser.error(f"--baseline-tree {options.baseline_tree} holds no fp_analysis package")
    commit = options.commit or subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                              text=True).stdout.strip()  # fmt: skip
    trees = {"current": ROOT}
    with tempfile.TemporaryDirectory(prefix="fpa-speed-") as scratch:
        if options.baseline:
            trees["baseline"] = pathlib.Path(scratch) / "baseline"
            subprocess.run(["git", "worktree", "add", "--detach", str(trees["baseline"]), options.baseline], cwd=ROOT,
                           check=True, capture_output=True)  # fmt: skip
        elif options.baseline_tree is not None:
            trees["baseline"] = options.baseline_tree.resolve()
        try:
            for path in trees.values():
                for package in ("fp_analysis", "kernels"):
                    compileall.compile_dir(path / package, quiet=1)
                _warm_caches(path, scratch)
            builds = {}
            if "seed000_cuda" in options.cases:
                builds = {tree: _build_seed000_kernel(path) for tree, path in trees.items()}
            runs: dict = {case: {tree: [] for tree in trees} for case in options.cases}
            for repeat in range(options.repeats):
                for case in options.cases:
                    for tree, path in trees.items():
                        run = _run(path, CASES[case], tempfile.mkdtemp(dir=scratch))
                        runs[case][tree].append(run)
                        print(f"{case} {tree}: {run['seconds']:.2f} s, {run['peak_mb']:.0f} MB", file=sys.stderr)
                print(f"repeat {repeat + 1}/{options.repeats} done", file=sys.stderr)
        finally:
            if options.baseline:
                subprocess.run(["git", "worktree", "remove", "--force", str(trees["baseline"])], cwd=ROOT,
                               capture_output=True)  # fmt: skip
    figures = {}
    for case, by_tree in runs.items():
        figure = {}
        for tree, tree_runs in by_tree.items():
            figure[tree] = {
                "median_s": statistics.median(r["seconds"] for r in tree_runs),
                "peak_mb": max(r["peak_mb"] for r in tree_runs),
                "runs": tree_runs,
            }
        if "baseline" in by_tree:
            figure["baseline_over_current"] = figure["baseline"]["median_s"] / figure["current"]["median_s"]
            numbers = [r.get("numbers") for t in by_tree.values() for r in t]
            figure["same_numbers"] = all(n == numbers[0] for n in numbers)
        figures[case] = figure
    record = {"commit": commit, "baseline": options.baseline or options.baseline_name or str(options.baseline_tree),
              "date": time.strftime("%Y-%m-%d"), "machine": _machine(), "repeats": options.repeats,
              "pythondontwritebytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
              "kernel_build_s": builds, "figures": figures}  # fmt: skip
    options.out.write_text(json.dumps(record, indent=1))
    for case, figure in figures.items():
        line = ", ".join(
            f"{tree} {figure[tree]['median_s']:.2f} s ({figure[tree]['peak_mb']:.0f} MB)" for tree in trees
        )
        ratio = f" ({figure['baseline_over_current']:.2f}× faster)" if "baseline_over_current" in figure else ""
        same = "" if "same_numbers" not in figure else f", same numbers: {figure['same_numbers']}"
        print(f"{case}: {line}{ratio}{same}")
    print(f"wrote {options.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
