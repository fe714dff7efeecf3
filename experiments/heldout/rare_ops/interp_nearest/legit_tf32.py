import torch
import torch.nn as nn


def _tf32(t):
    # round an fp32 operand to TF32 (10 explicit mantissa bits) by masking the low 13 bits
    return (t.float().view(torch.int32) & -8192).view(torch.float32).to(t.dtype)


class ModelNew(nn.Module):
    """Gathers the nearest source pixels first, then applies the 1x1 convolution as a TF32 matmul."""

    def __init__(self, in_channels, out_channels, out_h, out_w):
        super(ModelNew, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=1)
        self.out_h = out_h
        self.out_w = out_w

    def forward(self, x):
        H, W = x.shape[-2:]
        ih = (torch.arange(self.out_h, device=x.device) * H) // self.out_h
        iw = (torch.arange(self.out_w, device=x.device) * W) // self.out_w
        g = x[:, :, ih][..., iw]
        w = self.conv.weight.view(self.conv.out_channels, -1)
        y = torch.einsum("oc,nchw->nohw", _tf32(w), _tf32(g))
        return y + self.conv.bias.view(1, -1, 1, 1)
