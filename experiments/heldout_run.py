"""Run the held-out set of issue 28: `fpa explain --json` on every manifest row, checked against its expectations.

    .venv/bin/python experiments/heldout_run.py [--only PATTERN] [--jobs 1] [--manifest CSV]

Each row: the exit code must equal expect_exit; every name in must_contain (space-separated) must be among the
verdict's causes, none of must_not_contain; where location_contains is set, it (case-insensitive) must occur in
location.summary or in the bug cause's evidence. One line per pair, totals per class, the rows and totals in
experiments/results/heldout_28.json (``--out``); exit 0 only if every pair passes. Issue 29's set of activations,
softmax and norms written as kernels write them: ``--manifest experiments/heldout/issue29/manifest.csv --out
experiments/results/heldout_29.json``.
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "experiments/heldout/issue28/manifest.csv"
RESULTS = ROOT / "experiments/results/heldout_28.json"


def _shown(path: Path) -> str:
    """``path`` relative to the repository where it is inside it (the record names no machine's folders)."""
    resolved = Path(path).resolve()
    return str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT) else str(path)


def explain(row: dict, folder: Path, device: str, timeout: float) -> dict:
    """Run fpa explain on one row; the parsed JSON (or an error record) and the exit code."""
    cmd = [str(ROOT / ".venv/bin/fpa"), "explain", "--problem", str(folder / row["problem"])]
    cmd += ["--solution", str(folder / row["solution"]), "--json", "--no-store", "--device", device]
    cmd += row["args"].split()
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"exit": None, "data": {}, "seconds": timeout, "failure": f"timed out after {timeout:.0f} s"}
    seconds = round(time.monotonic() - start, 1)
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        return {"exit": proc.returncode, "data": {}, "seconds": seconds, "failure": f"no JSON: {tail[0][:100]}"}
    return {"exit": proc.returncode, "data": data, "seconds": seconds, "failure": None}


def judge(row: dict, run: dict) -> dict:
    """The row's result: ok, verdict, causes and the reasons it misses."""
    data = run["data"]
    if "error" in data:
        err = data["error"]
        verdict, causes, where = err.get("kind", "error"), set(), err.get("message", "")[:100]
    else:
        verdict = data.get("verdict", "")
        causes = {c["name"] for c in data.get("causes", [])} | set(filter(None, verdict.split(" + ")))
        bug = [c.get("evidence", "") for c in data.get("causes", []) if c["name"] == "bug"]
        where = " | ".join(filter(None, [data.get("location", {}).get("summary", ""), *bug]))
    reasons = [run["failure"]] if run["failure"] else []
    if run["exit"] != int(row["expect_exit"]):
        reasons.append(f"exit {run['exit']} not {row['expect_exit']}")
    reasons += [f"no {name}" for name in row["must_contain"].split() if name not in causes]
    reasons += [f"has {name}" for name in row["must_not_contain"].split() if name in causes]
    loc = row["location_contains"].strip()
    if loc and loc.lower() not in where.lower():
        reasons.append(f"location lacks '{loc}'")
    return {
        "pair": row["pair"], "class": row["class"], "ok": not reasons, "exit": run["exit"], "verdict": verdict,
        "causes": sorted(causes), "reasons": reasons, "location": where, "seconds": run["seconds"],
        "args": row["args"], "expect_exit": int(row["expect_exit"]),
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run only the pairs whose name contains PATTERN")
    parser.add_argument("--jobs", type=int, default=1, help="pairs run at once (default 1: sequentially)")
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the rows and totals are written")
    parser.add_argument("--device", default="cpu", help="passed to fpa explain (the set is written for the CPU)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per pair")
    args = parser.parse_args()
    with open(args.manifest, newline="") as f:
        rows = [r for r in csv.DictReader(f) if args.only in r["pair"]]
    if not rows:
        print(f"no pair matches {args.only!r}", file=sys.stderr)
        return 2
    folder = args.manifest.resolve().parent

    def one(row: dict) -> dict:
        result = judge(row, explain(row, folder, args.device, args.timeout))
        mark = "ok  " if result["ok"] else "MISS"
        why = "; ".join(result["reasons"]) + (f" [{result['location'][:120]}]" if result["reasons"] else "")
        print(f"{row['pair']:32s} {row['class']:18s} {mark} exit {result['exit']} {result['verdict']:40s} {why}")
        sys.stdout.flush()
        return result

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(one, rows))
    passed, total = Counter(), Counter()
    for r in results:
        total[r["class"]] += 1
        passed[r["class"]] += r["ok"]
    print()
    for cls in total:
        print(f"{cls:18s} {passed[cls]:3d} of {total[cls]:3d}")
    print(f"{'all':18s} {sum(passed.values()):3d} of {len(results):3d}")
    git = lambda *a: subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()  # noqa: E731
    commit, dirty = git("rev-parse", "HEAD"), bool(git("status", "--porcelain", "--", "fp_analysis"))
    totals = {cls: {"passed": passed[cls], "total": total[cls]} for cls in total}
    totals["all"] = {"passed": sum(passed.values()), "total": len(results)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    record = {"commit": commit, "fp_analysis_uncommitted_changes": dirty, "manifest": _shown(args.manifest)}
    record.update(only=args.only, rows=results, totals=totals)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
