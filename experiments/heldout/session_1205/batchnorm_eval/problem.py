import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """BatchNorm2d with its running statistics (inference)."""

    def __init__(self, num_features):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.5 * torch.randn(num_features))
            self.bn.running_var.copy_(0.5 + torch.rand(num_features))
            self.bn.weight.copy_(1.0 + 0.1 * torch.randn(num_features))
            self.bn.bias.copy_(0.1 * torch.randn(num_features))

    def forward(self, x):
        return F.batch_norm(
            x, self.bn.running_mean, self.bn.running_var, self.bn.weight, self.bn.bias, training=False, eps=self.bn.eps
        )


batch_size = 16
features = 64
dim1 = 64
dim2 = 64


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [features]
