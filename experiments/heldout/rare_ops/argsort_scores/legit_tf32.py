import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, num_items):
        super(ModelNew, self).__init__()
        self.fc = nn.Linear(in_features, num_items)

    def forward(self, x):
        def tf32(t):
            return (t.float().view(torch.int32) & -8192).view(torch.float32).to(t.dtype)

        scores = F.linear(tf32(x), tf32(self.fc.weight), self.fc.bias)
        return torch.argsort(scores, dim=-1, descending=True)
