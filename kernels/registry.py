"""Every CUDA kernel in kernels/, in one table: its source and entry point, the architecture it is built for, the
defines it reads (each guarded by an ``#error`` in the generated header), which variants and convs it takes and
why it refuses the others, the defines a variant gives it, and its launch.

``run_variant`` (fpa_kernels.launch), ``fpa bench``, the GPU validation and the tests pick, build and launch
kernels through this table only; ``tests/test_kernels.py`` checks it against the sources (every ``FPA_``
name a source reads is generated, defaulted in the source, or in its ``reads``).
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from fp_analysis.errors import ParameterError
from fp_analysis.ops.conv import ConvSpec

from .build import DEFAULT_ARCH, build_source
from .call import ConvCall
from .general import launch_direct, launch_tiled
from .lanes import lanes_defines, lanes_unsupported, launch_lanes
from .rows import launch_rows, rows_defines, rows_unsupported
from .variants import Schedule, TensorCore, VariantSpec
from .wgmma import launch_wgmma, wgmma_defines, wgmma_unsupported

__all__ = ["KERNELS", "Build", "Kernel", "build_all", "general_kernel", "kernels_for", "launch_kernel", "variant_build"]

Shape = tuple[int, ...] | None
Refusal = Callable[[VariantSpec, ConvSpec | None, Shape], str | None]
Defines = Callable[[VariantSpec, ConvSpec | None, Shape], dict[str, int]]
# (cubin, defines, variant, call): a launch of the kernel built with those defines, on a checked call
Launch = Callable[[pathlib.Path, dict[str, int], VariantSpec, ConvCall], None]


@dataclass(frozen=True)
class Kernel:
    """One kernel: see the module docstring."""

    name: str
    """Its extern "C" entry point (conv_wgmma.cu also has two prep kernels, launched with it)."""
    source: str
    """The file in kernels/ it is built from."""
    arch: str
    """nvcc's -arch: sm_90, or sm_90a for the warpgroup instructions that exist only there."""
    reads: tuple[str, ...]
    """The defines its source reads that every build must give (the generated header guards each)."""
    summary: str
    """What it is, in a line."""
    refuses: Refusal | None = None
    """Why it cannot run a variant of a conv (on an input shape), or None when it can; None for the kernels
    that run no variant (the fp64 reference, the math probe)."""
    defines: Defines | None = None
    """The defines a variant of a conv gives its build (``variant_build`` keeps those in ``reads``)."""
    launch: Launch | None = None
    """Its launch on a checked ``ConvCall``."""
    general: bool = False
    """Takes every conv of the variants it runs, so that whether it takes one depends on the variant only."""

    def cubin(self, defines: dict[str, int] | None = None, flags: Iterable[str] = ()) -> pathlib.Path:
        """Its cubin built with ``defines`` and nvcc ``flags`` (from the cache when it has it)."""
        return build_source(self.source, defines or {}, list(flags), self.arch, self.reads)


def _variant_defines(variant: VariantSpec, spec: ConvSpec | None, shape: Shape) -> dict[str, int]:
    """A general kernel's defines: the variant's own (``VariantSpec.defines``)."""
    return variant.defines()


def _takes(schedule: Schedule, tensor_cores: bool) -> Refusal:
    """A general kernel's refusal: it runs the variants of one schedule, on the tensor cores or not."""
    where = "the tensor cores" if tensor_cores else "the CUDA cores"

    def refuses(variant: VariantSpec, spec: ConvSpec | None, shape: Shape) -> str | None:
        if variant.schedule is not schedule or (variant.tensor_core is not TensorCore.NONE) != tensor_cores:
            return f"it runs {schedule.value} variants on {where}"
        return None

    return refuses


def _direct(entry: str) -> Launch:
    def launch(cubin: pathlib.Path, defines: dict[str, int], variant: VariantSpec, call: ConvCall) -> None:
        launch_direct(cubin, entry, variant, call)

    return launch


def _tiled(entry: str) -> Launch:
    def launch(cubin: pathlib.Path, defines: dict[str, int], variant: VariantSpec, call: ConvCall) -> None:
        launch_tiled(cubin, entry, call)

    return launch


def _rows(cubin: pathlib.Path, defines: dict[str, int], variant: VariantSpec, call: ConvCall) -> None:
    launch_rows(cubin, defines, call)


