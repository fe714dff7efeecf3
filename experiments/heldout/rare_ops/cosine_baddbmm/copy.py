import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    """
    Pairwise cosine similarity between the rows of a (B, Sa, D) and the columns of b (B, D, Sb), via
    F.normalize, then torch.baddbmm with a learned bias: beta * bias + alpha * (a_n @ b_n).
    """

    def __init__(self, seq_a, seq_b, alpha, beta):
        super(ModelNew, self).__init__()
        self.bias = nn.Parameter(torch.randn(seq_a, seq_b) * 0.1)
        self.alpha = alpha
        self.beta = beta

    def forward(self, a, b):
        an = F.normalize(a, p=2.0, dim=-1)
        bn = F.normalize(b, p=2.0, dim=1)
        return torch.baddbmm(self.bias, an, bn, beta=self.beta, alpha=self.alpha)


batch_size = 8
seq_a = 64
seq_b = 80
dim = 128
alpha = 2.0
beta = 0.5


def get_inputs():
    return [torch.randn(batch_size, seq_a, dim), torch.randn(batch_size, dim, seq_b)]


def get_init_inputs():
    return [seq_a, seq_b, alpha, beta]
