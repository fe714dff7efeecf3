import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """
    A linear layer followed by dropout applied in training mode (training=True), then a row mean.
    """

    def __init__(self, in_features, out_features, p):
        super(Model, self).__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.p = p

    def forward(self, x):
        y = F.dropout(self.fc(x), p=self.p, training=True)
        return y * torch.sigmoid(y.mean(dim=-1, keepdim=True))


batch_size = 128
in_features = 128
out_features = 128
p = 0.2


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, p]
