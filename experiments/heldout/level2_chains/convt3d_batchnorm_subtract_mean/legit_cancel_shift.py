import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """
    BatchNorm is a per-channel affine map and the spatial mean is subtracted afterwards, so every
    per-channel shift (conv bias, BN mean, BN bias) cancels: out = (y - mean_s(y)) * gamma / sqrt(var + eps)
    with y the bias-free transposed conv. The variance is shift-invariant, so the batch variance is
    computed on the bias-free y (running statistics are updated as BatchNorm does).
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias=True):
        super(ModelNew, self).__init__()
        self.conv_transpose = nn.ConvTranspose3d(
            in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias
        )
        self.batch_norm = nn.BatchNorm3d(out_channels)

    def forward(self, x):
        ct = self.conv_transpose
        bn = self.batch_norm
        y = F.conv_transpose3d(x, ct.weight, None, stride=ct.stride, padding=ct.padding)
        c = y.shape[1]
        centered = y - y.mean(dim=(2, 3, 4), keepdim=True)
        if self.training:
            yc = y.transpose(0, 1).reshape(c, -1)
            bmean = yc.mean(dim=1)
            d = yc - bmean[:, None]
            var = (d * d).mean(dim=1)
            with torch.no_grad():
                n = yc.shape[1]
                full_mean = bmean + (ct.bias if ct.bias is not None else 0.0)
                bn.num_batches_tracked += 1
                bn.running_mean.mul_(1 - bn.momentum).add_(bn.momentum * full_mean)
                bn.running_var.mul_(1 - bn.momentum).add_(bn.momentum * var * n / (n - 1))
        else:
            var = bn.running_var
        mult = bn.weight * torch.rsqrt(var + bn.eps)
        return centered * mult.view(1, c, 1, 1, 1)
