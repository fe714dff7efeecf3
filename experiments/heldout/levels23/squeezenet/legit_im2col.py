import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 2
in_channels = 3
height, width = 27, 27


class FireModule(nn.Module):
    def __init__(self, in_channels, squeeze_channels, expand1x1_channels, expand3x3_channels):
        super().__init__()
        self.squeeze = nn.Conv2d(in_channels, squeeze_channels, kernel_size=1)
        self.squeeze_activation = nn.ReLU(inplace=True)
        self.expand1x1 = nn.Conv2d(squeeze_channels, expand1x1_channels, kernel_size=1)
        self.expand1x1_activation = nn.ReLU(inplace=True)
        self.expand3x3 = nn.Conv2d(squeeze_channels, expand3x3_channels, kernel_size=3, padding=1)
        self.expand3x3_activation = nn.ReLU(inplace=True)

    def forward(self, x):
        x = self.squeeze_activation(self.squeeze(x))
        n, c, h, w = x.shape
        # both expands as one matmul on im2col columns (the 1x1 weight placed at the 3x3 centre)
        cols = F.unfold(x, 3, padding=1)  # (n, c*9, h*w)
        w1 = torch.zeros(self.expand1x1.out_channels, c, 3, 3)
        w1[:, :, 1, 1] = self.expand1x1.weight[:, :, 0, 0]
        wcat = torch.cat([w1, self.expand3x3.weight], 0).view(-1, c * 9)
        b = torch.cat([self.expand1x1.bias, self.expand3x3.bias])
        y = (wcat @ cols + b.view(1, -1, 1)).view(n, -1, h, w)
        return torch.relu(y)
        return torch.cat(
            [
                self.expand1x1_activation(self.expand1x1(x)),
                self.expand3x3_activation(self.expand3x3(x)),
            ],
            1,
        )


class ModelNew(nn.Module):
    """SqueezeNet stem + two fire modules with ceil_mode max-pools, then a 1x1 classifier and global average pool."""

    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, kernel_size=3, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
            FireModule(16, 4, 8, 8),
            FireModule(16, 4, 8, 8),
            nn.MaxPool2d(kernel_size=3, stride=2, ceil_mode=True),
        )
        self.classifier = nn.Sequential(
            nn.Dropout(p=0.0),
            nn.Conv2d(16, num_classes, kernel_size=1),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d((1, 1)),
        )

    def forward(self, x):
        x = self.features(x)
        x = self.classifier(x)
        return torch.flatten(x, 1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [10]
