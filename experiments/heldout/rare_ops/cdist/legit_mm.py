import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x, y):
        # |x|^2 + |y|^2 - 2 x.y, clamped at 0 before the square root
        xx = (x * x).sum(dim=-1, keepdim=True)
        yy = (y * y).sum(dim=-1).unsqueeze(1)
        d2 = torch.baddbmm(xx + yy, x, y.transpose(1, 2), alpha=-2.0)
        return d2.clamp_min(0.0).sqrt()
