"""Sizes of each candidate's difference (seed 0): max |cand - Model fp32|, max |cand - Model fp64|, against the
legit formula's max |formula - Model fp64| for the same problem, and u * max row Σ|x| (the formula floor's σ)."""

import importlib.util, os, sys, torch

HERE = os.path.dirname(os.path.abspath(__file__))
LEGIT = {
    "rev_cumsum_scaled": "total_minus",
    "running_mean": "from_total",
    "rev_cumsum_long": "total_minus",
    "rev_cumsum_64k": "total_minus",
    "fwd_cumsum": "from_total",
    "rev_cumsum": "total_minus",
    "rev_cumsum_rand": "total_minus",
    "masked_cumsum": "from_total",
    "excl_cumsum": "total_minus_suffix",
    "rev_cumsum_short": "total_minus",
    "rev_cumsum_offset": "total_minus",
}


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def run(problems):
    for prob in problems:
        P = load(os.path.join(HERE, prob, "problem.py"), "p_" + prob)
        torch.manual_seed(0)
        inputs = P.get_inputs()
        init = P.get_init_inputs()
        ref = P.Model(*init)(*inputs)
        ref64 = P.Model(*init)(*[t.double() if t.is_floating_point() else t for t in inputs])
        sig = 2**-24 * inputs[0].abs().sum(1).max().item()
        out = {}
        for f in sorted(os.listdir(os.path.join(HERE, prob))):
            if f == "problem.py" or not f.endswith(".py"):
                continue
            S = load(os.path.join(HERE, prob, f), "s_" + prob + f[:-3])
            c = S.ModelNew(*init)(*inputs)
            out[f[:-3]] = ((c.double() - ref.double()).abs().max().item(), (c.double() - ref64).abs().max().item())
        legit = out[LEGIT[prob]][1]
        print(
            f"{prob}: ref32-vs-fp64 {(ref.double() - ref64).abs().max().item():.3g}  legit formula vs fp64 {legit:.3g}  u*rowΣ|x| {sig:.3g}"
        )
        for k, (a, b) in out.items():
            print(f"   {k:26s} vs_ref {a:.3g}  vs_fp64 {b:.3g}  ({b / legit:.3g} x legit)")


run(sys.argv[1:] or list(LEGIT))
