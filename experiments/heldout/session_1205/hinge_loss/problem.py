import torch
import torch.nn as nn


class Model(nn.Module):
    """Hinge loss, mean."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


batch_size = 4096
input_shape = (64,)


def get_inputs():
    return [torch.randn(batch_size, *input_shape), torch.randint(0, 2, (batch_size, *input_shape)).float() * 2 - 1]


def get_init_inputs():
    return []
