"""Time build alternatives of the tiled kernels on a preset's conv (GPU), beside the defaults.

    python3 experiments/tile_probe.py [--preset dilated_conv2d] [--batch 8] [--only 0 2] [--once] [--block-per-row]

Each row: a tiled variant on one of its kernels (``fpa_kernels.tiled_kernels``), built with extra defines
where the row names some, its median time by CUDA events over 3 rotating inputs, and whether its output
equals the variant's default kernel bit for bit (a layout change must not change the arithmetic of a
twinned variant). The defines: FPA_TILED_THREADS (conv_tiled.cu's block size), FPA_MIN_BLOCKS and
FPA_ROWS_MIN_BLOCKS (the blocks per SM the register cap aims at), FPA_ROWS_TPX, FPA_ROWS_TOC and
FPA_ROWS_GROUPS (conv_rows.cu's pixels and channels per thread, pixel groups per block), FPA_ROWS_IB (the
pixel blocks its steps within a tap are interleaved in), FPA_LANES_TPX, FPA_LANES_TOC, FPA_LANES_MIN_BLOCKS and
FPA_LANES_UNROLL_KW (conv_lanes.cu's pixels and channels per thread, blocks per SM, taps unrolled), FPA_DMMA_K
(the fast fp64 reference's mma shape: 0 for m8n8k4, else m16n8kK; its rows show the largest difference from cuDNN's
fp64 conv instead of bitwise equality, and cuDNN's fp32 and fp64 times come first). --block-per-row numbers
conv_rows's pixel groups as if every output row started a block (the layout before its blocks ran on into the next row).
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
from fpa_kernels.general import launch_tiled

from fp_analysis.ops.presets import make_problem
from fp_analysis.study.bench import time_on_device

FP32 = VariantSpec(Op.CONV2D, schedule=Schedule.TILED)
FP32_3D = VariantSpec(Op.CONV3D_KK1, schedule=Schedule.TILED)
TF32X3 = VariantSpec(Op.CONV2D, tensor_core=TensorCore.TF32X3, schedule=Schedule.TILED)
TF32 = VariantSpec(Op.CONV2D, tensor_core=TensorCore.TF32, schedule=Schedule.TILED)
FP64 = None  # the fast fp64 reference (conv_dmma_tiled.cu), not a variant
PROBES = [  # (variant, kernel, extra defines) on the seed
    (FP32, "conv_rows", {}),
    (FP32, "conv_rows", {"FPA_ROWS_IB": 2}),
    (FP32, "conv_rows", {"FPA_ROWS_IB": 4, "FPA_ROWS_GROUPS": 8, "FPA_ROWS_MIN_BLOCKS": 4}),
    (FP32, "conv_rows", {"FPA_ROWS_IB": 4, "FPA_ROWS_TOC": 4}),
    (FP32, "conv_rows", {"FPA_ROWS_IB": 4, "FPA_ROWS_TPX": 8, "FPA_ROWS_MIN_BLOCKS": 3}),
    (FP32, "conv_tiled", {}),
    (TF32X3, "conv_wgmma", {}),
    (TF32, "conv_wgmma", {}),
    (FP32, "conv_rows", {"FPA_ROWS_IB": 8}),
    *[(FP64, "conv_dmma_tiled", {"FPA_DMMA_K": k}) for k in (0, 4, 8, 16)],
]
PROBES_3D = [  # conv3d (k, k, 1): bound by the 2.6 GB it writes (the default: 8 pixels per thread, 3 blocks per SM)
    (FP32_3D, "conv_rows", {}),
    (FP32_3D, "conv_rows", {"FPA_ROWS_TPX": 16, "FPA_ROWS_MIN_BLOCKS": 2}),
    (FP32_3D, "conv_rows", {"FPA_ROWS_MIN_BLOCKS": 2}),
    (FP32_3D, "conv_rows", {"FPA_ROWS_GROUPS": 8, "FPA_ROWS_MIN_BLOCKS": 6}),
    (FP32_3D, "conv_rows", {"FPA_ROWS_TPX": 16, "FPA_ROWS_TOC": 4, "FPA_ROWS_GROUPS": 8, "FPA_ROWS_MIN_BLOCKS": 4}),
    # conv_lanes.cu (K ≤ 32): 4 pixels 32 apart × 8 channels a thread, 4 blocks per SM (64 registers, no spills)
    (FP32_3D, "conv_lanes", {}),
    (FP32_3D, "conv_lanes", {"FPA_LANES_UNROLL_KW": 1}),  # the taps unrolled: 44 bytes of spills
    (FP32_3D, "conv_lanes", {"FPA_LANES_TOC": 16}),  # 16 channels: 127 registers, 16 warps an SM
    (FP32_3D, "conv_lanes", {"FPA_LANES_TPX": 2, "FPA_LANES_MIN_BLOCKS": 6}),  # 40 registers, 40 bytes of spills
    (FP32_3D, "conv_lanes", {"FPA_LANES_TPX": 8, "FPA_LANES_MIN_BLOCKS": 2}),
    *[(FP64, "conv_dmma_tiled", {"FPA_DMMA_K": k}) for k in (0, 8)],
]
FUSED = VariantSpec(Op.CONV_GELU, schedule=Schedule.TILED)
PROBES_GELU = [  # conv → ×m → LeakyReLU → GELU, 3 × 3 (K = 576): 3 taps a window
    (FUSED, "conv_rows", {}),
    (FUSED, "conv_rows", {"FPA_ROWS_TPX": 8, "FPA_ROWS_MIN_BLOCKS": 3}),
    (FUSED, "conv_tiled", {}),
    (VariantSpec(Op.CONV2D, schedule=Schedule.TILED), "conv_rows", {}),  # the conv alone: what the epilogue costs
]
PRESET_PROBES = {"dilated_conv2d": PROBES, "conv3d_kk1": PROBES_3D, "conv_gelu": PROBES_GELU}


def _side_of(variant, side):
    """(bias, multiplier) a call of ``variant`` takes: no multiplier for a plain conv of a fused preset's spec."""
    bias, multiplier = side
    return bias, multiplier if variant.op is Op.CONV_GELU else None


