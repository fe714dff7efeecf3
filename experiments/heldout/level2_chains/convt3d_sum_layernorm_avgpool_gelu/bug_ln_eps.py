import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """Hand-written LayerNorm epilogue; the epsilon constant was typed as 1e-4 instead of 1e-5."""

    def __init__(
        self,
        in_channels,
        out_channels,
        kernel_size,
        stride,
        padding,
        output_padding,
        sum_weight,
        norm_shape,
        pool_kernel_size,
    ):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, output_padding=output_padding
        )
        self.sum_weight = nn.Parameter(torch.tensor(sum_weight))
        self.norm = nn.LayerNorm(norm_shape)
        self.avg_pool = nn.AvgPool3d(kernel_size=pool_kernel_size)

    def forward(self, x):
        y = self.conv_transpose(x) + self.sum_weight
        mean = y.mean(dim=-1, keepdim=True)
        var = ((y - mean) ** 2).mean(dim=-1, keepdim=True)
        y = (y - mean) / torch.sqrt(var + 1e-4) * self.norm.weight + self.norm.bias
        y = self.avg_pool(y)
        return F.gelu(y)
