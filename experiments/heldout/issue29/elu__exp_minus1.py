import torch
from torch import nn

"""ELU: where(x>0, x, alpha*(exp(x)-1))"""


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return torch.where(x > 0, x, self.alpha * (torch.exp(x) - 1.0))
