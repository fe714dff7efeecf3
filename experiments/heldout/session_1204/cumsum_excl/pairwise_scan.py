import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        # Hillis-Steele scan on the shifted input
        z = torch.zeros(x.shape[0], 1)
        y = torch.cat((z, x), dim=1)[:-1]
        n = y.shape[1]
        s = 1
        while s < n:
            y = torch.cat((y[:, :s], y[:, s:] + y[:, :-s]), dim=1)
            s *= 2
        return y