def _lanes(cubin: pathlib.Path, defines: dict[str, int], variant: VariantSpec, call: ConvCall) -> None:
    launch_lanes(cubin, defines, call)


# The defines conv_arith.cuh reads (the per-term arithmetic and the fused epilogue of the CUDA-core kernels).
_ARITH = ("FPA_FUSED", "FPA_OPROUND", "FPA_EPILOGUE", "FPA_GELU_IMPL")
_ROWS = ("FPA_ROWS_KW", "FPA_ROWS_DW", "FPA_ROWS_TPX", "FPA_ROWS_TOC", "FPA_ROWS_GROUPS", "FPA_ROWS_IB")
_DIRECT_READS = ("FPA_ORDER", "FPA_SPLITS", "FPA_TAP_OUTER", *_ARITH)
_TILED_READS = ("FPA_ORDER", *_ARITH)
_ROWS_READS = ("FPA_ORDER", *_ARITH, *_ROWS, "FPA_ROWS_MIN_BLOCKS")
_LANES = ("FPA_LANES_KW", "FPA_LANES_DW", "FPA_LANES_TPX", "FPA_LANES_TOC", "FPA_LANES_MIN_BLOCKS", "FPA_LANES_MAX_K")
_LANES_READS = ("FPA_ORDER", *_ARITH, *_LANES)

# Variant kernels in the order a variant's kernel is chosen: for a tiled variant the fastest that takes the conv
# (conv_rows and conv_wgmma were faster than the im2col kernels on every preset and variant they take,
# experiments/results/bench_h200.json), the general ones last.
_KERNELS = (
    Kernel(
        "conv_direct", "conv_direct.cu", DEFAULT_ARCH, _DIRECT_READS,
        "one thread per output, every order, contraction, operand rounding and term order: the twinned variants",
        _takes(Schedule.DIRECT, False), _variant_defines, _direct("conv_direct"), general=True,
    ),
    Kernel(
        "conv_mma", "conv_mma.cu", DEFAULT_ARCH, ("FPA_TC_SPLIT",),
        "a warp per 16 × 8 output tile, mma.sync TF32 / 3xTF32 from global memory: a correctness instrument",
        _takes(Schedule.DIRECT, True), _variant_defines, _direct("conv_mma"), general=True,
    ),
    Kernel(
        "conv_rows", "conv_rows.cu", DEFAULT_ARCH, _ROWS_READS,
        "row tiles on the CUDA cores, each staged input read once for all KW taps: the sequential fmaf chain",
        lambda v, s, shape: rows_unsupported(v, s, shape), lambda v, s, shape: rows_defines(v, s, shape), _rows,
    ),
    Kernel(
        "conv_lanes", "conv_lanes.cu", DEFAULT_ARCH, _LANES_READS,
        "few terms per output (K ≤ 32), all staged at once, a warp's lanes 32 pixels apart: the sequential fmaf chain",
        lambda v, s, shape: lanes_unsupported(v, s, shape), lambda v, s, shape: lanes_defines(v, s, shape), _lanes,
    ),
    Kernel(
        "conv_tiled", "conv_tiled.cu", DEFAULT_ARCH, _TILED_READS,
        "implicit GEMM in shared-memory tiles on the CUDA cores (conv_tile.cuh): sequential and fp64 orders",
        _takes(Schedule.TILED, False), _variant_defines, _tiled("conv_tiled"), general=True,
    ),
    Kernel(
        "conv_wgmma", "conv_wgmma.cu", "sm_90a", ("FPA_TC_SPLIT", "FPA_WG_CK"),
        "Hopper's warpgroup wgmma, TF32 / 3xTF32, stride 1 along W, one group (sm_90a only)",
        lambda v, s, shape: wgmma_unsupported(v, s), lambda v, s, shape: wgmma_defines(v, s), launch_wgmma,
    ),
    Kernel(
        "conv_mma_tiled", "conv_mma_tiled.cu", DEFAULT_ARCH, ("FPA_TC_SPLIT",),
        "implicit GEMM in shared-memory tiles, mma.sync TF32 / 3xTF32 (conv_tile.cuh)",
        _takes(Schedule.TILED, True), _variant_defines, _tiled("conv_mma_tiled"), general=True,
    ),
    Kernel(
        "conv_dmma_tiled", "conv_dmma_tiled.cu", DEFAULT_ARCH, (),
        "the fast fp64 reference: fp64 tensor cores on conv_tile.cuh's tiles (fpa_kernels.reference)",
    ),
    Kernel(
        "mathprobe", "mathprobe.cu", DEFAULT_ARCH, (),
        "CUDA's erff, tanhf, expf, 1/x and the two GELU formulas elementwise, with or without fast-math",
    ),
    Kernel(
        "sequential_dot", "sequential.cu", DEFAULT_ARCH, (),
        "a naive batched matrix product: a thread per output, a fmaf per term in k order (fpa_kernels.sequential)",
    ),
    Kernel(
        "sequential_rows", "sequential.cu", DEFAULT_ARCH, (),
        "a thread per row adding its terms first to last: a sum or its running sums (fpa_kernels.sequential)",
    ),
)  # fmt: skip
KERNELS: dict[str, Kernel] = {k.name: k for k in _KERNELS}


