import torch
from torch import nn

"""ELU: max(x,0)+min(alpha*expm1(x),0)"""


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return torch.clamp(x, min=0) + torch.clamp(self.alpha * torch.expm1(x), max=0)
