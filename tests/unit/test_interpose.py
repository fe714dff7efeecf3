"""The interposer's fp64 convolutions on a CPU, computed in pieces when their im2col columns would be large."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fp_analysis.model import conv64
from fp_analysis.model.interpose import Arithmetic, evaluate

CASES = [
    ("conv2d", lambda: nn.Conv2d(6, 5, (3, 2), padding=(1, 2), dilation=(2, 1)), (3, 6, 9, 8)),
    ("conv3d", lambda: nn.Conv3d(6, 4, 3, stride=(1, 2, 1)), (2, 6, 5, 6, 7)),
    # padding "valid" reaches ATen as one value, [0], for every spatial dim
    ("valid_padding", lambda: nn.Conv2d(6, 5, 3, padding="valid"), (2, 6, 9, 10)),
    ("same_padding", lambda: nn.Conv2d(6, 5, (3, 2), padding="same", dilation=2), (2, 6, 9, 10)),
    ("grouped", lambda: nn.Conv2d(6, 4, 3, groups=2), (2, 6, 7, 7)),
    ("transposed", lambda: nn.ConvTranspose2d(6, 3, 3, stride=2, output_padding=1), (2, 6, 5, 4)),
]


@pytest.mark.parametrize(("name", "make", "shape"), CASES, ids=[c[0] for c in CASES])
def test_fp64_convolutions_in_pieces_equal_the_whole(name, make, shape, monkeypatch):
    torch.manual_seed(0)
    model, x = make(), torch.rand(shape)
    whole = evaluate(model, [x], Arithmetic()).output
    monkeypatch.setattr(conv64, "CONV64_BYTES", 64)  # every conv in pieces: one item, one input channel
    pieces = evaluate(model, [x], Arithmetic()).output
    assert pieces.dtype == torch.float64 and pieces.shape == whole.shape
    # the same products in another fp64 order (input-channel blocks where ``split``, else batch items apart)
    torch.testing.assert_close(pieces, whole, rtol=1e-13, atol=1e-15)
