from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return (A.double().reshape(-1, A.shape[-1]) @ B.double()).reshape(A.shape[0], A.shape[1], -1).float()
