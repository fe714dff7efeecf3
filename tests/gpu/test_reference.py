"""The fp64 reference on a GPU: fp64_full on CUDA matches the CPU's within fp64 accumulation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fp_analysis.ops.reference import (
    abs_dot_at,
    fp64_full,
)
from fp_analysis.ops.terms import gather_terms, sample_output_indices

from ..conv_configs import CHUNK_CONFIGS, gamma, operands

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")

# ----------------------------------------------------------------------------------------------
# fp64_full
# ----------------------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_fp64_full_on_cuda_matches_cpu_within_fp64_accumulation():
    spec, input_shape = CHUNK_CONFIGS[1]
    x, w, b = operands(spec, input_shape, 3)
    cpu = fp64_full(spec, x, w, b)
    gpu = fp64_full(spec, x.cuda(), w.cuda(), b).cpu()
    index = sample_output_indices(cpu.shape, 10**6, 0)
    bound = gamma(spec.K) * abs_dot_at(gather_terms(spec, x, w, b, index)) * 2
    assert (np.abs((gpu - cpu).numpy().reshape(-1)) <= bound).all()
