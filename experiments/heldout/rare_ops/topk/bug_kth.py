import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, k):
        super(ModelNew, self).__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.k = k

    def forward(self, x):
        y = self.fc(x)
        v = torch.sort(y, dim=-1, descending=True).values
        return torch.cat([v[:, : self.k - 1], v[:, self.k : self.k + 1]], dim=1)
