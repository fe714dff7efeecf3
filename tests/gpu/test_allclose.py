"""``numerics.allclose.atol_to_pass`` on CUDA tensors (the check's own device in a GPU explain): the atol found is
where ``torch.allclose`` on the GPU starts to pass, at the float32 and float64 numbers about it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fp_analysis.numerics import allclose
from fp_analysis.numerics.allclose import atol_to_pass


@pytest.mark.gpu
@pytest.mark.parametrize("rtol", [0.0, 1e-4, 1e-2])
def test_the_atol_found_on_the_gpu_is_where_the_gpus_check_starts_to_pass(rtol):
    generator = torch.Generator(device="cuda").manual_seed(11)
    mismatches = []
    for case in range(200):
        size = (1, 100, 10_000, 1 << 20)[case % 4]
        reference = torch.randn(size, device="cuda", generator=generator) * 10 ** (case % 7 - 3)
        off = torch.randn(size, device="cuda", generator=generator) * 10 ** (case % 7 - 3 - (case % 9))
        candidate = reference + off * (torch.rand(size, device="cuda", generator=generator) < 0.3)
        found = atol_to_pass(reference, candidate, rtol)
        assert found.known and found.atol is not None
        for atol in (found.atol, allclose._below(found.atol), float(np.nextafter(found.atol, 1.0)), found.atol * 2):
            if found.passes(atol) != bool(torch.allclose(reference, candidate, atol=atol, rtol=rtol)):
                mismatches.append((case, atol))
    assert not mismatches
