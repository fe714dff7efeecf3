import torch
import torch.nn.functional as F
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 5)
        self.conv2 = nn.Conv2d(8, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, num_classes)

    def conv(self, x, m):
        N, _C, H, W = x.shape
        k = m.kernel_size[0]
        cols = F.unfold(x, k)  # N, C*k*k, L
        y = torch.einsum("ok,nkl->nol", m.weight.reshape(m.out_channels, -1), cols) + m.bias.view(1, -1, 1)
        return y.reshape(N, m.out_channels, H - k + 1, W - k + 1)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x, self.conv1)), 2)
        x = F.max_pool2d(F.relu(self.conv(x, self.conv2)), 2)
        x = x.reshape(x.shape[0], -1)
        return F.relu(x @ self.fc1.weight.t() + self.fc1.bias) @ self.fc2.weight.t() + self.fc2.bias
