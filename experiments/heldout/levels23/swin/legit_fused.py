import torch
import torch.nn as nn

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
        # LayerNorm by hand: mean in two halves, centred variance
        h1 = x[..., : C // 2].sum(-1, keepdim=True)
        h2 = x[..., C // 2 :].sum(-1, keepdim=True)
        mu = (h2 + h1) / C
        d = x - mu
        var = (d * d).mean(-1, keepdim=True)
        xn = d * torch.rsqrt(var + self.norm1.eps) * self.norm1.weight + self.norm1.bias
        xn = xn.view(B, H, W, C)
        # shift by explicit index gather instead of roll
        idx_h = (torch.arange(H) + s) % H
        idx_w = (torch.arange(W) + s) % W
        xs = xn[:, idx_h][:, :, idx_w]
        xw = window_partition(xs, ws)
        B_, N, _ = xw.shape
        qkv = (xw @ self.qkv.weight.t() + self.qkv.bias).reshape(B_, N, 3, self.nh, C // self.nh).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = torch.matmul(q, k.transpose(-2, -1)) * self.scale  # scale after the product
        nW = self.attn_mask.shape[0]
        bias = self.relative_position_bias_table[self.relative_position_index.view(-1)].view(N, N, -1).permute(2, 0, 1)
        add = bias.unsqueeze(0) + self.attn_mask.unsqueeze(1)  # (nW, nh, N, N), bias and mask merged first
        attn = attn.view(B_ // nW, nW, self.nh, N, N) + add.unsqueeze(0)
        m = attn.amax(-1, keepdim=True)
        e = torch.exp(attn - m)
        attn = (e / e.sum(-1, keepdim=True)).view(-1, self.nh, N, N)
        y = (attn @ v).transpose(1, 2).reshape(B_, N, C)
        y = y @ self.proj.weight.t() + self.proj.bias
        y = window_reverse(y.view(-1, ws, ws, C), ws, H, W)
        idx_h = (torch.arange(H) - s) % H
        idx_w = (torch.arange(W) - s) % W
        y = y[:, idx_h][:, :, idx_w]
        return y.reshape(B, H * W, C) + x


def get_inputs():
    return [torch.randn(batch_size, H * W, dim)]


def get_init_inputs():
    return [dim, H, W, num_heads, window_size, shift_size]
