"""fp64 sanity check of the held-out pairs' truths, independent of fpa: builds both sides as KernelBench does (seed
42 before each constructor), runs them in fp32 and in fp64, and prints per pair (all relative to the rms of the
reference's fp64 output): ref32 = |fp32 reference − fp64 reference|max, cand = |fp32 candidate − fp64 reference|max,
self = |fp32 candidate − the candidate's own arithmetic in fp64|max, delta = |candidate in fp64 − reference in
fp64| (max, and where it is nonzero), allclose = KernelBench's check of the fp32 sides, and for init pairs how the
parameters differ.

    .venv/bin/python experiments/heldout/issue28/verify_fp64.py [PATTERN]
"""

import copy
import csv
import importlib.util
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
torch.set_num_threads(1)


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def tf32_independent(t):
    """TF32 rounding (11 significant bits, nearest-even) through frexp, to check the candidates' integer version."""
    m, e = torch.frexp(t.double())
    return (torch.round(m * 2048) / 2048 * torch.pow(2.0, e.double())).float()


def where(delta, scale):
    bad = delta.abs() > 1e-9 * scale
    if not bad.any():
        return "nowhere"
    idx = bad.nonzero()
    parts = []
    names = ["batch", "ch", *["d", "h", "w"][3 - max(0, delta.dim() - 2) :]]
    for ax, name in enumerate(names[: delta.dim()]):
        vals = idx[:, ax].unique().tolist()
        n = delta.shape[ax]
        if len(vals) < n:
            parts.append(f"{name}{vals if len(vals) <= 6 else f'[{vals[0]}..{vals[-1]}] ({len(vals)} of {n})'}")
    if delta.dim() > 2:
        interior = bad[(slice(None), slice(None), *(slice(1, -1) for _ in range(delta.dim() - 2)))]
        if not interior.any():
            parts.append("boundary only")
    frac = bad.float().mean().item()
    return (", ".join(parts) or "all slices") + f"; {frac:.1%} of outputs"


def check(row):
    prob = load(HERE / row["problem"], "prob_" + row["pair"])
    sol = load(HERE / row["solution"], "sol_" + row["pair"])
    init = prob.get_init_inputs()
    torch.manual_seed(42)
    ref = prob.Model(*init)
    torch.manual_seed(42)
    new = sol.ModelNew(*init)
    torch.manual_seed(7)
    xs = prob.get_inputs()
    x64 = [x.double() for x in xs]
    with torch.no_grad():
        r32, c32 = ref(*xs), new(*xs)
        r64 = copy.deepcopy(ref).double()(*x64)
        if hasattr(sol, "_tf32"):
            orig = sol._tf32
            ties = (torch.arange(-4096, 4096, dtype=torch.int32) * 0x1000 + 0x3F800000).view(torch.float32)
            for t in [xs[0], ties, -ties, *new.parameters()]:
                assert torch.equal(orig(t.detach()), tf32_independent(t.detach())), "the TF32 rounding disagrees"
            sol._tf32 = lambda t: orig(t.float()).double()
        try:
            c64 = copy.deepcopy(new).double()(*x64)
        except Exception as e:
            c64 = None
            print(f"   (candidate in fp64 failed: {type(e).__name__})")
    scale = r64.pow(2).mean().sqrt().item()
    out = [f"{row['pair']:32s} {row['class'][:10]:10s}"]
    if c32.shape != r32.shape or c32.dtype != r32.dtype:
        return " ".join(out) + f" shape/dtype {tuple(c32.shape)} {c32.dtype} vs {tuple(r32.shape)} {r32.dtype}"
    rel = lambda a, b: (a.double() - b.double()).abs().max().item() / scale  # noqa: E731
    ok = torch.allclose(c32, r32, atol=1e-4, rtol=1e-4)
    out.append(f"ref32 {rel(r32, r64):.1e} cand {rel(c32, r64):.1e}")
    ulp = lambda a: ((a.double() - r64).abs() / torch.finfo(torch.float32).eps / r64.abs().clamp_min(1e-30)).max()  # noqa: E731
    out.append(f"ulps(ref32 {ulp(r32):.0f}, cand {ulp(c32):.0f})")
    if c64 is not None and c64.shape == r64.shape:
        d = c64 - r64
        out.append(f"self {rel(c32, c64):.1e} delta {d.abs().max().item() / scale:.1e} [{where(d, scale)}]")
        if row["class"] == "concentrated_bug" and d.abs().max() > 0:
            bad = d.abs() > 1e-9 * scale
            out.append(f"mean|delta| in slice {d.abs()[bad].mean().item() / scale:.1e}")
    out.append(f"allclose {'pass' if ok else 'FAIL'}")
    if row["class"] == "init_different":
        rp = dict(ref.named_parameters())
        for name, p in new.named_parameters():
            q = next((v for v in rp.values() if v.shape == p.shape), None)
            if q is None:
                out.append(f"{name}: no ref param of shape {tuple(p.shape)}")
            else:
                ratio = (p.double() / q.double()).flatten()
                out.append(f"{name}: ratio {ratio.min().item():.7f}..{ratio.max().item():.7f}")
    return " ".join(out)


def main():
    pattern = sys.argv[1] if len(sys.argv) > 1 else ""
    with open(HERE / "manifest.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if pattern in r["pair"]]
    for row in rows:
        print(check(row), flush=True)


if __name__ == "__main__":
    main()
