import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """
    Pooling kernel uses ceil division for the number of windows, so the unpaired last feature forms a
    window of its own and is added to the sum (MaxPool1d drops it).
    """

    def __init__(self, in_features, out_features, kernel_size, scale_factor):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.kernel_size = kernel_size
        self.scale_factor = scale_factor

    def forward(self, x):
        y = self.matmul(x)
        p = F.max_pool1d(y.unsqueeze(1), self.kernel_size, ceil_mode=True).squeeze(1)
        return p.sum(dim=1) * self.scale_factor
