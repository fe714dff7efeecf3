import torch.nn as nn


class ModelNew(nn.Module):
    """
    Bias moved after the pooling (wrong: the bias differs inside a window); each window gets the bias
    of its first feature.
    """

    def __init__(self, in_features, out_features, kernel_size, scale_factor):
        super(ModelNew, self).__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.kernel_size = kernel_size
        self.scale_factor = scale_factor

    def forward(self, x):
        acc = x @ self.matmul.weight.t()
        k = self.kernel_size
        nw = acc.shape[1] // k
        p = acc[:, : nw * k].reshape(acc.shape[0], nw, k).amax(dim=-1)
        p = p + self.matmul.bias[: nw * k : k]
        return p.sum(dim=1) * self.scale_factor
