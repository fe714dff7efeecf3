import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """Per-channel offset table built with subtract_value_2 applied twice for channel 0."""

    def __init__(self, in_channels, out_channels, kernel_size, subtract_value_1, subtract_value_2):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract_value_1 = subtract_value_1
        self.subtract_value_2 = subtract_value_2

    def forward(self, x):
        y = self.conv(x)
        off = torch.full((y.shape[1],), self.subtract_value_1 + self.subtract_value_2, dtype=y.dtype, device=y.device)
        off[0] += self.subtract_value_2
        y = y - off.view(1, -1, 1, 1)
        return torch.nn.functional.mish(y)
