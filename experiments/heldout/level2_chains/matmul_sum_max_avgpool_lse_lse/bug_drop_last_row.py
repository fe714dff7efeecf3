import torch.nn as nn


class ModelNew(nn.Module):
    """Column sums of W accumulated over rows 0..out_features-2 (the last output feature is lost)."""

    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        w_sum = self.linear.weight[:-1].sum(dim=0)
        b_sum = self.linear.bias.sum()
        return (x @ w_sum + b_sum).unsqueeze(1)
