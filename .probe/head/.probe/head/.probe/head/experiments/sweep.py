"""Reproducible sweeps: a sweep name + seed → rows in the results store + a figure in experiments/figures/.

    python experiments/sweep.py error_vs_k   [--full] [--seed 0]   # every order, K = 16 … 16384, bound lines
    python experiments/sweep.py splits       [--full]              # split-K: error against S
    python experiments/sweep.py seed000      [--full]              # fp32 / TF32 nearest / TF32 truncation vs fp64
    python experiments/sweep.py gelu                               # GELU forms in ulps, through the epilogue
    python experiments/sweep.py tables       [--seeds 0 1 2]       # fpa report for the three seeds, several seeds

Reduced sizes by default (a CPU does each in seconds); ``--full`` uses the sizes of the issue (more outputs,
K up to 16384, the full seed-000 batch, ``--device cuda`` for the tables when a GPU is present).
"""

from __future__ import annotations

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

from fp_analysis.store import append_run, run_metadata
from fp_analysis.study import sweeps

FIGURES = pathlib.Path(__file__).resolve().parent / "figures"


def _save(fig, name: str) -> pathlib.Path:
    FIGURES.mkdir(exist_ok=True)
    path = FIGURES / f"{name}.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def error_vs_k(args) -> tuple[list[dict], pathlib.Path]:
    rows = sweeps.error_vs_k(
        outputs=2048 if args.full else 128,
        seed=args.seed,
        ks=(16, 64, 256, 1024, 4096, 16384) if args.full else (16, 64, 256, 1024, 4096),
    )
    df = pd.DataFrame(rows)
    grid = sns.relplot(
        df, x="K", y="mean_abs", hue="order", col="data", kind="line", marker="o", height=4, facet_kws={"sharey": False}
    )
    for ax, (_, part) in zip(grid.axes.flat, df.groupby("data", sort=False), strict=False):
        seq = part[part.order == "sequential fma"]
        ax.plot(seq.K, seq.deterministic_bound, "k--", label="deterministic bound (γ_K)")
        ax.plot(seq.K, seq.probabilistic_bound, "k:", label="probabilistic bound (λ√K·u)")
        ax.set(xscale="log", yscale="log", ylabel="mean |error| vs exact")
        ax.legend(fontsize=7)
    return rows, _save(grid.figure, "error_vs_k")


def splits(args) -> tuple[list[dict], pathlib.Path]:
    rows = sweeps.error_vs_splits(k=16384 if args.full else 4096, outputs=2048 if args.full else 256, seed=args.seed)
    fig, ax = plt.subplots(figsize=(6, 4))
    sns.lineplot(pd.DataFrame(rows), x="S", y="mean_abs", hue="order", marker="o", ax=ax)
    ax.set(xscale="log", yscale="log", xlabel="partial sums S", ylabel="mean |error| vs exact")
    return rows, _save(fig, "split_k")


def seed000(args) -> tuple[list[dict], pathlib.Path]:
    import torch

    if args.full and torch.cuda.is_available():  # the real cuDNN on the full tensor
        rows, mismatch = sweeps.seed_mismatch_full(seed=args.seed)
        fig, ax = plt.subplots(figsize=(7, 6))
        im = ax.imshow(mismatch, cmap="magma")
        fig.colorbar(im, ax=ax, label="mean over batch and channels of |cuDNN fp32 − cuDNN TF32|")
        ax.set(title=f"seed 000, full size on {torch.cuda.get_device_name()}", xlabel="column", ylabel="row")
        return rows, _save(fig, "seed000_mismatch_full")
    rows = sweeps.seed_mismatch(samples=20000 if args.full else 4000, seed=args.seed, batch=None if args.full else 1)
    df = pd.DataFrame(rows)
    long = df.melt(
        value_vars=["err_fp32", "err_tf32_nearest", "err_tf32_truncate"], var_name="arithmetic", value_name="error"
    )
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4))
    sns.histplot(long, x="error", hue="arithmetic", log_scale=True, element="step", ax=a)
    a.axvline(1e-4, color="k", ls="--")
    a.set(title="seed 000: |error| vs fp64 (allclose atol = 1e-4 dashed)")
    sc = b.scatter(df.col, df.row, c=df.mismatch_fp32_vs_tf32, s=4, cmap="viridis")
    fig.colorbar(sc, ax=b, label="|fp32 − TF32|")
    b.set(title="where the mismatch is (sampled outputs)", xlabel="column", ylabel="row")
    b.invert_yaxis()
    return rows, _save(fig, "seed000_mismatch")


def gelu(args) -> tuple[list[dict], pathlib.Path]:
    import torch

    rows = sweeps.gelu_forms(seed=args.seed)
    if torch.cuda.is_available():  # CUDA's erff/tanhf, precise and fast-math
        rows += sweeps.cuda_gelu_forms()
    fig, ax = plt.subplots(figsize=(8, 4))
    sns.lineplot(pd.DataFrame(rows), x="x", y="ulps", hue="form", ax=ax, lw=0.8)
    ax.set(yscale="symlog", ylabel="error, fp32 ulps of max(|GELU(x)|, |x|)")
    return rows, _save(fig, "gelu_forms")


def tables(args) -> tuple[list[dict], pathlib.Path]:
    from fp_analysis.study.report import report

    rows = []
    for seed in args.seeds:
        for op in ("dilated_conv2d", "conv3d_kk1", "conv_gelu"):
            result = report(
                op, samples=2000, seed=seed, device="auto" if args.full else "cpu", batch=None if args.full else 1
            )
            rows += [{**r, "op": op, "seed": seed} for r in result["rows"]]
    df = pd.DataFrame(rows).dropna(subset=["max_abs"])
    df = df[
        df.variant.str.match(
            r"^(sequential/fma/(none|tf32)( gelu-erf-fpa)?|pytorch_(fp32|tf32)|kahan/fma/none|fp64/fma/none)"
        )
    ]
    grid = sns.catplot(df, x="max_abs", y="variant", col="op", kind="strip", height=4, sharex=False)
    grid.set(xscale="log")
    return rows, _save(grid.figure, "seed_tables")


SWEEPS = {"error_vs_k": error_vs_k, "splits": splits, "seed000": seed000, "gelu": gelu, "tables": tables}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", choices=sorted(SWEEPS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--full", action="store_true", help="the issue's full sizes (GPU where one is present)")
    parser.add_argument("--no-store", action="store_true")
    args = parser.parse_args()
    rows, figure = SWEEPS[args.sweep](args)
    if not args.no_store:
        append_run(
            rows, run_metadata(f"sweep:{args.sweep}", {"full": args.full, "seeds": args.seeds}, args.seed, "auto")
        )
    print(f"{args.sweep}: {len(rows)} rows; figure {figure}")


if __name__ == "__main__":
    main()
