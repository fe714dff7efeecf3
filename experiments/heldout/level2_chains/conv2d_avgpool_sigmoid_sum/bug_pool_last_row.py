import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    Average pool written by hand; the last output row reads input rows h-3, h-2 instead of h-2, h-1
    (row offset clamped one too early).
    """

    def __init__(self, in_channels, out_channels, kernel_size, pool_kernel_size):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.k = pool_kernel_size

    def forward(self, x):
        y = self.conv(x)
        k = self.k
        n, c, h, w = y.shape
        h2, w2 = h // k, w // k
        rows = []
        for i in range(h2):
            r0 = min(i * k, h - k - 1)
            rows.append(y[:, :, r0 : r0 + k, : w2 * k])
        y = torch.stack(rows, dim=2)  # n, c, h2, k, w2*k
        y = y.reshape(n, c, h2, k, w2, k).mean(dim=(3, 5))
        return torch.sigmoid(y).sum(dim=[1, 2, 3])
