import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x, y):
        diff = x[:, :, None, :] - y[:, None, :, :]
        return (diff * diff).sum(dim=-1).sqrt()
