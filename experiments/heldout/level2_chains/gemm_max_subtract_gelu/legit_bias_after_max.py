import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    The bias is the same for every row, so the max over the batch is taken on x @ W^T and the
    bias added afterwards (max(a_i + b) = max(a_i) + b); the mean is a sum of two halves over n.
    """

    def __init__(self, in_features, out_features, max_dim):
        super(ModelNew, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.max_dim = max_dim

    def forward(self, x):
        acc = torch.mm(x, self.gemm.weight.t())
        m = acc.amax(dim=self.max_dim, keepdim=True) + self.gemm.bias
        n = m.shape[1]
        half = n // 2
        total = m[:, :half].sum(dim=1, keepdim=True) + m[:, half:].sum(dim=1, keepdim=True)
        y = m - total / n
        return 0.5 * y * (1.0 + torch.erf(y / 1.4142135623730951))
