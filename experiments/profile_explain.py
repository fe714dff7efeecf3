"""Where an explanation's time goes: the worker's half of `fpa explain` in this process, under cProfile.

Runs ``fp_analysis.explain.job.explain_job`` as the worker runs it (the solution in its own candidate process, whose
time shows here as waiting for its replies), prints each progress event with the seconds since the start, and
writes the verdict, the wall time and the profile's top functions by cumulative time to ``--out``.

    python experiments/profile_explain.py PROBLEM SOLUTION --device cuda --out OUT/profile.txt
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pathlib
import pstats
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("solution")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--reference-mode", default=None)
    parser.add_argument("--top", type=int, default=45)
    parser.add_argument("--out", type=pathlib.Path, required=True)
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    import fp_analysis.explain.job as explain
    import fp_analysis.run.candidate as candidate
    from fp_analysis.options import ExplainOptions

    start = time.perf_counter()
    lines = []

    def report(kind, **fields):  # what the worker would send to the supervisor, timestamped here
        lines.append(f"{time.perf_counter() - start:8.2f} s  {kind} {fields}")
        print(lines[-1], file=sys.stderr, flush=True)

    explain.report_event = report
    candidate.report_event = report  # each call into the solution's process, and its own measure of it
    profile = cProfile.Profile()
    with tempfile.TemporaryDirectory(prefix="fpa-profile-") as folder:
        profile.enable()
        asked = ExplainOptions(options.device, options.reference_mode, timeout=900)  # KernelBench's check otherwise
        result = explain.explain_job(
            options.problem, options.solution, options=asked.to_json(), timeout=asked.timeout, folder=folder
        )
        profile.disable()
    wall = time.perf_counter() - start
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(options.top)
    summary = f"verdict {result['verdict']}, wall {wall:.2f} s\n"
    options.out.write_text(summary + "\n".join(lines) + "\n\n" + text.getvalue())
    print(summary, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
