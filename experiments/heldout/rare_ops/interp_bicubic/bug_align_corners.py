import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, out_h, out_w):
        super(ModelNew, self).__init__()
        self.out_h = out_h
        self.out_w = out_w

    def forward(self, x):
        return F.interpolate(x, size=(self.out_h, self.out_w), mode="bicubic", align_corners=False)
