import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    Pooling as a reshape + amax over the complete windows (the odd last feature is dropped, as
    MaxPool1d does); the row sum is a GEMV with a vector of ones.
    """

    def __init__(self, in_features, out_features, kernel_size, scale_factor):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.kernel_size = kernel_size
        self.scale_factor = scale_factor

    def forward(self, x):
        y = self.matmul(x)
        k = self.kernel_size
        nw = y.shape[1] // k
        p = y[:, : nw * k].reshape(y.shape[0], nw, k).amax(dim=-1)
        ones = torch.ones(nw, 1, dtype=p.dtype, device=p.device)
        return (p @ ones).squeeze(1) * self.scale_factor
