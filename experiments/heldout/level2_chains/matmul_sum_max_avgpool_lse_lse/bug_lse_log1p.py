import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    Size-1 log-sum-exp written as m + log1p(sum(exp(x - m)) - 1 + 1e-3): a stray epsilon meant
    to guard the log ends up shifting the result by log(1 + 1e-3) per log-sum-exp.
    """

    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        s = self.linear(x).sum(dim=1, keepdim=True)
        for _ in range(2):
            m = s.amax(dim=1, keepdim=True)
            s = m + torch.log1p(torch.exp(s - m).sum(dim=1, keepdim=True) - 1.0 + 1e-3)
        return s
