import torch
from torch import nn

"""log-softmax x-max-log(sum(exp(x-max)))"""


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        pass

    def forward(self, x):
        m = x.max(dim=1, keepdim=True).values
        return x - m - torch.log(torch.exp(x - m).sum(dim=1, keepdim=True))
