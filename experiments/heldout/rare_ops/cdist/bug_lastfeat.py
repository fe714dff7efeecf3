import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x, y):
        d = x.shape[-1]
        diff = x[:, :, None, : d - 1] - y[:, None, :, : d - 1]
        return (diff * diff).sum(dim=-1).sqrt()
