import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, q, k, v):
        # both matmuls with TF32 operands (low 13 mantissa bits of each fp32 operand cleared)
        def tf32(t):
            return (t.float().view(torch.int32) & -8192).view(torch.float32).to(t.dtype)

        b, h, s, d = q.shape
        qf = tf32(q).reshape(b * h, s, d)
        kf = tf32(k).reshape(b * h, -1, d)
        vf = tf32(v).reshape(b * h, -1, d)
        scores = torch.einsum("bij,bkj->bik", qf, kf) * d**-0.5
        p = torch.softmax(scores, dim=-1)
        return torch.einsum("bij,bjk->bik", tf32(p), vf).view(b, h, s, -1)
