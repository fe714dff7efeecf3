import torch
import torch.nn as nn


class Model(nn.Module):
    """
    LayerNorm over the last two dimensions, with a non-trivial elementwise affine.
    """

    def __init__(self, h, w, eps):
        super(Model, self).__init__()
        self.ln = nn.LayerNorm([h, w], eps=eps)
        nn.init.normal_(self.ln.weight, 1.0, 0.2)
        nn.init.normal_(self.ln.bias, 0.0, 0.2)

    def forward(self, x):
        return self.ln(x)


batch_size = 32
channels = 8
h = 16
w = 24
eps = 1e-5


def get_inputs():
    return [torch.randn(batch_size, channels, h, w) * 0.25 + 0.5]


def get_init_inputs():
    return [h, w, eps]
