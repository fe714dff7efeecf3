import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    Returns the indices that sort each row in descending order (an int64 tensor).
    """

    def __init__(self, dim):
        super(ModelNew, self).__init__()
        self.dim = dim

    def forward(self, x):
        return torch.argsort(x, dim=self.dim, descending=True)


batch_size = 128
length = 256
dim = 1


def get_inputs():
    return [torch.randn(batch_size, length)]


def get_init_inputs():
    return [dim]
