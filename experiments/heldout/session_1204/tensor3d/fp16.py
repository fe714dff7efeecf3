import torch
from torch import nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        # operands within fp16 range (|x| < 65504); fp32 accumulation
        return torch.matmul(A.half().float(), B.half().float())
