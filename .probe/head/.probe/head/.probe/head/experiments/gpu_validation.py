"""Validate every kernel variant on a CUDA device and write experiments/results/gpu_validation.json.

    python experiments/gpu_validation.py --kernels-tree $(git rev-parse HEAD:kernels) [--configs 50]

What it checks is ``fpa_kernels.validation``'s to say (its module docstring); this script only runs it and
writes the result.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess

from fpa_kernels.validation import validate_all

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--configs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kernels-tree", default=None)
    parser.add_argument("--out", default=str(ROOT / "experiments" / "results" / "gpu_validation.json"))
    parser.add_argument("--skip-sanitizer", action="store_true")
    args = parser.parse_args()
    tree = (
        args.kernels_tree
        or subprocess.run(["git", "rev-parse", "HEAD:kernels"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
        or "unknown"
    )
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    result = validate_all(
        args.configs,
        args.seed,
        tree,
        sanitize=not args.skip_sanitizer,
        progress=lambda line: print(line, flush=True),
        partial=lambda so_far: out.write_text(json.dumps(so_far) + "\n"),
    )
    out.write_text(json.dumps(result, indent=1) + "\n")
    print("summary", json.dumps(result["summary"]))
    bad = [r for r in result["records"] if r["bitwise_equal"] is False or not r["within_bound"] or not r["all_written"]]
    for r in bad[:25]:
        print(
            "BAD",
            r["op"],
            r["variant"],
            r["config_index"],
            r["bitwise_equal"],
            r["max_err_over_bound"],
            r["all_written"],
        )


if __name__ == "__main__":
    main()
