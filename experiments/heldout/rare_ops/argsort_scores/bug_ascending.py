import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_features, num_items):
        super(ModelNew, self).__init__()
        self.fc = nn.Linear(in_features, num_items)

    def forward(self, x):
        return torch.argsort(self.fc(x), dim=-1)
