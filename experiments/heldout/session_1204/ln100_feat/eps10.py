from torch import nn


class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d, eps=1e-4)

    def forward(self, x):
        return self.ln(x)
