import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, out_h, out_w):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)
        self.out_h = out_h
        self.out_w = out_w

    def forward(self, x):
        x = self.conv(x)
        H, W = x.shape[-2:]
        ih = ((2 * torch.arange(self.out_h, device=x.device) + 1) * H) // (2 * self.out_h)
        iw = ((2 * torch.arange(self.out_w, device=x.device) + 1) * W) // (2 * self.out_w)
        return x[:, :, ih.clamp_max(H - 1)][..., iw.clamp_max(W - 1)]