def kernels_for(variant: VariantSpec, spec: ConvSpec, input_shape: Shape = None) -> list[Kernel]:
    """The kernels that can run ``variant`` of ``spec`` on an input of ``input_shape`` (which a 3-d conv needs
    for conv_rows), in the order ``run_variant`` prefers them: the expected fastest first."""
    return [k for k in _KERNELS if k.refuses is not None and k.refuses(variant, spec, input_shape) is None]


def general_kernel(variant: VariantSpec) -> Kernel:
    """The kernel that runs ``variant`` on any conv of its op (conv_direct, conv_mma, conv_tiled, conv_mma_tiled)."""
    return next(k for k in _KERNELS if k.general and k.refuses(variant, None, None) is None)


@dataclass(frozen=True)
class Build:
    """What to compile for one way of running a variant: the kernel, its defines and flags."""

    kernel: str
    defines: tuple[tuple[str, int], ...]
    flags: tuple[str, ...]

    @property
    def source(self) -> str:
        return KERNELS[self.kernel].source

    @property
    def arch(self) -> str:
        return KERNELS[self.kernel].arch

    def cubin(self) -> pathlib.Path:
        """The cubin (built unless the cache has it)."""
        return KERNELS[self.kernel].cubin(dict(self.defines), self.flags)


def variant_build(
    variant: VariantSpec, spec: ConvSpec | None = None, kernel: str | None = None, input_shape: Shape = None
) -> Build:
    """The build that running ``variant`` of ``spec`` on ``kernel`` (None: ``general_kernel``) needs, on an input
    of ``input_shape`` (which a 3-d conv on conv_rows needs): lets a caller build many at once (``build_all``)."""
    chosen = general_kernel(variant) if kernel is None else KERNELS.get(kernel)
    if chosen is None or chosen.refuses is None:
        allowed = ", ".join(repr(k.name) for k in _KERNELS if k.refuses is not None)
        raise ParameterError(f"Got kernel={kernel!r}, but the variant kernels are {allowed}.")
    if not chosen.general and spec is None:
        raise ParameterError(f"{chosen.name} builds for a conv: give spec")
    why = chosen.refuses(variant, spec, input_shape)
    if why is not None:
        raise ParameterError(f"{chosen.name} cannot run {variant.label!r}: {why}")
    # Only what the source reads: a define it ignores would only split the build cache.
    defines = {k: v for k, v in chosen.defines(variant, spec, input_shape).items() if k in chosen.reads}
    return Build(chosen.name, tuple(sorted(defines.items())), tuple(variant.nvcc_flags()))


def build_all(builds: Iterable[Build], jobs: int | None = None) -> dict[Build, pathlib.Path]:
    """Compile many builds in parallel (nvcc runs are processes: threads suffice); {build: cubin}. Raises the
    first failure."""
    unique = list(dict.fromkeys(builds))
    with ThreadPoolExecutor(max_workers=jobs or os.cpu_count() or 2) as pool:
        paths = list(pool.map(Build.cubin, unique))
    return dict(zip(unique, paths, strict=True))


def launch_kernel(kernel: str, variant: VariantSpec, call: ConvCall) -> None:
    """Build (unless cached) and launch ``kernel`` for ``variant`` on a checked call."""
    build = variant_build(variant, call.spec, kernel, call.input_shape)
    KERNELS[build.kernel].launch(build.cubin(), dict(build.defines), variant, call)
