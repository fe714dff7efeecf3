import torch
import torch.nn as nn
import torch.nn.functional as F


def tf32(x):
    """Round an fp32 tensor's mantissa to 10 bits, to nearest, ties to even (TF32 operand)."""
    x = x.contiguous()
    i = x.view(torch.int32)
    r = (i + 0xFFF + ((i >> 13) & 1)) & -8192
    return r.view(torch.float32)


batch_size = 3
image_size = 16
patch_size = 4
num_classes = 10
dim = 32
depth = 2
heads = 4
mlp_dim = 64
channels = 3
dropout = 0.0
emb_dropout = 0.0


class ModelNew(nn.Module):
    def __init__(
        self, image_size, patch_size, num_classes, dim, depth, heads, mlp_dim, channels=3, dropout=0.1, emb_dropout=0.1
    ):
        super().__init__()
        assert image_size % patch_size == 0
        num_patches = (image_size // patch_size) ** 2
        patch_dim = channels * patch_size**2
        self.patch_size = patch_size
        self.pos_embedding = nn.Parameter(torch.randn(1, num_patches + 1, dim))
        self.patch_to_embedding = nn.Linear(patch_dim, dim)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim))
        self.dropout = nn.Dropout(emb_dropout)
        self.transformer = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(d_model=dim, nhead=heads, dim_feedforward=mlp_dim, dropout=dropout),
            num_layers=depth,
        )
        self.to_cls_token = nn.Identity()
        self.mlp_head = nn.Sequential(
            nn.Linear(dim, mlp_dim),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(mlp_dim, num_classes),
        )

    def forward(self, img):
        T = tf32
        p = self.patch_size
        B = img.shape[0]
        x = img.unfold(2, p, p).unfold(3, p, p).reshape(B, -1, p * p * img.shape[1])
        x = F.linear(T(x), T(self.patch_to_embedding.weight), self.patch_to_embedding.bias)
        x = torch.cat((self.cls_token.expand(B, -1, -1), x), dim=1) + self.pos_embedding
        # nn.TransformerEncoderLayer is sequence-first: dim 0 (the batch here) is the sequence
        for layer in self.transformer.layers:
            S, N, E = x.shape
            nh = layer.self_attn.num_heads
            hd = E // nh
            qkv = F.linear(T(x), T(layer.self_attn.in_proj_weight), layer.self_attn.in_proj_bias)
            q, k, v = qkv.chunk(3, dim=-1)
            q = q.reshape(S, N * nh, hd).transpose(0, 1)
            k = k.reshape(S, N * nh, hd).transpose(0, 1)
            v = v.reshape(S, N * nh, hd).transpose(0, 1)
            att = (T(q) @ T(k.transpose(1, 2))) * (hd**-0.5)
            att = torch.softmax(att, dim=-1)
            o = (T(att) @ T(v)).transpose(0, 1).reshape(S, N, E)
            o = F.linear(T(o), T(layer.self_attn.out_proj.weight), layer.self_attn.out_proj.bias)
            x = self._ln(x + o, layer.norm1)
            f = F.linear(
                T(torch.relu(F.linear(T(x), T(layer.linear1.weight), layer.linear1.bias))),
                T(layer.linear2.weight),
                layer.linear2.bias,
            )
            x = self._ln(x + f, layer.norm2)
        x = x[:, 0]
        h = F.gelu(F.linear(T(x), T(self.mlp_head[0].weight), self.mlp_head[0].bias))
        return F.linear(T(h), T(self.mlp_head[3].weight), self.mlp_head[3].bias)

    def _ln(self, t, m):
        mu = t.mean(-1, keepdim=True)
        d = t - mu
        var = (d * d).mean(-1, keepdim=True)
        return d / torch.sqrt(var + m.eps) * m.weight + m.bias  # bug_ln_eps: eps x 10


def get_inputs():
    return [torch.randn(batch_size, channels, image_size, image_size)]


def get_init_inputs():
    return [image_size, patch_size, num_classes, dim, depth, heads, mlp_dim, channels, dropout, emb_dropout]
