import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Batched pairwise Euclidean distances between two point sets (torch.cdist, p=2).
    """

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x, y):
        return torch.cdist(x, y, p=2.0)


batch_size = 4
num_x = 100
num_y = 120
dim = 128


def get_inputs():
    return [torch.randn(batch_size, num_x, dim), torch.randn(batch_size, num_y, dim)]


def get_init_inputs():
    return []
