from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        y = A.unsqueeze(1) * B
        # bug: row 17 uses an fp16-rounded diagonal entry
        y[17] = A[17].half().float() * B[17]
        return y
