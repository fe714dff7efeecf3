"""The convolutions (spec, input shape) each tiled kernel is checked on, with and without a GPU."""

from __future__ import annotations

from fp_analysis.ops.conv import conv2d_spec, conv3d_kk1_spec

CASES = [
    (conv2d_spec(32, 64, (5, 9), padding=(2, 4), dilation=(2, 3)), (2, 32, 30, 41)),  # the seed, smaller
    (conv2d_spec(6, 4, (3, 2), stride=(2, 3), padding=(1, 0), groups=2, bias=False), (2, 6, 11, 13)),
    (conv2d_spec(4, 4, 4, padding="same", dilation=2, groups=4), (1, 4, 9, 10)),  # asymmetric 'same', depthwise
    (conv3d_kk1_spec(3, 5, (3, 2, 1), stride=(1, 2, 2), padding=(1, 0, 1), dilation=(2, 1, 1)), (2, 3, 7, 8, 5)),
    # Rows wider than a conv_rows block (19 groups of 16 pixels): its blocks run on into the next row and
    # the next image. The first reads its input in place and stores 16 bytes at a time (W, W padding and
    # output width multiples of 4); the second, 70 channels (two channel tiles), has neither.
    (conv2d_spec(3, 5, (3, 5), padding=(1, 4), dilation=(1, 2)), (2, 3, 3, 300)),
    (conv2d_spec(2, 70, (2, 3), padding=(0, 2), dilation=(2, 1), bias=False), (1, 2, 5, 291)),
    # Few terms per output (K = 30: conv_lanes too), three of its 128-pixel units to a row, the last one partial.
    (conv2d_spec(2, 5, (3, 5), padding=(1, 4), dilation=(1, 2)), (2, 2, 3, 300)),
    # A 3-d (k, k, 1) conv that conv_rows takes as the 2-d conv of its (N, C, H, W·D) view.
    (conv3d_kk1_spec(3, 5, (3, 3, 1), padding=(1, 1, 0), dilation=(1, 2, 1)), (2, 3, 6, 9, 4)),
]
