"""The kernels' builds, each an nvcc process (no GPU needed; skipped where nvcc is missing): every branch of
every kernel compiles for sm_90, a build missing a define stops at its guard, the fp64 tensor-core reference
and the row and warpgroup kernels compile. The whole matrix is built by gpu/test_kernels.py.
"""

from __future__ import annotations

import re

import pytest
import torch
from fpa_kernels import (
    KERNELS,
    BuildError,
    Op,
    Schedule,
    VariantSpec,
    build_all,
    find_nvcc,
    variant_build,
)

from fp_analysis.ops.conv import conv2d_spec

from ..kernel_cases import compile_and_check, every_build


def _covering(builds: list) -> list:
    """A subset of ``builds`` in which each kernel meets every value of every define and flag set it meets in
    ``builds``: each preprocessor branch of each source, compiled at least once. Greedy set cover (the build
    that adds the most unseen values first): within a factor ln(n) of the smallest cover (Johnson 1974)."""

    def facts(build) -> set:
        return {(build.kernel, name, value) for name, value in build.defines} | {(build.kernel, build.flags)}

    unseen = set().union(*map(facts, builds))
    chosen = []
    while unseen:
        best = max(builds, key=lambda b: len(facts(b) & unseen))
        chosen.append(best)
        unseen -= facts(best)
    return chosen


@pytest.mark.slow  # 19 s of CI's two cores: the device's validate builds every variant (device_run.sh validate)
@pytest.mark.skipif(find_nvcc() is None, reason="no CUDA compiler (nvcc) on this machine: the build check is skipped")
def test_each_branch_of_each_kernel_compiles_for_sm90(tmp_path, monkeypatch):
    """Every value of every define (and each flag set) of every variant kernel, compiled at least once: the
    cover of ``test_every_variant_on_every_kernel_compiles``, quick enough for CI."""
    builds = _covering(every_build())
    kernels = {"conv_direct", "conv_mma", "conv_rows", "conv_lanes", "conv_tiled", "conv_wgmma", "conv_mma_tiled"}
    if torch.cuda.is_available() and torch.cuda.get_device_capability() != (9, 0):
        kernels.discard("conv_wgmma")  # it refuses to run on other GPUs, so no run needs its build there
    assert {b.kernel for b in builds} == kernels
    compile_and_check(tmp_path, monkeypatch, builds)


@pytest.mark.skipif(find_nvcc() is None, reason="no CUDA compiler (nvcc) on this machine: the build check is skipped")
def test_a_build_missing_a_define_stops_at_its_guard(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_KERNEL_CACHE", str(tmp_path))
    build = variant_build(VariantSpec(Op.CONV2D))
    defines = {k: v for k, v in build.defines if k != "FPA_OPROUND"}
    with pytest.raises(BuildError, match=re.escape("conv_direct.cu reads FPA_OPROUND: its build must define it")):
        KERNELS["conv_direct"].cubin(defines)


@pytest.mark.skipif(find_nvcc() is None, reason="no CUDA compiler (nvcc) on this machine: the build check is skipped")
def test_the_fp64_tensor_core_reference_compiles_for_sm90(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_KERNEL_CACHE", str(tmp_path))
    path = KERNELS["conv_dmma_tiled"].cubin()
    assert path.read_bytes()[:4] == b"\x7fELF"
    defines = dict(variant_build(VariantSpec(Op.CONV2D, schedule=Schedule.TILED)).defines)
    for threads in (128, 256):  # both thread layouts of the tiled CUDA-core kernel build
        assert KERNELS["conv_tiled"].cubin({**defines, "FPA_TILED_THREADS": threads}).exists()


SEED = conv2d_spec(32, 64, (5, 9), padding=(2, 4), dilation=(2, 3), bias=False)


@pytest.mark.skipif(find_nvcc() is None, reason="no CUDA compiler (nvcc) on this machine: the build check is skipped")
def test_the_row_and_warpgroup_kernels_compile(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_KERNEL_CACHE", str(tmp_path))
    builds = [
        variant_build(VariantSpec("conv2d", schedule="tiled"), SEED, "conv_rows"),
        variant_build(VariantSpec("conv_gelu", schedule="tiled"), conv2d_spec(64, 64, 1), "conv_rows"),  # KW = 1
        variant_build(VariantSpec("conv2d", tensor_core="3xtf32", schedule="tiled"), SEED, "conv_wgmma"),  # CK 32
        variant_build(
            VariantSpec("conv2d", tensor_core="tf32_mma", schedule="tiled"), conv2d_spec(12, 4, 3), "conv_wgmma"
        ),
    ]
    assert all(p.read_bytes()[:4] == b"\x7fELF" for p in build_all(builds).values())
