import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """The extra bias is added for channels 0..C-2 only (loop bound off by one)."""

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
        c = x.shape[1]
        x = torch.cat([x[:, : c - 1] + self.bias[: c - 1], x[:, c - 1 :]], dim=1)
        x = torch.clamp(x, min=0.0, max=1.0)
        x = x * self.scaling_factor
        x = torch.clamp(x, min=0.0, max=1.0)
        return x / self.scaling_factor
