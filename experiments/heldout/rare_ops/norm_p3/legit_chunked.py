import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x):
        # |x|^3 as x*x*|x|, summed in chunks of 128, then the cube root
        cubes = x * x * x.abs()
        acc = torch.zeros_like(x[:, :1])
        for s in range(0, x.shape[-1], 128):
            acc = acc + cubes[:, s : s + 128].sum(dim=-1, keepdim=True)
        return x / acc.pow(1.0 / 3.0)
