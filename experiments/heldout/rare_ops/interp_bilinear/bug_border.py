import torch
import torch.nn as nn


def _axis(in_size, out_size, device, dtype):
    scale = in_size / out_size
    src = (torch.arange(out_size, device=device, dtype=torch.float64) + 0.5) * scale - 0.5
    i0 = src.floor().long().clamp_max(in_size - 1)
    i1 = (i0 + 1).clamp_max(in_size - 1)
    lam = (src - i0.to(torch.float64)).to(dtype)
    return i0, i1, lam


class ModelNew(nn.Module):
    def __init__(self, out_h, out_w):
        super(ModelNew, self).__init__()
        self.out_h = out_h
        self.out_w = out_w

    def forward(self, x):
        H, W = x.shape[-2:]
        h0, h1, lh = _axis(H, self.out_h, x.device, x.dtype)
        w0, w1, lw = _axis(W, self.out_w, x.device, x.dtype)
        lh = lh[:, None]
        rows = x[:, :, h0, :] * (1 - lh) + x[:, :, h1, :] * lh
        return rows[..., w0] * (1 - lw) + rows[..., w1] * lw
