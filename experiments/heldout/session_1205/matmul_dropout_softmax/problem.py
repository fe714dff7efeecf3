import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear, dropout (inference: identity), softmax."""

    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout_p = dropout_p

    def forward(self, x):
        x = self.matmul(x)
        x = F.dropout(x, p=self.dropout_p, training=False)
        return torch.softmax(x, dim=1)


batch_size = 512
in_features = 512
out_features = 256


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, 0.2]
