from torch import nn


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape, eps=1e-4)

    def forward(self, x):
        return self.ln(x)
