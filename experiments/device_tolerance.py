"""On a GPU: `fpa tolerance --problem FILE --device cuda --json` on KernelBench-shaped problems at their real sizes.

The problems are experiments/kernelbench_shapes (manifest.csv: file, level, number, family): KernelBench level-1 (and a
few level-2) problems written at the shapes and input distributions KernelBench gives them. Each runs as a user would
run it (a fresh `fpa` process, `--json`), its own process group, ``TIMEOUT_S`` at most (then SIGTERM to the group,
SIGKILL 10 s later). A problem that fails (fpa's error JSON, no JSON, a crash, the timeout) is a row holding its error:
the script goes on to the next.

Each row keeps the exit code, wall seconds, the whole JSON, and a summary read defensively from it: per candidate
precision (fp32 in any order, TF32, bf16, fp16) the atol and rtol needed, and the check's power (whether zeros, the
first input or a constant pass allclose at the check's atol/rtol, KernelBench's 1e-2 unless fpa says otherwise). Keys
this script does not know are listed in the row (and printed) rather than guessed.

Writes, after every row (a later row may outrun the call): OUT/tolerance_<gpu>.json (meta with the commit, the rows)
and OUT/tolerance_<gpu>.md (problem, family, the four atols, zeros pass?, input passes?, wall s; errors below).

    python experiments/device_tolerance.py OUT COMMIT [PATTERN ...]

PATTERNs (regular expressions, any of them) pick rows by "file family", e.g. ``l1_0[0-1]`` or ``loss``. With
TOLERANCE_DEADLINE_S set, no row runs past that many seconds from the start: each row's timeout shrinks to what is
left, and rows with under ``MIN_ROW_S`` left are recorded as not run. TOLERANCE_DEVICE=cpu: a dry run without a GPU.
"""

from __future__ import annotations

import csv
import json
import math
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

from fp_analysis.records import loads_strict

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHAPES = ROOT / "experiments" / "kernelbench_shapes"
DEVICE = os.environ.get("TOLERANCE_DEVICE", "cuda")  # cpu: a dry run of this script on a machine without a GPU
TIMEOUT_S = 300.0
MIN_ROW_S = 30.0
PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
# what fpa calls each placeholder of the power check → the name used here
PLACEHOLDERS = {"zeros": "zeros", "zero": "zeros", "first input": "input", "input": "input", "mean": "constant",
                "constant": "constant"}  # fmt: skip


def manifest(patterns: list[str]) -> list[dict]:
    with open(SHAPES / "manifest.csv") as handle:
        rows = list(csv.DictReader(handle))
    return [r for r in rows if not patterns or any(re.search(p, f"{r['file']} {r['family']}") for p in patterns)]


def run_one(problem: pathlib.Path, timeout: float) -> tuple[dict | None, dict]:
    """One `fpa tolerance --problem` run: (its JSON or None, the record: exit code, wall seconds, timed out, the ends
    of stderr, and the ends of stdout where it was not JSON)."""
    command = [sys.executable, "-m", "fp_analysis", "tolerance", "--problem", str(problem), "--device", DEVICE]
    command.append("--json")
    start = time.monotonic()
    record: dict = {"command": " ".join(command[1:]).replace(str(ROOT) + "/", ""), "timed_out": False}
    try:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True, cwd=ROOT)  # fmt: skip
    except OSError as error:
        record.update(exit_code=None, wall_seconds=0.0, launch_error=str(error))
        return None, record
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        record["timed_out"] = True
        stdout, stderr = _stop(process)
    record["exit_code"] = process.returncode
    record["wall_seconds"] = round(time.monotonic() - start, 2)
    data = loads_strict(stdout or "")
    if not isinstance(data, dict):
        data = None
        record["stdout_tail"] = (stdout or "")[-1500:]
    record["stderr_tail"] = (stderr or "")[-1500:]
    return data, record


