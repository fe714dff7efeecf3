import torch
import torch.nn as nn


def tf32(x):
    """Round an fp32 tensor's mantissa to 10 bits, to nearest, ties to even (TF32 operand)."""
    x = x.contiguous()
    i = x.view(torch.int32)
    r = (i + 0xFFF + ((i >> 13) & 1)) & -8192
    return r.view(torch.float32)


batch_size = 2
H = 8
W = 8
dim = 32
window_size = 4
shift_size = 2
num_heads = 2


def window_partition(x, ws):
    B, H, W, C = x.shape
    x = x.view(B, H // ws, ws, W // ws, ws, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws * ws, C)


def window_reverse(windows, ws, H, W):
    B = windows.shape[0] // ((H // ws) * (W // ws))
    x = windows.view(B, H // ws, W // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)


class ModelNew(nn.Module):
    def __init__(self, dim, H, W, num_heads, window_size, shift_size):
        super().__init__()
        self.dim, self.H, self.W = dim, H, W
        self.nh, self.ws, self.shift = num_heads, window_size, shift_size
        self.scale = (dim // num_heads) ** -0.5
        self.norm1 = nn.LayerNorm(dim)
        ws = window_size
        self.relative_position_bias_table = nn.Parameter(torch.randn((2 * ws - 1) ** 2, num_heads) * 0.5)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        coords = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij"))
        cf = torch.flatten(coords, 1)
        rel = (cf[:, :, None] - cf[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += ws - 1
        rel[:, :, 1] += ws - 1
        rel[:, :, 0] *= 2 * ws - 1
        self.register_buffer("relative_position_index", rel.sum(-1))
        img_mask = torch.zeros(1, H, W, 1)
        cnt = 0
        for h in (slice(0, -ws), slice(-ws, -shift_size), slice(-shift_size, None)):
            for w in (slice(0, -ws), slice(-ws, -shift_size), slice(-shift_size, None)):
                img_mask[:, h, w, :] = cnt
                cnt += 1
        mw = window_partition(img_mask, ws).squeeze(-1)
        attn_mask = mw.unsqueeze(1) - mw.unsqueeze(2)
        attn_mask = attn_mask.masked_fill(attn_mask != 0, -100.0).masked_fill(attn_mask == 0, 0.0)
        self.register_buffer("attn_mask", attn_mask)

    def forward(self, x):
        B, L, C = x.shape
        H, W, ws, s = self.H, self.W, self.ws, self.shift
        shortcut = x
        x = self.norm1(x).view(B, H, W, C)
        x = torch.roll(x, shifts=(-s, -s), dims=(1, 2))
        xw = window_partition(x, ws)
        B_, N, _ = xw.shape
        qkv = (
            torch.nn.functional.linear(tf32(xw), tf32(self.qkv.weight), self.qkv.bias)
            .reshape(B_, N, 3, self.nh, C // self.nh)
            .permute(2, 0, 3, 1, 4)
        )
        q, k, v = qkv[0], qkv[1], qkv[2]
        q = q * self.scale
        attn = tf32(q) @ tf32(k.transpose(-2, -1))
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(N, N, -1)
        attn = attn + bias.permute(2, 0, 1).contiguous().unsqueeze(0)
        nW = self.attn_mask.shape[0]
        attn = attn.view(B_ // nW, nW, self.nh, N, N) + self.attn_mask.unsqueeze(1).unsqueeze(0)
        attn = attn.view(-1, self.nh, N, N).softmax(dim=-1)
        y = (tf32(attn) @ tf32(v)).transpose(1, 2).reshape(B_, N, C)
        y = torch.nn.functional.linear(tf32(y), tf32(self.proj.weight), self.proj.bias)
        y = window_reverse(y.view(-1, ws, ws, C), ws, H, W)
        y = torch.roll(y, shifts=(s, s), dims=(1, 2))
        return shortcut + y.reshape(B, H * W, C)


def get_inputs():
    return [torch.randn(batch_size, H * W, dim)]


def get_init_inputs():
    return [dim, H, W, num_heads, window_size, shift_size]
