import torch
import torch.nn as nn

batch_size = 4
inp = 8
oup = 8
expand_ratio = 3
height, width = 10, 10


class Model(nn.Module):
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
        return x + self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, inp, height, width)]


def get_init_inputs():
    return [inp, oup, expand_ratio]
