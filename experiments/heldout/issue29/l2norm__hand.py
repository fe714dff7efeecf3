import torch
from torch import nn

"""L2-normalize x/max(sqrt(sum x^2), eps)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        n = torch.sqrt((x * x).sum(dim=1, keepdim=True))
        return x / torch.clamp(n, min=1e-12)
