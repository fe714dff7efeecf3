"""On a GPU: `fpa fuzz --device cuda` on load_inline CUDA candidates, each through its Model's own constructor.

The problems and solutions are those of experiments/device_cases/general (kernels in _kernels.cu, built by
load_inline). Each pair runs as a user would run it (a fresh `fpa` process, `--json`, a fresh example database):

- ConvTranspose2d → LeakyReLU, a naive transposed-conv kernel (one thread an output) over every drawn stride,
  padding, kernel and channel count: no failure expected (TF32 in the reference's cuDNN is arithmetic);
- conv2d (TF32 off) → Mish in a kernel: no failure expected;
- conv2d → bias + ReLU in a kernel that reads channel 4's bias for channel 3: a ``bug``, found once the Model has
  more than 3 output channels, shrunk to the fewest channels and smallest input that show it.

Writes each run's counts, verdicts, wall time and failure (config in the user's names, convs, replay command) to
OUT/fuzz_<gpu>.json.

    python experiments/device_fuzz.py OUT COMMIT
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

from device_explain_general import CASES
from device_results import run_checked, write_results

# name, problem stem, examples, what must hold (in words, and as a check of the --json result)
RUNS = [
    ("naive ConvTranspose2d kernel → LeakyReLU", "leaky", 200, "no failure in 200 examples",
     lambda d: d["failures"] == [] and d["examples"] == 200),
    ("conv2d (TF32 off) → Mish kernel", "mish", 200, "no failure in 200 examples",
     lambda d: d["failures"] == [] and d["examples"] == 200),
    ("bias + ReLU kernel reading channel 4's bias for channel 3", "slip", 200,
     "a bug, shrunk to 4 or 5 output channels",
     lambda d: len(d["failures"]) == 1 and d["failures"][0]["explanation"]["verdict"] == "bug"
     and d["failures"][0]["config"]["out_channels"] in (4, 5)),
]  # fmt: skip


def _summary(data: dict) -> dict:
    if "error" in data:
        return {"error": {k: data["error"].get(k) for k in ("kind", "message", "side", "where")}}
    failures = [
        {
            "config": f["config"],
            "convs": f["convs"],
            "verdict": f["explanation"].get("verdict"),
            "evidence": f["explanation"].get("evidence")
            or "; ".join(c["evidence"] for c in f["explanation"].get("causes", [])),
            "command": f["command"],
        }
        for f in data["failures"]
    ]
    keep = ("examples", "shrink_steps", "refused", "refusals", "verdicts", "drawn")
    return {**{k: data.get(k) for k in keep}, "failures": failures, "worker_seconds": data["worker"]["seconds"]}


def main(out: str, commit: str) -> int:
    sys.path.insert(0, str(CASES))
    start = time.monotonic()
    import _general_kernels  # built here once, so each solution's import loads it from the cache

    _general_kernels.precise()
    build_seconds = time.monotonic() - start
    print(f"built the case kernels in {build_seconds:.0f} s", flush=True)
    records = []
    for name, stem, examples, expected, check in RUNS:
        with tempfile.TemporaryDirectory() as database:
            command = [sys.executable, "-m", "fp_analysis", "fuzz", "--problem", str(CASES / f"{stem}_problem.py"),
                       "--solution", str(CASES / f"{stem}_solution.py"), "--device", "cuda",
                       "--max-examples", str(examples), "--json"]  # fmt: skip
            data, record = run_checked(
                name, expected, check, command, timeout=500, env={**os.environ, "FPA_HYPOTHESIS_DB": database}
            )
        record.update(_summary(data))
        records.append(record)
        print(json.dumps(record)[:1500], flush=True)
        body = {
            "runs": records,
            "all_as_expected": len(records) == len(RUNS) and all(r["as_expected"] for r in records),
        }
        path = write_results(out, "fuzz", commit, body, kernel_build_seconds=round(build_seconds, 1))
    print(f"wrote {path}; all as expected: {all(r['as_expected'] for r in records)}")
    return 0 if all(r["as_expected"] for r in records) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
