"""Check every problem of manifest.csv on the CPU: it imports, its docstring is one line naming the KernelBench problem
it follows, and ``Model(*get_init_inputs())(*get_inputs())`` runs, with the Model and inputs built on
``torch.device("meta")`` first (shapes only, no memory), then for real where the sizes allow.

A problem runs for real when its output has at most ``MAX_OUTPUT`` elements and its inputs at most ``MAX_INPUTS`` in
all (KernelBench's full sizes: most activations, norms, scans and losses are 2^30 elements or more, beyond this
machine's memory); the rest are checked on the meta device (torch.distributions' argument checks off there: they call
``.item()``), and run for real with the batch cut down (``batch_size`` 2; where the rows are as long as the batch,
as in the losses and scans, both 1024), which checks the code, not the size. Writes cpu_check.json beside this file.

    python experiments/kernelbench_shapes/verify_cpu.py [NAME_SUBSTRING ...]
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import json
import math
import pathlib
import sys
import time

import torch

HERE = pathlib.Path(__file__).resolve().parent
MAX_OUTPUT = 2**27
MAX_INPUTS = 2**29


def _load(path: pathlib.Path):
    spec = importlib.util.spec_from_file_location(f"kb_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _shapes(values) -> list:
    return [list(v.shape) if isinstance(v, torch.Tensor) else repr(v) for v in values]


def _elements(values) -> int:
    return sum(v.numel() for v in values if isinstance(v, torch.Tensor))


@contextlib.contextmanager
def _no_distribution_checks():
    before = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        torch.distributions.Distribution.set_default_validate_args(before)


def _reduced_run(module) -> str:
    """The problem run for real with a small batch (the module's constants are read when get_inputs runs)."""
    batch = getattr(module, "batch_size", None)
    if not isinstance(batch, int):
        return "no batch_size to cut: meta only"
    if getattr(module, "input_shape", None) == (batch,):
        module.batch_size, module.input_shape = 1024, (1024,)
    else:
        module.batch_size = 2
    torch.manual_seed(42)
    try:
        out = module.Model(*module.get_init_inputs())(*module.get_inputs())
    except Exception as error:
        return f"{type(error).__name__}: {error}"[:300]
    finite = bool(torch.isfinite(out).all()) if out.is_floating_point() else True
    return f"ok (batch {module.batch_size}, output {list(out.shape)}, finite {finite})"


def check(path: pathlib.Path) -> dict:
    row: dict = {"file": path.name}
    module = _load(path)
    doc = (module.__doc__ or "").strip()
    row["docstring_ok"] = "\n" not in doc and doc.startswith("KernelBench level")
    row["has_api"] = all(hasattr(module, name) for name in ("Model", "get_inputs", "get_init_inputs"))
    try:
        with torch.device("meta"), _no_distribution_checks():
            init = module.get_init_inputs()
            model = module.Model(*init)
            inputs = module.get_inputs()
            out = model(*inputs)
        row.update(meta="ok", inputs=_shapes(inputs), output=list(out.shape), output_dtype=str(out.dtype))
        row["input_elements"], row["output_elements"] = _elements(inputs), out.numel()
    except Exception as error:  # the meta device lacks an op (or a sampler): say so, still try sizes below
        row["meta"] = f"{type(error).__name__}: {error}"[:300]
    small = row.get("output_elements", math.inf) <= MAX_OUTPUT and row.get("input_elements", math.inf) <= MAX_INPUTS
    if not small:
        row["cpu"] = "skipped (full KernelBench size)"
        row["reduced_cpu"] = _reduced_run(module)
        return row
    torch.manual_seed(42)
    start = time.monotonic()
    model = module.Model(*module.get_init_inputs())
    inputs = module.get_inputs()
    with torch.no_grad():
        out = model(*inputs)
    row["cpu_seconds"] = round(time.monotonic() - start, 2)
    row["cpu"] = "ok" if list(out.shape) == row["output"] else f"shape {list(out.shape)} != meta {row['output']}"
    if out.is_floating_point():
        row["cpu_finite"] = bool(torch.isfinite(out).all())
        row["cpu_max_abs"] = float(out.abs().max())
    return row


def _fine(row: dict) -> bool:
    ran = row.get("cpu") == "ok" or row.get("reduced_cpu", "").startswith(("ok", "no batch_size"))
    return "error" not in row and row.get("meta") == "ok" and ran and row["docstring_ok"] and row["has_api"]


def main(patterns: list[str]) -> int:
    torch.set_grad_enabled(False)
    with open(HERE / "manifest.csv") as handle:
        names = [r["file"] for r in csv.DictReader(handle)]
    names = [n for n in names if not patterns or any(p in n for p in patterns)]
    rows = []
    for name in names:
        try:
            row = check(HERE / name)
        except Exception as error:
            row = {"file": name, "error": f"{type(error).__name__}: {error}"[:400]}
        rows.append(row)
        shown = {k: row[k] for k in ("meta", "output", "cpu", "cpu_seconds", "reduced_cpu", "error") if k in row}
        print(name, json.dumps(shown), flush=True)
    if not patterns:
        (HERE / "cpu_check.json").write_text(json.dumps(rows, indent=1) + "\n")
    bad = [r["file"] for r in rows if not _fine(r)]
    ran = sum(r.get("cpu") == "ok" for r in rows)
    print(f"{len(rows)} problems: {ran} run on the CPU, {len(rows) - ran} meta only; not ok: {bad or 'none'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
