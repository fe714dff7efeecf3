"""Checks every solution of the held-out set against its problem with plain PyTorch.

Usage: python check_pairs.py [folder ...]
For each pair: builds Model and ModelNew after the same seed, compares parameters, runs both in float64 and
float32 on get_inputs(), and prints
  d64   max |ModelNew - Model| in float64 (relative to max |Model|)
  e32   max |Model_fp32 - Model_fp64|, the float32 rounding of the reference itself
  d32   max |ModelNew_fp32 - Model_fp32|
  kb1e-2  whether torch.allclose(Model_fp32, ModelNew_fp32, atol=1e-2, rtol=1e-2) (KernelBench's check) passes
Integer outputs are compared by the count of differing entries.
"""

import importlib.util
import os
import sys
import time

import torch

torch.set_num_threads(2)
HERE = os.path.dirname(os.path.abspath(__file__))


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3] + "_" + str(abs(hash(path))), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def cast(t, dtype):
    return t.to(dtype) if torch.is_tensor(t) and t.is_floating_point() else t


def flat(o):
    return list(o) if isinstance(o, (tuple, list)) else [o]


def build(prob, sol, dtype, seed):
    torch.manual_seed(seed)
    m = prob.Model(*prob.get_init_inputs())
    torch.manual_seed(seed)
    n = sol.ModelNew(*prob.get_init_inputs())
    return m.to(dtype), n.to(dtype)


def outputs(prob, sol, dtype, seed):
    m, n = build(prob, sol, dtype, seed)
    torch.manual_seed(seed + 1000)
    inputs = [cast(t, dtype) for t in prob.get_inputs()]
    with torch.no_grad():
        t0 = time.time()
        a = flat(m(*inputs))
        t1 = time.time()
        b = flat(n(*inputs))
    return a, b, t1 - t0


def params_equal(prob, sol):
    m, n = build(prob, sol, torch.float32, 0)
    sm, sn = m.state_dict(), n.state_dict()
    if set(sm) != set(sn):
        return "keys differ: %s vs %s" % (sorted(sm), sorted(sn))
    for k in sm:
        if not torch.equal(sm[k], sn[k]):
            return "value differs: " + k
    return "ok(%d)" % len(sm)


def check(folder, sol_name):
    prob = load(os.path.join(folder, "problem.py"))
    sol = load(os.path.join(folder, sol_name))
    pe = params_equal(prob, sol)
    parts = []
    for seed in (0, 1):
        a64, b64, _ = outputs(prob, sol, torch.float64, seed)
        a32, b32, t = outputs(prob, sol, torch.float32, seed)
        for i, (x64, y64, x32, y32) in enumerate(zip(a64, b64, a32, b32)):
            if x64.shape != y64.shape or x64.dtype != y64.dtype or x32.dtype != y32.dtype:
                parts.append("out%d SHAPE/DTYPE %s %s %s %s" % (i, x64.shape, y64.shape, x32.dtype, y32.dtype))
                continue
            if not x64.is_floating_point():
                parts.append(
                    "s%d out%d int: mism64=%d mism32=%d of %d"
                    % (seed, i, (x64 != y64).sum().item(), (x32 != y32).sum().item(), x64.numel())
                )
                continue
            scale = x64.abs().max().item()
            d64 = (x64 - y64).abs().max().item()
            e32 = (x32.double() - x64).abs().max().item()
            d32 = (x32 - y32).abs().max().item()
            nf = (~torch.isfinite(y64)).sum().item()
            kb = torch.allclose(x32, y32, atol=1e-2, rtol=1e-2)
            parts.append(
                "s%d out%d d64=%.3e rel=%.2e e32=%.2e d32=%.2e d64/e32=%.1f kb1e-2=%s%s n=%d t=%.3fs"
                % (
                    seed,
                    i,
                    d64,
                    d64 / scale,
                    e32,
                    d32,
                    d64 / max(e32, 1e-300),
                    "pass" if kb else "FAIL",
                    " NONFINITE=%d" % nf if nf else "",
                    x64.numel(),
                    t,
                )
            )
    print("%-40s params=%s\n    %s" % (os.path.basename(folder) + "/" + sol_name, pe, "\n    ".join(parts)))


if __name__ == "__main__":
    folders = sys.argv[1:] or sorted(d for d in os.listdir(HERE) if os.path.isfile(os.path.join(HERE, d, "problem.py")))
    for f in folders:
        path = os.path.join(HERE, f.rstrip("/"))
        for s in sorted(os.listdir(path)):
            if s.endswith(".py") and s != "problem.py":
                try:
                    check(path, s)
                except Exception as e:  # noqa: BLE001
                    print("%-40s ERROR %r" % (f + "/" + s, e))
