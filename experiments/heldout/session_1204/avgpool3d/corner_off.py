from torch import nn


class ModelNew(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool3d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        y = self.pool(x)
        # bug: the far corner misses one of its 8 real inputs
        y[:, :, -1, -1, -1] -= x[:, :, -1, -1, -1] / 27
        return y
