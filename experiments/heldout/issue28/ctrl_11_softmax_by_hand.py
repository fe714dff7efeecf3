# Correct: softmax over channels by hand and sigmoid as 1 / (1 + exp(-p)), fp32; another evaluation order only.
import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )

    def forward(self, x):
        z = self.conv_transpose(x)
        e = torch.exp(z - z.amax(dim=1, keepdim=True))
        p = e / e.sum(dim=1, keepdim=True)
        return 1.0 / (1.0 + torch.exp(-p))
