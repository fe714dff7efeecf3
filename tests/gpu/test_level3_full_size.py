"""Level-3 networks at KernelBench's sizes on a GPU, analysed whole: ResNet-18 (training mode, two 224 × 224 images),
a ViT (six encoder layers of width 512 over 197 tokens), an LSTM of six layers over 512 steps, and minGPT's causal
self-attention (128 × 512 tokens of width 768). Each network written here in KernelBench's style (our own code, the
shapes of its level-3 problems). For each: the reference itself is ``identical``; one output moved by 1e-3 of the
largest is a ``bug`` located at that output; and where its products run on cuBLAS/cuDNN, the network run with TF32
allowed is named ``tf32`` on the candidate. The seconds each analysis takes are printed (run with -s to see them).

On the H200 (74ae04a–af2ab7a): ResNet-18 identical 15.6 s, bug 13.2 s, TF32 named tf32 8.5 s; ViT identical 20.7 s,
bug 25.1 s; the LSTM identical in 131 s (its recurrence runs op by op through the interposer: 6 layers × 512 steps
per evaluation, ~40 evaluations), its bug case past the call's limit. At 4b3ab80 (2026-12-03): minGPT's attention
identical 11.1 s, bug 14.7 s; the LSTM identical 138.9 s, its bug case past 230 s. On the GPU the LSTM's graph is
15,383 ops (3072 `_thnn_fused_lstm_cell`, 6144 `mm`) and 26 rewrites: about 80 evaluations of ~1.7 s each, the
interposer's cost per op (on the CPU, where each cell is decomposed into its tanh and sigmoid ops, 5c5780f took the
rewrites from one per tanh op and form to one per form)."""

from __future__ import annotations

import math
import time

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from fp_analysis.model.engine import Effort, analyse_model
from fp_analysis.numerics.backends import tf32


class _Block(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(out + (x if self.down is None else self.down(x)))


class ResNet18(nn.Module):
    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))  # fmt: skip
        widths, blocks, cin = [64, 128, 256, 512], [], 64
        for i, width in enumerate(widths):
            blocks += [_Block(cin, width, 1 if i == 0 else 2), _Block(width, width, 1)]
            cin = width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(512, num_classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class ViT(nn.Module):
    def __init__(self, image=224, patch=16, classes=10, dim=512, depth=6, heads=8, mlp=2048, channels=3):
        super().__init__()
        self.patch = patch
        self.position = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim))
        self.embed = nn.Linear(channels * patch * patch, dim)
        self.token = nn.Parameter(torch.randn(1, 1, dim))
        layer = nn.TransformerEncoderLayer(dim, heads, mlp, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.Linear(dim, mlp), nn.GELU(), nn.Linear(mlp, classes))

    def forward(self, img):
        p, n = self.patch, img.shape[0]
        x = img.unfold(2, p, p).unfold(3, p, p).reshape(n, -1, p * p * img.shape[1])
        x = torch.cat((self.token.expand(n, -1, -1), self.embed(x)), dim=1) + self.position
        return self.head(self.encoder(x)[:, 0])


class LSTMNet(nn.Module):
    def __init__(self, inputs=128, hidden=256, layers=6, outputs=10):
        super().__init__()
        self.lstm = nn.LSTM(inputs, hidden, layers, batch_first=True, dropout=0.0)
        self.fc = nn.Linear(hidden, outputs)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1, :])


class CausalSelfAttention(nn.Module):
    def __init__(self, embd=768, heads=8, max_len=1024):
        super().__init__()
        self.c_attn = nn.Linear(embd, 3 * embd)
        self.c_proj = nn.Linear(embd, embd)
        self.heads = heads
        self.register_buffer("bias", torch.tril(torch.ones(max_len, max_len)).view(1, 1, max_len, max_len))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.shape[-1]))
        att = F.softmax(att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf")), dim=-1)
        return self.c_proj((att @ v).transpose(1, 2).contiguous().view(b, t, c))


NETWORKS = {
    "resnet18": (ResNet18, lambda: [torch.randn(2, 3, 224, 224)]),
    "vit": (ViT, lambda: [torch.randn(2, 3, 224, 224)]),
    "lstm": (LSTMNet, lambda: [torch.randn(10, 512, 128)]),
    "mingpt_attention": (CausalSelfAttention, lambda: [torch.randn(128, 512, 768)]),
}


def _timed(what: str, *args, **kwargs):
    start = time.monotonic()
    analysis = analyse_model(*args, **kwargs)
    print(f"{what}: {analysis.verdict} in {time.monotonic() - start:.1f} s", flush=True)
    return analysis


def _network(name: str):
    """(model, inputs, its output in fp32 with TF32 off) on the GPU, seeded."""
    build, inputs_of = NETWORKS[name]
    torch.manual_seed(0)
    model = build().cuda()
    torch.manual_seed(1)
    inputs = [x.cuda() for x in inputs_of()]
    with torch.no_grad(), tf32(conv=False, matmul=False):
        reference = model(*inputs)
    return model, inputs, reference


@pytest.mark.gpu
@pytest.mark.parametrize("name", list(NETWORKS))
def test_a_full_size_network_is_identical_to_itself_and_a_one_output_bug_is_located(name):
    model, inputs, reference = _network(name)
    effort = Effort(runs=4)
    same = _timed(f"{name} identical", model, inputs, reference, reference.clone(), effort=effort)
    assert same.verdict == "identical"
    off = reference.clone()
    off.view(-1)[7] += 1e-3 * float(reference.abs().max())
    bug = _timed(f"{name} one output off", model, inputs, reference, off, effort=effort)
    assert bug.verdict == "bug" and bug.location["bad"] == 1, bug.causes[0].evidence


# On the H200 (commit 9a3a017) the ViT run with TF32 allowed was named fp16 (`candidate_fp16`), not tf32. The same
# happens on the CPU with a ViT of two layers whose products run on TF32 operands in fp32 (tests/unit/test_engine.py,
# strict xfail): operands computed in fp32 cross TF32's rounding boundaries where the fp64 re-creation's do not, the
# batch item where that happens departs by a few units of σ, and the concentration test rejects the TF32 rewrite.
_TF32_NAMED = [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="named fp16")) if n == "vit" else n
               for n in NETWORKS]  # fmt: skip


@pytest.mark.gpu
@pytest.mark.parametrize("name", _TF32_NAMED)
def test_a_full_size_network_run_with_tf32_allowed_is_named_tf32(name):
    model, inputs, reference = _network(name)
    with torch.no_grad(), tf32(conv=True, matmul=True):
        allowed = model(*inputs)
    if torch.equal(allowed, reference):
        pytest.skip(f"{name}: cuBLAS and cuDNN computed the same bits with TF32 allowed (no TF32 kernel chosen)")
    named = _timed(f"{name} TF32 allowed", model, inputs, reference, allowed, effort=Effort(runs=4))
    assert named.explained and "tf32" in named.verdict, [c.evidence for c in named.causes]
