import torch
from torch import nn

"""mish fast form: n=e^x(e^x+2); x*n/(n+2)"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        e = torch.exp(torch.clamp(x, max=20.0))
        n = e * (e + 2.0)
        return torch.where(x > 20.0, x, x * n / (n + 2.0))
