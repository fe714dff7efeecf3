import torch
import torch.nn as nn

A = -0.5


def _cc1(t):
    return ((A + 2) * t - (A + 3)) * t * t + 1


def _cc2(t):
    return ((A * t - 5 * A) * t + 8 * A) * t - 4 * A


def _taps(in_size, out_size, device, dtype):
    # align_corners=True: source = i * (in - 1) / (out - 1); four taps, indices clamped at the borders
    scale = (in_size - 1) / (out_size - 1)
    src = torch.arange(out_size, device=device, dtype=torch.float64) * scale
    i = src.floor()
    t = src - i
    idx = torch.stack([i - 1, i, i + 1, i + 2], dim=1).long().clamp(0, in_size - 1)
    w = torch.stack([_cc2(t + 1), _cc1(t), _cc1(1 - t), _cc2(2 - t)], dim=1).to(dtype)
    return idx, w


class ModelNew(nn.Module):
    """Bicubic resize as two separable passes of four gathered taps (Keys cubic convolution)."""

    def __init__(self, out_h, out_w):
        super(ModelNew, self).__init__()
        self.out_h = out_h
        self.out_w = out_w

    def forward(self, x):
        H, W = x.shape[-2:]
        ih, wh = _taps(H, self.out_h, x.device, x.dtype)
        iw, ww = _taps(W, self.out_w, x.device, x.dtype)
        # along H: (N, C, OH, 4, W) weighted by (OH, 4, 1)
        xh = (x[:, :, ih, :] * wh[:, :, None]).sum(dim=3)
        # along W: (N, C, OH, OW, 4) weighted by (OW, 4)
        return (xh[..., iw] * ww).sum(dim=-1)
