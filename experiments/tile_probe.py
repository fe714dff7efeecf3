"""Time build alternatives of the tiled kernels on the seed-000 conv (GPU), beside the defaults.

    python3 experiments/tile_probe.py [--batch 8]

Each row: a tiled variant built with extra defines (e.g. FPA_TILED_THREADS, the block size; FPA_MIN_BLOCKS,
the blocks per SM the register cap aims at), its median time by CUDA events over 3 rotating inputs, and
whether its output equals the default build's bit for bit (a layout change must not change the arithmetic).
"""

from __future__ import annotations

import argparse

import torch
from fpa_kernels import Op, Schedule, TensorCore, VariantSpec, build_source
from fpa_kernels.launch import launch_tiled

from fp_analysis.bench import time_on_device
from fp_analysis.ops.presets import make_problem

PROBES = [
    (VariantSpec(Op.CONV2D, schedule=Schedule.TILED), {}),
    (VariantSpec(Op.CONV2D, schedule=Schedule.TILED), {"FPA_TILED_THREADS": 256}),
    (VariantSpec(Op.CONV2D, tensor_core=TensorCore.TF32X3, schedule=Schedule.TILED), {}),
    (VariantSpec(Op.CONV2D, tensor_core=TensorCore.TF32, schedule=Schedule.TILED), {}),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--only", type=int, nargs="*", default=None, help="indices into PROBES")
    parser.add_argument("--once", action="store_true", help="one call each, no timing (for a profiler)")
    args = parser.parse_args()
    problem = make_problem("dilated_conv2d", seed=0, batch=args.batch)
    spec = problem.spec
    gen = torch.Generator().manual_seed(1)
    xs = [problem.x.cuda()] + [torch.rand(problem.x.shape, generator=gen).cuda() for _ in range(2)]
    w = problem.weight.cuda()
    baseline = {}
    for index, (variant, extra) in enumerate(PROBES):
        if args.only is not None and index not in args.only:
            continue
        cubin = build_source(variant.source, {**variant.defines(), **extra}, variant.nvcc_flags())

        def run(i, cubin=cubin, variant=variant):
            out = torch.empty(spec.output_shape(tuple(problem.x.shape)), device="cuda")
            launch_tiled(cubin, variant.entry, spec, xs[i % 3], w, None, None, out)
            return out

        y = run(0)
        if args.once:
            torch.cuda.synchronize()
            continue
        key = variant.label
        same = bool(torch.equal(y, baseline[key])) if key in baseline else None
        baseline.setdefault(key, y)
        t = time_on_device(run, 2, 10, 5.0)
        print(
            f"{variant.label:28s} {extra!s:24s} {t['time_ms']:8.3f} ms (min {t['time_ms_min']:.3f})  "
            f"equal to default build: {same}",
            flush=True,
        )


if __name__ == "__main__":
    main()
