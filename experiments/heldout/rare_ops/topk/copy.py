import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    A linear layer followed by the k largest values of each row (sorted, largest first).
    """

    def __init__(self, in_features, out_features, k):
        super(ModelNew, self).__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.k = k

    def forward(self, x):
        y = self.fc(x)
        return torch.topk(y, self.k, dim=-1).values


batch_size = 128
in_features = 256
out_features = 512
k = 16


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, k]
