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
        return torch.cat(
            [
                self.expand1x1_activation(self.expand1x1(x)),
                self.expand3x3_activation(
                    F.conv2d(
                        x,
                        self.expand3x3.weight,
                        torch.cat([self.expand3x3.bias[:-1], self.expand3x3.bias.new_zeros(1)]),
                        padding=1,
                    )
                ),  # BUG: last channel's bias missing
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
