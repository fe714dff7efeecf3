import torch
from torch import nn

"""ELU: exp(x)-1 as 2*tanh(x/2)/(1-tanh(x/2))"""


class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        xn = torch.clamp(x, max=0)
        t = torch.tanh(0.5 * xn)
        return torch.where(x > 0, x, self.alpha * 2.0 * t / (1.0 - t))
