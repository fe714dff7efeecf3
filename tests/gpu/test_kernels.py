"""Kernel variants on a GPU: every build of the whole matrix compiles, and each twinned variant equals its twin
bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from fpa_kernels import (
    Op,
    find_nvcc,
    run_variant,
    twin,
    variant_matrix,
)

from fp_analysis.ops.conv import conv2d_spec, conv3d_kk1_spec

from ..kernel_cases import compile_and_check, every_build


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="run on the device (experiments/device_run.sh gputests)")
@pytest.mark.skipif(find_nvcc() is None, reason="no CUDA compiler (nvcc) on this machine: the build check is skipped")
def test_every_variant_on_every_kernel_compiles(tmp_path, monkeypatch):
    """Every build of the whole matrix (~170 cubins): a minute on two cores, so it runs with the GPU tests on
    the device, where it takes seconds; CI compiles its cover (process/test_kernel_builds.py)."""
    compile_and_check(tmp_path, monkeypatch, every_build())


@pytest.mark.gpu
@pytest.mark.parametrize("op", list(Op))
def test_kernels_equal_their_twins_on_the_gpu(op):
    spec = (
        conv3d_kk1_spec(4, 6, (3, 2, 1), stride=(1, 2, 2), padding=(1, 0, 1), groups=2)
        if op is Op.CONV3D_KK1
        else conv2d_spec(4, 6, (3, 2), stride=(2, 1), padding=1, groups=2, bias=True)
    )
    shape = (2, 4, 7, 9, 5) if op is Op.CONV3D_KK1 else (3, 4, 11, 9)
    x, w = torch.rand(shape), torch.randn(spec.weight_shape)
    b = torch.randn(6) if spec.bias else None
    m = torch.randn(6, 1, 1) if op is Op.CONV_GELU else None
    cuda = [t.cuda() if t is not None else None for t in (x, w, b, m)]
    for variant in variant_matrix(op):
        if variant.twinned:
            got = run_variant(variant, spec, *cuda).cpu().numpy()
            assert np.array_equal(got.view(np.uint32), twin(variant, spec, x, w, b, m).view(np.uint32)), variant.label
