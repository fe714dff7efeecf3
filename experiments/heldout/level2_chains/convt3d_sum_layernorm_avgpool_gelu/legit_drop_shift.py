import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """
    Fused epilogue: the scalar add is dropped because LayerNorm subtracts the mean of the last
    dimension (a constant shift cancels exactly); LayerNorm is written out (two-pass variance)
    and the average pool is a reshape + mean.
    """

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
        self.pool_kernel_size = pool_kernel_size

    def forward(self, x):
        y = self.conv_transpose(x)
        mean = y.mean(dim=-1, keepdim=True)
        yc = y - mean
        var = (yc * yc).mean(dim=-1, keepdim=True)
        y = yc * torch.rsqrt(var + self.norm.eps) * self.norm.weight + self.norm.bias
        kd, kh, kw = self.pool_kernel_size
        n, c, d, h, w = y.shape
        d2, h2, w2 = d // kd, h // kh, w // kw
        y = y[:, :, : d2 * kd, : h2 * kh, : w2 * kw]
        y = y.reshape(n, c, d2, kd, h2, kh, w2, kw).mean(dim=(3, 5, 7))
        return 0.5 * y * (1.0 + torch.erf(y * 0.7071067811865476))
