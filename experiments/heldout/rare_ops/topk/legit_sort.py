import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, k):
        super(ModelNew, self).__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.k = k

    def forward(self, x):
        y = (x[:, None, :] * self.fc.weight[None]).sum(dim=-1) + self.fc.bias
        return torch.sort(y, dim=-1, descending=True).values[:, : self.k]
