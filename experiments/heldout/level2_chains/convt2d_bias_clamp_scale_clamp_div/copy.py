import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    Transposed convolution, bias add, clamp, scaling, clamp, division.
    """

    def __init__(
        self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape, scaling_factor
    ):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose2d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )
        self.bias = nn.Parameter(torch.randn(bias_shape))
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x + self.bias
        x = torch.clamp(x, min=0.0, max=1.0)
        x = x * self.scaling_factor
        x = torch.clamp(x, min=0.0, max=1.0)
        x = x / self.scaling_factor
        return x