def _runner(variant, kernel, extra, spec, xs, w, side):
    """A call of ``variant`` on ``kernel`` with ``extra`` defines; of the fast fp64 reference's kernel with them
    when ``variant`` is FP64. ``side``: the problem's bias and multiplier on the GPU (None where it has none)."""
    out_shape = spec.output_shape(tuple(xs[0].shape))
    if variant is FP64:
        cubin = KERNELS[kernel].cubin(extra)

        def run64(i):
            out = torch.empty(out_shape, device="cuda", dtype=torch.float64)
            launch_tiled(cubin, kernel, ConvCall(spec, xs[i % 3], w, out=out))
            return out

        return run64
    bias, multiplier = _side_of(variant, side)
    if not extra:
        return lambda i: run_variant(variant, spec, xs[i % 3], w, bias, multiplier, kernel=kernel)
    defines = {**dict(variant_build(variant, spec, kernel, tuple(xs[0].shape)).defines), **extra}
    chosen = KERNELS[kernel]
    cubin = chosen.cubin(defines, variant.nvcc_flags())

    def run(i):
        out = torch.empty(out_shape, device="cuda")
        chosen.launch(cubin, defines, variant, ConvCall(spec, xs[i % 3], w, bias, multiplier, out=out))
        return out

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", choices=sorted(PRESET_PROBES), default="dilated_conv2d")
    parser.add_argument("--batch", type=int, default=None)
    parser.add_argument("--only", type=int, nargs="*", default=None, help="indices into PROBES")
    parser.add_argument("--once", action="store_true", help="one call each, no timing (for a profiler)")
    parser.add_argument("--block-per-row", action="store_true", help="conv_rows: every output row starts a block")
    args = parser.parse_args()
    if args.block_per_row:
        units = fpa_kernels.rows.row_units
        fpa_kernels.rows.row_units = lambda width, tpx, groups: -(-units(width, tpx, groups) // groups) * groups
    problem = make_problem(args.preset, seed=0, batch=args.batch)
    spec = problem.spec
    gen = torch.Generator().manual_seed(1)
    xs = [problem.x.cuda()] + [torch.rand(problem.x.shape, generator=gen).cuda() for _ in range(2)]
    w = problem.weight.cuda()
    side = tuple(None if t is None else t.cuda() for t in (problem.bias, problem.multiplier))
    probes = PRESET_PROBES[args.preset]
    fp64 = None
    if not args.once and any(variant is FP64 for variant, _, _ in probes):
        fp64 = _cudnn_times(spec, xs, w)
    for index, (variant, kernel, extra) in enumerate(probes):
        if args.only is not None and index not in args.only:
            continue
        run = _runner(variant, kernel, extra, spec, xs, w, side)
        y = run(0)
        if args.once:
            torch.cuda.synchronize()
            continue
        t = time_on_device(run, 2, 10, 5.0)
        if variant is FP64:
            scale = float(fp64.abs().max())
            check = f"max |diff| from cuDNN fp64: {float((y - fp64).abs().max()):.3e} (max |y| {scale:.3g})"
            label = "fp64 reference"
        else:
            default = run_variant(variant, spec, xs[0], w, *_side_of(variant, side))
            check = f"equal to {tiled_kernel(variant, spec, tuple(xs[0].shape))}: {bool(torch.equal(y, default))}"
            if variant.tensor_core is not TensorCore.NONE and fp64 is not None:  # the bits change with the part size
                check += f", max |y - cuDNN fp64| {float((y.double() - fp64).abs().max()):.3e}"
            label = variant.label
        print(
            f"{label:26s} {kernel:15s} {extra!s:28s} {t['time_ms']:8.3f} ms (min {t['time_ms_min']:.3f})  {check}",
            flush=True,
        )


def _cudnn_times(spec, xs, w):
    """Print cuDNN's fp32 (TF32 off) and fp64 times of the conv; return its fp64 output of the first input."""
    conv = torch.nn.functional.conv3d if spec.spatial_dims == 3 else torch.nn.functional.conv2d
    padding = tuple(lo for lo, _ in spec.padding)
    torch.backends.cudnn.allow_tf32 = False

    def call(dtype):
        return lambda i: conv(xs[i % 3].to(dtype), w.to(dtype), None, spec.stride, padding, spec.dilation, spec.groups)

    x64, w64 = [x.double() for x in xs], w.double()
    for name, fn in (
        ("fp32", call(torch.float32)),
        ("fp64", lambda i: conv(x64[i % 3], w64, None, spec.stride, padding, spec.dilation, spec.groups)),
    ):
        t = time_on_device(fn, 1, 5, 5.0)
        print(f"cuDNN {name:20s} {t['time_ms']:8.3f} ms (min {t['time_ms_min']:.3f})", flush=True)
    return conv(x64[0], w64, None, spec.stride, padding, spec.dilation, spec.groups)


if __name__ == "__main__":
    main()
