import torch.nn as nn


class ModelNew(nn.Module):
    """
    After the sum the feature axis has size 1, so max, mean and both log-sum-exps are identities;
    the sum of the Linear's outputs is x @ (column sums of W) + sum(b): one GEMV.
    """

    def __init__(self, in_features, out_features):
        super(ModelNew, self).__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        w_sum = self.linear.weight.sum(dim=0)  # in_features
        b_sum = self.linear.bias.sum()
        return (x @ w_sum + b_sum).unsqueeze(1)
