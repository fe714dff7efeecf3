import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """
    Resizes a batch of feature maps to a fixed spatial size with bilinear interpolation
    (align_corners=False, non-integer ratio).
    """

    def __init__(self, out_h, out_w):
        super(ModelNew, self).__init__()
        self.out_h = out_h
        self.out_w = out_w

    def forward(self, x):
        return F.interpolate(x, size=(self.out_h, self.out_w), mode="bilinear", align_corners=False)


batch_size = 4
channels = 8
in_h = 24
in_w = 20
out_h = 37
out_w = 31


def get_inputs():
    return [torch.randn(batch_size, channels, in_h, in_w)]


def get_init_inputs():
    return [out_h, out_w]
