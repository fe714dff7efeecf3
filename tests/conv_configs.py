"""Small convolutions (spec, input shape) the fp64 reference tests run on, their operands, and the bound γ_n."""

from __future__ import annotations

import torch

from fp_analysis.ops.conv import conv2d_spec, conv3d_kk1_spec

U64 = 2.0**-53


def gamma(n: int, u: float = U64) -> float:
    """γ_n = n·u / (1 − n·u) (Higham 2002, Lemma 3.1)."""
    return n * u / (1 - n * u)


def operands(spec, input_shape, seed):
    """Seeded x, w and (where ``spec`` has a bias) b of ``spec`` on ``input_shape``."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(input_shape, generator=gen)
    w = torch.randn(spec.weight_shape, generator=gen)
    b = torch.randn(spec.out_channels, generator=gen) if spec.bias else None
    return x, w, b


CHUNK_CONFIGS = [
    (conv2d_spec(3, 5, 3, padding=1), (3, 3, 7, 11)),
    (conv2d_spec(6, 9, (2, 3), stride=(2, 1), dilation=(1, 2), groups=3, bias=False), (2, 6, 9, 8)),
    (conv2d_spec(5, 5, (4, 2), padding="same", groups=5), (2, 5, 6, 7)),  # depthwise, asymmetric 'same'
    (conv2d_spec(4, 8, 3, groups=2), (1, 4, 5, 13)),
    (conv3d_kk1_spec(3, 4, (3, 2, 1), padding=(1, 0, 1), stride=(1, 1, 2)), (2, 3, 5, 6, 7)),
    (conv3d_kk1_spec(4, 6, 2, padding="same", groups=2, bias=False), (2, 4, 5, 3, 2)),
]
