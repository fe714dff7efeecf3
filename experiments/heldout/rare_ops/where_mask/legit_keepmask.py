import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, slope, threshold):
        super(ModelNew, self).__init__()
        self.slope = slope
        self.threshold = threshold

    def forward(self, x, m):
        # softmax over the kept positions: exponentials multiplied by the keep mask
        y = F.leaky_relu(x, self.slope)
        keep = (m >= self.threshold).to(x.dtype)
        e = torch.exp(y - y.amax(dim=-1, keepdim=True)) * keep
        return e / e.sum(dim=-1, keepdim=True)
