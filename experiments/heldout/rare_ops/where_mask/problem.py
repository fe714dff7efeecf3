import torch
import torch.nn as nn


class Model(nn.Module):
    """
    A torch.where leaky activation, a masked_fill of dropped positions with -inf, and a softmax over the
    last dimension (masked attention-style normalisation).
    """

    def __init__(self, slope, threshold):
        super(Model, self).__init__()
        self.slope = slope
        self.threshold = threshold

    def forward(self, x, m):
        y = torch.where(x > 0, x, self.slope * x)
        y = y.masked_fill(m < self.threshold, float("-inf"))
        return torch.softmax(y, dim=-1)


batch_size = 64
length = 256
slope = 0.2
threshold = 0.15


def get_inputs():
    return [torch.randn(batch_size, length) * 2.0, torch.rand(batch_size, length)]


def get_init_inputs():
    return [slope, threshold]
