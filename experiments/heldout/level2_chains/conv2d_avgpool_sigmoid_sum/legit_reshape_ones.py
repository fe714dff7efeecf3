import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    Average pool as a reshape + sum * 0.25, and the final reduction as a per-channel partial sum
    followed by a GEMV with a ones vector.
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
        y = y[:, :, : h2 * k, : w2 * k].reshape(n, c, h2, k, w2, k).sum(dim=(3, 5)) * (1.0 / (k * k))
        s = torch.sigmoid(y).sum(dim=(2, 3))  # n, c
        ones = torch.ones(c, dtype=s.dtype, device=s.device)
        return s @ ones
