"""Time build alternatives of the tiled kernels on the seed-000 conv (GPU), beside the defaults.

    python3 experiments/tile_probe.py [--batch 8] [--only 0 2] [--once] [--block-per-row]

Each row: a tiled variant on one of its kernels (``fpa_kernels.tiled_kernels``), built with extra defines
where the row names some, its median time by CUDA events over 3 rotating inputs, and whether its output
equals the variant's default kernel bit for bit (a layout change must not change the arithmetic of a
twinned variant). The defines: FPA_TILED_THREADS (conv_tiled.cu's block size), FPA_MIN_BLOCKS and
FPA_ROWS_MIN_BLOCKS (the blocks per SM the register cap aims at), FPA_ROWS_TPX, FPA_ROWS_TOC and
FPA_ROWS_GROUPS (conv_rows.cu's pixels and channels per thread, pixel groups per block), FPA_ROWS_IB (the
pixel blocks its steps within a tap are interleaved in). --block-per-row numbers conv_rows's pixel groups
as if every output row started a block (the layout before its blocks ran on into the next row).
"""

from __future__ import annotations

import argparse

import fpa_kernels.rows
import torch
from fpa_kernels import (
    KERNELS,
    ConvCall,
    Op,
    Schedule,
    TensorCore,
    VariantSpec,
    run_variant,
    tiled_kernel,
    variant_build,
)

from fp_analysis.ops.presets import make_problem
from fp_analysis.study.bench import time_on_device

FP32 = VariantSpec(Op.CONV2D, schedule=Schedule.TILED)
PROBES = [  # (variant, kernel, extra defines)
    (FP32, "conv_rows", {}),
    (FP32, "conv_rows", {"FPA_ROWS_IB": 2}),
    (FP32, "conv_rows", {"FPA_ROWS_IB": 4, "FPA_ROWS_GROUPS": 8, "FPA_ROWS_MIN_BLOCKS": 4}),
    (FP32, "conv_rows", {"FPA_ROWS_IB": 4, "FPA_ROWS_TOC": 4}),
    (FP32, "conv_rows", {"FPA_ROWS_IB": 4, "FPA_ROWS_TPX": 8, "FPA_ROWS_MIN_BLOCKS": 3}),
    (FP32, "conv_tiled", {}),
    (VariantSpec(Op.CONV2D, tensor_core=TensorCore.TF32X3, schedule=Schedule.TILED), "conv_wgmma", {}),
    (VariantSpec(Op.CONV2D, tensor_core=TensorCore.TF32, schedule=Schedule.TILED), "conv_wgmma", {}),
    (FP32, "conv_rows", {"FPA_ROWS_IB": 8}),
]


def _runner(variant, kernel, extra, spec, xs, w):
    """A call of ``variant`` on ``kernel`` with ``extra`` defines (extra defines: conv_rows, conv_tiled)."""
    out_shape = spec.output_shape(tuple(xs[0].shape))
    if not extra:
        return lambda i: run_variant(variant, spec, xs[i % 3], w, kernel=kernel)
    defines = {**dict(variant_build(variant, spec, kernel, tuple(xs[0].shape)).defines), **extra}
    chosen = KERNELS[kernel]
    cubin = chosen.cubin(defines, variant.nvcc_flags())

    def run(i):
        out = torch.empty(out_shape, device="cuda")
        chosen.launch(cubin, defines, variant, ConvCall(spec, xs[i % 3], w, out=out))
        return out

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--only", type=int, nargs="*", default=None, help="indices into PROBES")
    parser.add_argument("--once", action="store_true", help="one call each, no timing (for a profiler)")
    parser.add_argument("--block-per-row", action="store_true", help="conv_rows: every output row starts a block")
    args = parser.parse_args()
    if args.block_per_row:
        units = fpa_kernels.rows.row_units
        fpa_kernels.rows.row_units = lambda width, tpx, groups: -(-units(width, tpx, groups) // groups) * groups
    problem = make_problem("dilated_conv2d", seed=0, batch=args.batch)
    spec = problem.spec
    gen = torch.Generator().manual_seed(1)
    xs = [problem.x.cuda()] + [torch.rand(problem.x.shape, generator=gen).cuda() for _ in range(2)]
    w = problem.weight.cuda()
    for index, (variant, kernel, extra) in enumerate(PROBES):
        if args.only is not None and index not in args.only:
            continue
        run = _runner(variant, kernel, extra, spec, xs, w)
        y = run(0)
        if args.once:
            torch.cuda.synchronize()
            continue
        default = run_variant(variant, spec, xs[0], w)
        same = bool(torch.equal(y, default)) if variant.twinned else None
        t = time_on_device(run, 2, 10, 5.0)
        print(
            f"{variant.label:26s} {kernel:15s} {extra!s:28s} {t['time_ms']:8.3f} ms (min {t['time_ms_min']:.3f})  "
            f"equal to {tiled_kernel(variant, spec)}: {same}",
            flush=True,
        )


if __name__ == "__main__":
    main()
