"""The library's numeric functions given a scalar return a scalar (numpy's, Python's float), an array an array."""

from __future__ import annotations

import numpy as np
import pytest

from fp_analysis import flush_subnormals, round_to, ulp


@pytest.mark.parametrize("value", [np.float32(1 + 2**-11), np.float64(1 + 2**-11), 1 + 2**-11])
def test_library_functions_given_a_scalar_return_a_scalar(value):
    rounded = round_to(value, "tf32")
    assert np.ndim(rounded) == 0 and rounded == 1.0  # ties to even
    assert np.ndim(ulp(value)) == 0 and np.ndim(flush_subnormals(np.float32(value))) == 0
    assert round_to(np.array([value, value]), "tf32").shape == (2,)
