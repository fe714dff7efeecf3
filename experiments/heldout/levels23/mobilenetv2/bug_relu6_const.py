import torch
import torch.nn as nn

batch_size = 4
inp = 8
oup = 8
expand_ratio = 3
height, width = 10, 10


class ModelNew(nn.Module):
    def __init__(self, inp, oup, expand_ratio):
        super().__init__()
        hidden = inp * expand_ratio
        self.conv = nn.Sequential(
            nn.Conv2d(inp, hidden, 1, 1, 0, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden),
            nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, oup, 1, 1, 0, bias=False),
            nn.BatchNorm2d(oup),
        )
        # BN scales above 1 so that ReLU6's upper clamp is active
        for m in self.conv:
            if isinstance(m, nn.BatchNorm2d):
                nn.init.uniform_(m.weight, 1.0, 4.0)
                nn.init.uniform_(m.bias, -0.5, 0.5)

    def forward(self, x):
        c1, b1, _, c2, b2, _, c3, b3 = self.conv
        cv = torch.nn.functional.conv2d
        h = self._bn(cv((x), (c1.weight)), b1, "two")
        h = torch.clamp(h, 0.0, 5.994)
        h = self._bn(cv((h), (c2.weight), None, 1, 1, 1, c2.groups), b2, "two")
        h = torch.clamp(h, 0.0, 6.0)
        h = self._bn(cv((h), (c3.weight)), b3, "two")
        return x + h

    def _bn(self, x, bn, mode):
        n = x.shape[0] * x.shape[2] * x.shape[3]
        if mode == "onepass":  # var = E[x^2] - E[x]^2
            m = x.mean(dim=(0, 2, 3))
            var = (x * x).mean(dim=(0, 2, 3)) - m * m
        else:
            m = x.mean(dim=(0, 2, 3))
            d = x - m.view(1, -1, 1, 1)
            var = (d * d).sum(dim=(0, 2, 3)) / (n - 1 if mode == "unbiased" else n)
        inv = torch.rsqrt(var + bn.eps) * bn.weight
        return (x - m.view(1, -1, 1, 1)) * inv.view(1, -1, 1, 1) + bn.bias.view(1, -1, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, inp, height, width)]


def get_init_inputs():
    return [inp, oup, expand_ratio]
