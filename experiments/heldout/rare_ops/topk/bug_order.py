import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features, k):
        super(ModelNew, self).__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.k = k

    def forward(self, x):
        y = self.fc(x)
        v = torch.topk(y, self.k, dim=-1, sorted=False).values
        return torch.sort(v, dim=-1).values
