"""On a GPU: `fpa explain --device cuda` on whole KernelBench-style Models beyond the seed ops, with CUDA solutions.

The problems and solutions are in experiments/device_cases/general (their kernels in _kernels.cu, built by
load_inline, plain and with --use_fast_math). Each pair runs as a user would run it (a fresh `fpa` process,
`--json`), and its verdict is checked against what the solution does:

- conv2d → Mish, the conv with TF32 off and Mish in a kernel: the reference's TF32 named;
- ConvTranspose3d → GELU, GELU's tanh form in a kernel: ``gelu_approximation`` on the candidate;
- conv2d → GroupNorm → tanh, norm and tanh fused and built with --use_fast_math: the reference's TF32;
- ConvTranspose2d → LeakyReLU, a naive transposed-conv kernel: the reference's TF32;
- Conv3d → LeakyReLU → clamp, torch's conv3d with TF32 as the reference has it: ``shared_tf32``;
- conv2d, bias + ReLU in a kernel that reads the wrong channel's bias: ``bug``, located in channel 3;
- the full-size seed-000 pair with fpa_kernels' direct conv: the reference's TF32, the candidate ≤ 5e-6 of fp64.

Writes each run's verdict, causes, location, distances to fp64 and wall time to OUT/explain_general_<gpu>.json.

    python experiments/device_explain_general.py OUT COMMIT
"""

from __future__ import annotations

import json
import pathlib
import sys

from device_results import run_checked, warm_extensions, write_results

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ROOT / "experiments" / "device_cases" / "general"
SEED = ROOT / "experiments" / "kernelbench_seed000"


def _names(data: dict) -> list[str]:
    return [c["name"] for c in data.get("causes", [])]


def _channels(data: dict) -> list[str]:
    return list((data.get("location") or {}).get("channels", {}))


# name, problem stem or (problem, solution), what the verdict must satisfy (in words, and as a check)
RUNS = [
    ("conv2d → Mish", "mish", "reference_tf32 named", lambda d: "reference_tf32" in _names(d)),
    ("ConvTranspose3d → GELU (tanh form)", "gelu", "gelu_approximation on the candidate",
     lambda d: any(c["name"] == "gelu_approximation" and c["side"] == "candidate" for c in d["causes"])),
    ("conv2d → GroupNorm → tanh, fast-math", "groupnorm", "reference_tf32 named",
     lambda d: "reference_tf32" in _names(d)),
    ("ConvTranspose2d → LeakyReLU, naive kernel", "leaky", "reference_tf32 named",
     lambda d: "reference_tf32" in _names(d)),
    ("Conv3d → LeakyReLU → clamp, both TF32", "clamp", "shared_tf32", lambda d: _names(d) == ["shared_tf32"]),
    ("conv2d, bias + ReLU reading channel 4's bias for 3", "slip", "bug in channel 3 only",
     lambda d: d["verdict"] == "bug" and _channels(d) == ["3"]),
    ("seed 000, full size", (SEED / "problem.py", SEED / "solution.py"), "reference_tf32, candidate ≤ 5e-6 of fp64",
     lambda d: d["verdict"] == "reference_tf32" and d["candidate_vs_fp64"]["max_abs"] <= 5e-6),
]  # fmt: skip


def _summary(data: dict) -> dict:
    if "error" in data:
        return {"error": {k: data["error"].get(k) for k in ("kind", "message", "side", "where")}}
    return {
        "verdict": data["verdict"],
        "explained": data["explained"],
        "causes": [{k: c[k] for k in ("name", "side", "op", "residual_units", "residual_max")} for c in data["causes"]],
        "failed_trials": data["mismatch"]["failed_trials"],
        "max_abs_difference": data["mismatch"]["max_abs"],
        "candidate_vs_fp64_max": data["candidate_vs_fp64"].get("max_abs"),
        "reference_vs_fp64_max": data["reference_vs_fp64"].get("max_abs"),
        "recommended_tolerance": {k: data["recommended_tolerance"].get(k) for k in ("atol", "rtol")},
        "floor": data["floor"],
        "location": data["location"].get("summary"),
        "analysed_batch_items": data["context"].get("analysed_batch_items"),
        "reference_tf32_forced": data["context"].get("reference_tf32_forced"),
        "worker_seconds": data["worker"]["seconds"],
    }


def main(out: str, commit: str) -> int:
    pairs = [files if isinstance(files, tuple) else (CASES / f"{files}_problem.py", CASES / f"{files}_solution.py")
             for _, files, _, _ in RUNS]  # fmt: skip
    # every solution's folder built ahead, in parallel, both ways: the runs then time the explain, not nvcc
    build_seconds = warm_extensions(
        [pair for pair in pairs if pair[1].parent == CASES],
        "import _general_kernels; _general_kernels.precise(); _general_kernels.fast()",
        CASES,
    )
    print(f"built the case kernels in {build_seconds:.0f} s", flush=True)
    records = []
    for (name, _, expected, check), (problem, solution) in zip(RUNS, pairs, strict=True):
        command = [sys.executable, "-m", "fp_analysis", "explain", "--problem", str(problem), "--solution",
                   str(solution), "--device", "cuda", "--json", "--no-store"]  # fmt: skip
        data, record = run_checked(name, expected, check, command, timeout=900)
        record.update(_summary(data))
        records.append(record)
        print(json.dumps(record)[:900], flush=True)
        path = _write(out, commit, build_seconds, records)  # after each run: a later one may outrun the call
    print(f"wrote {path}; all as expected: {all(r['as_expected'] for r in records)}")
    return 0 if all(r["as_expected"] for r in records) else 1


def _write(out: str, commit: str, build_seconds: float, records: list[dict]) -> pathlib.Path:
    body = {"runs": records, "all_as_expected": len(records) == len(RUNS) and all(r["as_expected"] for r in records)}
    return write_results(out, "explain_general", commit, body, kernel_build_seconds=round(build_seconds, 1))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
