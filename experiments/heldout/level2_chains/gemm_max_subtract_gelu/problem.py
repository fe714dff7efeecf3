import torch
import torch.nn as nn


class Model(nn.Module):
    """
    GEMM, max over the batch dimension (kept), subtraction of the row mean and GELU.
    """

    def __init__(self, in_features, out_features, max_dim):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        x = self.gemm(x)
        x = torch.max(x, dim=self.max_dim, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        x = torch.nn.functional.gelu(x)
        return x


batch_size = 16
in_features = 256
out_features = 512
max_dim = 0


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, max_dim]
