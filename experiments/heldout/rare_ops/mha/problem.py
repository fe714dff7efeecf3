import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Self-attention with nn.MultiheadAttention (batch_first=True); returns the attention output only.
    The projection biases are initialised to small random values.
    """

    def __init__(self, embed_dim, num_heads):
        super(Model, self).__init__()
        self.attn = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)
        nn.init.uniform_(self.attn.in_proj_bias, -0.1, 0.1)
        nn.init.uniform_(self.attn.out_proj.bias, -0.1, 0.1)

    def forward(self, x):
        out, _ = self.attn(x, x, x, need_weights=False)
        return out


batch_size = 8
seq_len = 40
embed_dim = 64
num_heads = 4


def get_inputs():
    return [torch.randn(batch_size, seq_len, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_heads]
