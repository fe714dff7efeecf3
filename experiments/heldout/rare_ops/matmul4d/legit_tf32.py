import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, x, w):
        # flatten to 2D, one GEMM with TF32 operands (low 13 mantissa bits cleared), reshape back
        def tf32(t):
            return (t.float().view(torch.int32) & -8192).view(torch.float32).to(t.dtype)

        out = torch.mm(tf32(x).reshape(-1, x.shape[-1]), tf32(w))
        return out.view(*x.shape[:-1], w.shape[-1])
