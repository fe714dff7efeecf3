"""On a GPU: `fpa explain --device cuda` on Models without convolutions — sums, a scan, norms, softmax, losses, argmax,
matrix products — with CUDA solutions, each verdict checked against what its kernel computes, and each explain's
time held against KernelBench's own check of the pair.

The pairs are in experiments/device_cases/beyond (their kernels in _kernels.cu, built once by _beyond_kernels.py
with load_inline); each solution's docstring says why its verdict is what it must be. For each pair:

(a) KernelBench's check, timed: Model and ModelNew built as KernelBench builds them (the same seed before each,
    not timed), then 5 trials, each seeded from the first seed, with fresh inputs: both forwards and
    allclose(atol = rtol = 1e-2); the time is the forwards and the comparisons only (not get_inputs);
(b) `fpa explain --problem P --solution S --device cuda --json` as a user runs it (a fresh process): the verdict,
    exit code, causes, wall time, and whether that wall time is within 2 × the check's + 10 s;
(c) KernelBench's check as a grader runs it, a process: a fresh interpreter that imports torch, loads the pair (the
    solution's extension from the build folder, as the explain's candidate process does) and runs (a), timed whole;
    and whether the explain is within 2 × that + 10 s. Both readings of "the check's time" are recorded.

Writes OUT/beyond_<gpu>.json (the commit, the kernels' source hash, each run) after every pair, prints a line a
pair, and exits 0 whatever the verdicts: the file says which were as expected.

    python experiments/device_beyond.py OUT COMMIT [TEXT ...]   # TEXT: only the pairs whose stem contains one
    python experiments/device_beyond.py --check PROBLEM SOLUTION   # (a) alone, its result as JSON: (c)'s process
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import torch
from device_results import run_checked, warm_extensions, write_results

ROOT = pathlib.Path(__file__).resolve().parents[1]
CASES = ROOT / "experiments" / "device_cases" / "beyond"
CHECK_TRIALS = 5
CHECK_TOLERANCE = 1e-2  # KernelBench's atol = rtol for fp32 outputs
CHECK_SEED = 42  # KernelBench's seed_num
EXPLAIN_TIMEOUT_S = 300  # a pair past this is recorded as timed out; the others still run
# An explain is "fast enough" within this many times KernelBench's check plus a fixed start-up allowance (two
# processes, CUDA's start, the extension's load).
TIME_FACTOR, TIME_ALLOWANCE_S = 2.0, 10.0


def _names(data: dict) -> list[str]:
    return [c["name"] for c in data.get("causes", [])]


def _is(data: dict, *verdicts: str) -> bool:
    return data["verdict"] in verdicts


# name, problem stem or (problem stem, solution stem), the verdict it must get (in words, and as a check on the
# --json dict; ``explained`` is exit 0, not explained exit 1)
RUNS = [
    ("sum over dim 1, a thread per output, sequential", "sum_sequential", "accumulation_order, exit 0",
     lambda d: d["explained"] and _names(d) == ["accumulation_order"]),
    ("sum over rows, a 256-thread block tree", "sum_block", "accumulation_order, exit 0",
     lambda d: d["explained"] and _names(d) == ["accumulation_order"]),
    ("sum over rows, block partials added with atomicAdd", "sum_atomic",
     "nondeterministic + accumulation_order (or accumulation_order alone), exit 0",
     lambda d: d["explained"] and "accumulation_order" in _names(d)
     and set(_names(d)) <= {"nondeterministic", "accumulation_order"}),
    ("cumsum, a thread per row, sequential", "cumsum", "accumulation_order, exit 0",
     lambda d: d["explained"] and _names(d) == ["accumulation_order"]),
    ("BatchNorm2d in training mode, kernel uses running stats", "batchnorm", "bug, exit 1",
     lambda d: not d["explained"] and _is(d, "bug")),
    ("LayerNorm, two passes, a block per row", "layernorm", "accumulation_order or identical, exit 0",
     lambda d: d["explained"] and _is(d, "accumulation_order", "identical")),
    ("LayerNorm, one-pass variance, mean 100", "layernorm_onepass", "formula (catastrophic) on the candidate, exit 0",
     lambda d: d["explained"] and _names(d) == ["formula"] and d["causes"][0]["side"] == "candidate"),
    ("softmax without the max shift, randn", "softmax", "accumulation_order or formula, exit 0",
     lambda d: d["explained"] and set(_names(d)) <= {"accumulation_order", "formula"} and bool(_names(d))),
    ("softmax without the max shift, randn × 50 (exp overflows)", ("softmax_overflow", "softmax"),
     "bug or nonfinite, exit 1", lambda d: not d["explained"] and _is(d, "bug", "nonfinite")),
    ("matmul 1024³ on tensor cores in TF32 (wmma)", "matmul_tf32", "candidate_tf32 named, exit 0",
     lambda d: d["explained"] and "candidate_tf32" in _names(d)),
    ("argmax over dim 1, int64", "argmax", "identical, exit 0", lambda d: d["explained"] and _is(d, "identical")),
    ("argmax over dim 1 skipping the last value", ("argmax", "argmax_short"), "bug, exit 1",
     lambda d: not d["explained"] and _is(d, "bug")),
    ("MSE loss, one block", "mse", "accumulation_order or identical, exit 0",
     lambda d: d["explained"] and _is(d, "accumulation_order", "identical")),
    ("GELU (erf) computed in its tanh form", "gelu", "gelu_approximation on the candidate, exit 0",
     lambda d: d["explained"] and any(c["name"] == "gelu_approximation" and c["side"] == "candidate"
                                      for c in d["causes"])),
    ("matmul K = 131072, naive sequential fmaf chain", "matmul_large_k", "accumulation_order, exit 0",
     lambda d: d["explained"] and _names(d) == ["accumulation_order"]),
    ("triplet margin loss without pairwise_distance's eps", "triplet", "bug, exit 1",
     lambda d: not d["explained"] and _is(d, "bug")),
    ("RMSNorm over channels, a thread per position", "rmsnorm", "accumulation_order, exit 0",
     lambda d: d["explained"] and _is(d, "accumulation_order")),
    ("cross-entropy, one block", "cross_entropy", "accumulation_order or identical, exit 0",
     lambda d: d["explained"] and _is(d, "accumulation_order", "identical")),
]  # fmt: skip


def _files(stems) -> tuple[pathlib.Path, pathlib.Path]:
    problem, solution = stems if isinstance(stems, tuple) else (stems, stems)
    return CASES / f"{problem}_problem.py", CASES / f"{solution}_solution.py"


def _module(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(f"beyond_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _seed(seed: int) -> None:
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def kernelbench_check(problem: pathlib.Path, solution: pathlib.Path, device: str = "cuda") -> dict:
    """KernelBench's correctness check of the pair, in this process (module docstring, (a)): the seconds its trials'
    forwards and comparisons took, and how many trials passed allclose."""
    reference, candidate = _module(problem), _module(solution)
    init = reference.get_init_inputs()
    on_gpu = torch.device(device).type == "cuda"
    synchronize = torch.cuda.synchronize if on_gpu else lambda: None
    seconds, passed = 0.0, 0
    with torch.no_grad():
        _seed(CHECK_SEED)
        model = reference.Model(*init).to(device)
        _seed(CHECK_SEED)
        model_new = candidate.ModelNew(*init).to(device)
        _seed(CHECK_SEED)
        trial_seeds = [int(torch.randint(0, 2**32 - 1, (1,)).item()) for _ in range(CHECK_TRIALS)]
        for trial_seed in trial_seeds:
            _seed(trial_seed)
            inputs = [t.to(device) if isinstance(t, torch.Tensor) else t for t in reference.get_inputs()]
            synchronize()
            start = time.perf_counter()
            out = model(*inputs)
            synchronize()
            out_new = model_new(*inputs)
            synchronize()
            same = out.shape == out_new.shape and torch.allclose(
                out, out_new, atol=CHECK_TOLERANCE, rtol=CHECK_TOLERANCE
            )
            seconds += time.perf_counter() - start
            passed += bool(same)
    del model, model_new, inputs, out, out_new
    gc.collect()
    if on_gpu:
        torch.cuda.empty_cache()  # the explain's processes get the memory
    return {"check_seconds": round(seconds, 4), "check_passed_trials": passed, "check_trials": CHECK_TRIALS}


def kernelbench_check_process(problem: pathlib.Path, solution: pathlib.Path) -> dict:
    """(c): ``kernelbench_check`` in a fresh interpreter, the wall time of the whole process."""
    command = [sys.executable, str(pathlib.Path(__file__).resolve()), "--check", str(problem), str(solution)]
    start = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=EXPLAIN_TIMEOUT_S)
    seconds = time.monotonic() - start
    if result.returncode:
        return {"check_process_error": result.stderr[-300:]}
    return {"check_process_seconds": round(seconds, 2)}


def _summary(data: dict) -> dict:
    if "error" in data:
        return {"error": {k: data["error"].get(k) for k in ("kind", "message", "side", "where")}}
    return {
        "verdict": data["verdict"],
        "explained": data["explained"],
        "causes": [
            {k: c[k] for k in ("name", "side", "op", "residual_units", "residual_max", "evidence")}
            for c in data["causes"]
        ],
        "failed_trials": data["mismatch"]["failed_trials"],
        "max_abs_difference": data["mismatch"]["max_abs"],
        "candidate_vs_fp64_max": data["candidate_vs_fp64"].get("max_abs"),
        "reference_vs_fp64_max": data["reference_vs_fp64"].get("max_abs"),
        "recommended_tolerance": {k: data["recommended_tolerance"].get(k) for k in ("atol", "rtol")},
        "floor": data["floor"],
        "location": data["location"].get("summary"),
        "candidate_runs": data["context"].get("candidate_runs"),
        "worker_seconds": data.get("worker", {}).get("seconds"),
    }


def _explain(name: str, expected: str, check, problem: pathlib.Path, solution: pathlib.Path) -> dict:
    command = [sys.executable, "-m", "fp_analysis", "explain", "--problem", str(problem), "--solution", str(solution),
               "--device", "cuda", "--json", "--no-store"]  # fmt: skip
    try:
        data, record = run_checked(name, expected, check, command, timeout=EXPLAIN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return {"run": name, "expected": expected, "as_expected": False, "exit_code": None,
                "wall_seconds": float(EXPLAIN_TIMEOUT_S), "error": {"kind": "timeout"}}  # fmt: skip
    return record | _summary(data)


def main(out: str, commit: str, only: list[str]) -> int:
    sys.path.insert(0, str(CASES))
    os.environ.setdefault("TORCH_EXTENSIONS_DIR", str(pathlib.Path(tempfile.gettempdir()) / "fpa_beyond_extensions"))
    runs = [r for r in RUNS if not only or any(text in " ".join(p.stem for p in _files(r[1])) for text in only)]
    # this process's folder (the timed checks import the solutions here) and every explain's own, built in parallel
    build_seconds = warm_extensions([_files(r[1]) for r in runs], "import _beyond_kernels; _beyond_kernels.kernels()",
                                    CASES)  # fmt: skip
    import _beyond_kernels  # loads the build above

    _beyond_kernels.kernels()
    source_hash = hashlib.sha256(b"".join(p.read_bytes() for p in _beyond_kernels.SOURCES)).hexdigest()[:16]
    print(f"built the case kernels in {build_seconds:.0f} s (sources {source_hash})", flush=True)
    records = []
    for name, stems, expected, check in runs:
        problem, solution = _files(stems)
        try:
            timing = kernelbench_check(problem, solution)
        except Exception as error:  # recorded; the explain still runs (it reports the user code's failure its way)
            timing = {"check_error": f"{type(error).__name__}: {str(error)[:300]}"}
        timing |= kernelbench_check_process(problem, solution)
        record = _explain(name, expected, check, problem, solution)
        record |= {"problem": problem.name, "solution": solution.name, **timing}
        for key, within in (
            ("check_seconds", "within_time_budget"),
            ("check_process_seconds", "within_process_budget"),
        ):
            if key in timing:
                record[within] = record["wall_seconds"] <= TIME_FACTOR * timing[key] + TIME_ALLOWANCE_S
        records.append(record)
        print(_line(record), flush=True)
        path = _write(out, commit, build_seconds, source_hash, records, len(runs))  # a later run may outrun the call
    print(f"wrote {path}; all as expected: {all(r['as_expected'] for r in records)}")
    return 0


def _line(record: dict) -> str:
    verdict = record.get("verdict") or json.dumps(record.get("error"))[:60]
    check = f"{record['check_seconds']:.3f} s" if "check_seconds" in record else record.get("check_error", "?")[:40]
    check += f" (process {record.get('check_process_seconds', '?')} s)"
    within = {True: "within", False: "beyond", None: "?"}[record.get("within_time_budget")]
    within += "/" + {True: "within", False: "beyond", None: "?"}[record.get("within_process_budget")]
    return (
        f"{record['run'][:58]:58s} {verdict:40s} expected {record['expected']}: "
        f"{'OK' if record['as_expected'] else 'MISMATCH'} (exit {record['exit_code']}); explain "
        f"{record['wall_seconds']:.1f} s, check {check}, {within} {TIME_FACTOR:g} × check + {TIME_ALLOWANCE_S:g} s"
    )


def _write(out: str, commit: str, build_seconds: float, source_hash: str, records: list[dict], total: int):
    body = {
        "runs": records,
        "all_as_expected": len(records) == total and all(r["as_expected"] for r in records),
        "all_within_time_budget": all(r.get("within_time_budget") for r in records),
        "all_within_process_budget": all(r.get("within_process_budget") for r in records),
    }
    budget = f"wall ≤ {TIME_FACTOR:g} × check + {TIME_ALLOWANCE_S:g} s (check: its trials, or its process)"
    meta = {
        "kernel_build_seconds": round(build_seconds, 1),
        "kernel_sources_sha256": source_hash,
        "time_budget": budget,
    }
    return write_results(out, "beyond", commit, body, **meta)


if __name__ == "__main__":
    if sys.argv[1] == "--check":
        sys.path.insert(0, str(CASES))
        print(json.dumps(kernelbench_check(pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]))))
        sys.exit(0)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
