import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Linear -> GLU over the features -> per-channel PReLU -> Softmin over the features.
    """

    def __init__(self, in_features, hidden):
        super(Model, self).__init__()
        self.fc = nn.Linear(in_features, 2 * hidden)
        self.glu = nn.GLU(dim=-1)
        self.prelu = nn.PReLU(num_parameters=hidden)
        nn.init.uniform_(self.prelu.weight, 0.05, 0.5)
        self.softmin = nn.Softmin(dim=-1)

    def forward(self, x):
        return self.softmin(self.prelu(self.glu(self.fc(x))))


batch_size = 256
in_features = 128
hidden = 96


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, hidden]