def _stop(process: subprocess.Popen) -> tuple[str, str]:
    """End the timed-out run: SIGTERM to its process group (this script started it, in a session of its own), SIGKILL
    after 10 s; whatever it printed."""
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 30)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass
        try:
            return process.communicate(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
    return "", "(no output: the process did not end after SIGKILL)"


# ------------------------------------------------------------------------------- reading the JSON, defensively


def _items(value, key: str) -> list[tuple[str, dict]]:
    """(name, entry) pairs of a list of dicts carrying ``key``, or of a dict of dicts."""
    if isinstance(value, dict):
        return [(str(k), v) for k, v in value.items() if isinstance(v, dict)]
    if isinstance(value, list):
        return [(str(v.get(key)), v) for v in value if isinstance(v, dict) and key in v]
    return []


def _first(data: dict, *names):
    return next((data[n] for n in names if n in data), None)


def summarize(data: dict) -> dict:
    """The table's numbers from `fpa tolerance --problem --json`; ``unread`` names what was not found."""
    summary: dict = {"keys": sorted(data)}
    check = data.get("check") if isinstance(data.get("check"), dict) else data
    summary["check"] = {"atol": check.get("atol"), "rtol": check.get("rtol")}
    for key in ("shape", "outputs", "analysed", "blind", "notes"):
        if key in data:
            summary[key] = data[key]
    summary["reference"] = data.get("reference")
    summary["floor"] = data.get("floor")
    summary["worker_seconds"] = (data.get("worker") or {}).get("seconds")
    unread = []
    needed = {}
    for name, row in _items(_first(data, "needed", "precisions", "tolerances", "rows"), "precision"):
        precision = next((p for p in PRECISIONS if p in name.lower()), name)
        keys = ("atol", "rtol", "passes_check", "max_difference", "rounds_nothing", "placeholders_passing")
        needed[precision] = {k: row.get(k) for k in (*keys, "emulations")}
    if not needed:
        unread.append("needed")
    summary["needed"] = needed
    power = {}
    for name, row in _items(_first(data, "power", "placeholders"), "name"):
        label = PLACEHOLDERS.get(name.lower(), name)
        power[label] = {k: row.get(k) for k in ("passes", "max_difference", "atol_accepting", "failing_fraction",
                                                "why_not")}  # fmt: skip
    if not power:
        unread.append("power")
    summary["power"] = power
    if unread:
        summary["unread"] = unread
    return summary


def _error(data: dict | None, record: dict) -> dict | None:
    if record.get("launch_error"):
        return {"kind": "launch", "message": record["launch_error"]}
    if record["timed_out"]:
        return {"kind": "timeout", "message": f"no result within {record['timeout_s']:.0f} s"}
    if data is None:
        return {"kind": "unparsable", "message": (record.get("stdout_tail", "")[-600:] + "\n" +
                                                  record.get("stderr_tail", "")[-600:]).strip()}  # fmt: skip
    if "error" in data:
        error = data["error"] if isinstance(data["error"], dict) else {"message": str(data["error"])}
        keys = ("kind", "exit_code", "message", "side", "where", "at", "detail")
        return {k: error[k] for k in keys if k in error}
    if record["exit_code"] not in (0, 1):
        return {"kind": "exit", "message": f"exit {record['exit_code']} with JSON and no error in it"}
    return None


# ------------------------------------------------------------------------------------------------ the outputs


def gpu_slug() -> str:
    import torch

    return torch.cuda.get_device_name().split()[-1].lower() if torch.cuda.is_available() else "cpu"


def write(out: str, commit: str, rows: list[dict], meta: dict) -> pathlib.Path:
    """OUT/tolerance_<gpu>.json (device_results.write_results where there is a GPU) and the Markdown table."""
    body = {"rows": rows, "rows_ok": sum("error" not in r and not r.get("not_run") for r in rows)}
    try:
        import torch

        if not torch.cuda.is_available():
            raise RuntimeError("no GPU")
        from device_results import write_results

        path = write_results(out, "tolerance", commit, body, **meta)
    except Exception:  # no GPU (a dry run here): the same record, device "cpu"
        path = pathlib.Path(out) / f"tolerance_{gpu_slug()}.json"
        record = {"meta": {"device": "cpu", "commit": commit, "date": time.strftime("%Y-%m-%d"), **meta}, **body}
        path.write_text(json.dumps(record, indent=1))
    path.with_suffix(".md").write_text(markdown(rows, commit, meta))
    return path


def _number(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return f"{value:.3g}" if isinstance(value, (int, float)) else str(value)


def _passes(power: dict, name: str) -> str:
    entry = power.get(name)
    if not entry:
        return "?"
    if entry.get("passes") is None:
        return "n/a"
    return "**PASSES**" if entry["passes"] else "no"


def markdown(rows: list[dict], commit: str, meta: dict) -> str:
    atols = {r["summary"]["check"]["atol"] for r in rows if r.get("summary")} - {None}
    check = "/".join(_number(a) for a in sorted(atols)) or "1e-2"
    lines = [
        f"# fpa tolerance --problem on KernelBench shapes ({meta.get('gpu', '?')}, commit {commit})",
        "",
        "atol each candidate precision needs (rtol 0) against the fp32 reference (TF32 off); whether zeros and the "
        f"first input pass the check as KernelBench runs it (allclose, atol {check}).",
        "",
        f"| problem | family | fp32-order atol | TF32 atol | bf16 atol | fp16 atol | zeros pass {check}? "
        "| input passes? | wall s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    errors = []
    for r in rows:
        wall = _number(r.get("wall_seconds"))
        if r.get("not_run"):
            lines.append(f"| {r['problem']} | {r['family']} | not run: {r['not_run']} | | | | | | — |")
            continue
        if "error" in r:
            kind = r["error"].get("kind", "error")
            lines.append(f"| {r['problem']} | {r['family']} | error: {kind} (exit {r.get('exit_code')}) "
                         f"| — | — | — | — | — | {wall} |")  # fmt: skip
            message = " ".join(str(r["error"].get("message", "")).split())[:400]
            errors.append(f"- {r['problem']}: {kind}: {message}")
            continue
        summary = r["summary"]
        needed, power = summary["needed"], summary["power"]
        atol = [_number((needed.get(p) or {}).get("atol")) for p in PRECISIONS]
        cells = [r["problem"], r["family"], *atol, _passes(power, "zeros"), _passes(power, "input"), wall]
        lines.append("| " + " | ".join(cells) + " |")
        if summary.get("unread"):
            errors.append(f"- {r['problem']}: not found in the JSON: {summary['unread']}; its keys: {summary['keys']}")
    if errors:
        lines += ["", "## Errors and unread JSON", "", *errors]
    return "\n".join(lines) + "\n"


def main(out: str, commit: str, patterns: list[str]) -> int:
    chosen = manifest(patterns)
    deadline = float(os.environ.get("TOLERANCE_DEADLINE_S") or "inf")
    start = time.monotonic()
    meta = {"gpu": gpu_slug(), "problems": len(chosen), "patterns": patterns, "timeout_s": TIMEOUT_S,
            "deadline_s": None if math.isinf(deadline) else deadline}  # fmt: skip
    print(f"fpa tolerance --problem on {len(chosen)} problems (timeout {TIMEOUT_S:.0f} s each)", flush=True)
    rows: list[dict] = []
    path = None
    for entry in chosen:
        row = {"problem": entry["file"], "level": int(entry["level"]), "number": int(entry["number"]),
               "family": entry["family"]}  # fmt: skip
        left = deadline - (time.monotonic() - start)
        if left < MIN_ROW_S:
            row["not_run"] = f"deadline ({deadline:.0f} s) reached"
        else:
            timeout = min(TIMEOUT_S, left)
            try:
                data, record = run_one(SHAPES / entry["file"], timeout)
                record["timeout_s"] = timeout
                row.update(record)
                error = _error(data, record)
                if error is not None:
                    row["error"] = error
                elif data is not None:
                    row["summary"] = summarize(data)
                    if row["summary"].get("unread"):
                        print(f"  {entry['file']}: JSON keys {row['summary']['keys']} (not found: "
                              f"{row['summary']['unread']})", flush=True)  # fmt: skip
                row["json"] = data
            except Exception as error:  # never let one problem end the run
                row["error"] = {"kind": "script", "message": f"{type(error).__name__}: {error}"}
        rows.append(row)
        _print(row)
        path = write(out, commit, rows, {**meta, "seconds": round(time.monotonic() - start, 1)})
    print(f"wrote {path} and {path.with_suffix('.md').name}" if path else "no problems matched")
    return 0 if rows and all("error" not in r and not r.get("not_run") for r in rows) else 1


def _print(row: dict) -> None:
    if row.get("not_run"):
        print(f"{row['problem']}: not run ({row['not_run']})", flush=True)
    elif "error" in row:
        message = " ".join(str(row["error"].get("message", "")).split())[:300]
        print(f"{row['problem']}: ERROR {row['error'].get('kind')} (exit {row.get('exit_code')}, "
              f"{row.get('wall_seconds')} s): {message}", flush=True)  # fmt: skip
    else:
        summary = row["summary"]
        atol = {p: _number((summary["needed"].get(p) or {}).get("atol")) for p in PRECISIONS}
        power = {k: v.get("passes") for k, v in summary["power"].items()}
        print(f"{row['problem']}: exit {row['exit_code']}, {row['wall_seconds']} s, atol {atol}, placeholders pass "
              f"{power}", flush=True)  # fmt: skip


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
