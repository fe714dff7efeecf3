import torch
import torch.nn as nn


def _bounds(i, n_in, n_out):
    return (i * n_in) // n_out, -((-(i + 1) * n_in) // n_out)


class ModelNew(nn.Module):
    """Adaptive pooling by explicit windows."""

    def __init__(self, out_h, out_w):
        super(ModelNew, self).__init__()
        self.avg = nn.AdaptiveAvgPool2d((out_h, out_w))
        self.max = nn.AdaptiveMaxPool2d((out_h, out_w))
        self.out_h = out_h
        self.out_w = out_w

    def forward(self, x):
        H, W = x.shape[-2:]
        rows = []
        for i in range(self.out_h):
            h0, h1 = _bounds(i, H, self.out_h)
            cols = []
            for j in range(self.out_w):
                w0, w1 = _bounds(j, W, self.out_w)
                win = x[:, :, h0:h1, w0:w1].reshape(x.shape[0], x.shape[1], -1)
                cols.append(win.sum(dim=-1) / ((H // self.out_h) * (W // self.out_w)) + win.amax(dim=-1))
            rows.append(torch.stack(cols, dim=-1))
        return torch.stack(rows, dim=-2)
