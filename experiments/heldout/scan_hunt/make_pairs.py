"""Writes the scan_hunt problems and solutions (each file self-contained, KernelBench format)."""

import os
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))

PROBLEM = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """{doc}"""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, {args}):
        return {body}


batch_size = {batch}
input_shape = ({n},)
dim = 1


def get_inputs():
    x = {draw}
{extra}

def get_init_inputs():
    return [dim]
'''

HELPERS = '''import torch
from torch import nn


def suffix(x, d):
    """Sum of the terms at and after each position (a reverse scan)."""
    return torch.cumsum(x.flip(d), d).flip(d)


def blocked_scan(x, d, bs=256):
    """A thread block's scan: each block of bs scanned, then the blocks' totals scanned and added as carries."""
    x = x.movedim(d, -1)
    n = x.shape[-1]
    pad = (-n) % bs
    xp = torch.cat([x, x.new_zeros(*x.shape[:-1], pad)], -1) if pad else x
    b = xp.reshape(*x.shape[:-1], -1, bs)
    inner = torch.cumsum(b, -1)
    carry = torch.cumsum(inner[..., -1], -1) - inner[..., -1]
    out = (inner + carry.unsqueeze(-1)).reshape(*x.shape[:-1], -1)[..., :n]
    return out.movedim(-1, d)


def pairwise_sum(x, d):
    x = x.movedim(d, -1)
    while x.shape[-1] > 1:
        n = x.shape[-1]
        h = n // 2
        if n % 2:
            x = torch.cat([x[..., :h] + x[..., h:2 * h], x[..., 2 * h:]], -1)
        else:
            x = x[..., :h] + x[..., h:]
    return x


def kahan_sum(x, d):
    x = x.movedim(d, 0)
    s = torch.zeros_like(x[0])
    c = torch.zeros_like(x[0])
    for t in x:
        y = t - c
        u = s + y
        c = (u - s) - y
        s = u
    return s.unsqueeze(-1)


def bump(shape, device, step=97):
    """A deterministic pseudo-random sign pattern in [-1, 1] (a function of position only)."""
    i = torch.arange(shape[0] * shape[1], device=device, dtype=torch.float64).reshape(shape)
    return torch.sin(i * 12.9898 + 78.233).float()


class ModelNew(nn.Module):
    """{doc}"""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, {args}):
        d = self.dim
{body}
'''

MASK = "    mask = torch.randint(0, 2, x.shape).bool()\n    return [x, mask]\n"
RET = "    return [x]\n"

PROBLEMS = {
    "fwd_cumsum": dict(
        doc="Inclusive scan along a dim.",
        args="x",
        body="torch.cumsum(x, dim=self.dim)",
        batch=128,
        n=4000,
        draw="torch.randn(batch_size, *input_shape)",
        extra=RET,
    ),
    "rev_cumsum": dict(
        doc="Suffix sums: cumsum of the reversed input, reversed back.",
        args="x",
        body="torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)",
        batch=128,
        n=4000,
        draw="torch.randn(batch_size, *input_shape)",
        extra=RET,
    ),
    "rev_cumsum_rand": dict(
        doc="Suffix sums of positive terms.",
        args="x",
        body="torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)",
        batch=128,
        n=4000,
        draw="torch.rand(batch_size, *input_shape)",
        extra=RET,
    ),
    "masked_cumsum": dict(
        doc="Cumulative sum of the elements the mask keeps.",
        args="x, mask",
        body="torch.cumsum(x * mask, dim=self.dim)",
        batch=128,
        n=4000,
        draw="torch.randn(batch_size, *input_shape)",
        extra=MASK,
    ),
    "excl_cumsum": dict(
        doc="Exclusive scan: the sum of the terms before each position.",
        args="x",
        body="torch.cumsum(torch.cat([torch.zeros_like(x.narrow(self.dim, 0, 1)), "
        "x.narrow(self.dim, 0, x.shape[self.dim] - 1)], self.dim), dim=self.dim)",
        batch=128,
        n=4000,
        draw="torch.randn(batch_size, *input_shape)",
        extra=RET,
    ),
    "rev_cumsum_short": dict(
        doc="Suffix sums over short rows.",
        args="x",
        body="torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)",
        batch=1024,
        n=512,
        draw="torch.randn(batch_size, *input_shape)",
        extra=RET,
    ),
    "rev_cumsum_offset": dict(
        doc="Suffix sums of terms with a mean of 3.",
        args="x",
        body="torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)",
        batch=128,
        n=4000,
        draw="torch.randn(batch_size, *input_shape) + 3.0",
        extra=RET,
    ),
}

# forward-scan-from-total: cumsum_j = total - suffix_j + x_j
FT = "        out = x.sum(d, keepdim=True) - suffix(x, d) + x\n"
# reverse scan from total: suffix_j = total - prefix_j + x_j
RT = "        out = x.sum(d, keepdim=True) - torch.cumsum(x, d) + x\n"
RS = "        c = torch.cumsum(x, d)\n        out = c.narrow(d, x.shape[d] - 1, 1) - c + x\n"
REV = "        out = torch.cumsum(x.flip(d), d).flip(d)\n"

SOLUTIONS = {
    "fwd_cumsum": {
        "plain": ("torch.cumsum itself", "        out = torch.cumsum(x, d)\n"),
        "from_total": ("total - sums after each position + x", FT),
        "from_total_fp64_blocked": (
            "total summed in fp64 and rounded, the sums after each position by a blocked scan",
            "        total = x.double().sum(d, keepdim=True).float()\n"
            "        out = total - blocked_scan(x.flip(d), d).flip(d) + x\n",
        ),
        "from_total_start_1e4": ("from_total, plus 1e-4 at out[3, 2]", FT + "        out[3, 2] += 1e-4\n"),
        "from_total_first_cols": (
            "from_total, plus 2e-4 at columns 0..7 of every row",
            FT + "        out[:, :8] += 2e-4\n",
        ),
        "from_total_x_fp16": (
            "from_total with the + x term read as fp16",
            "        out = x.sum(d, keepdim=True) - suffix(x, d) + x.half().float()\n",
        ),
        "from_total_total_scaled": (
            "from_total with total * (1 + 1e-6)",
            "        out = x.sum(d, keepdim=True) * (1 + 1e-6) - suffix(x, d) + x\n",
        ),
        "plain_noise": (
            "torch.cumsum plus 1e-4 * a pseudo-random pattern at every output",
            "        out = torch.cumsum(x, d) + 1e-4 * bump(x.shape, x.device)\n",
        ),
        "from_total_sparse": (
            "from_total plus 5e-4 at every 97th output",
            FT + "        flat = out.view(-1)\n        flat[::97] += 5e-4\n",
        ),
        "plain_first_cols": (
            "torch.cumsum plus 2e-4 at columns 0..7 (control, no formula)",
            "        out = torch.cumsum(x, d)\n        out[:, :8] += 2e-4\n",
        ),
    },
    "rev_cumsum": {
        "total_minus": ("total - prefix + x", RT),
        "scan_total": ("c[-1] - c + x", RS),
        "kahan_blocked": (
            "Kahan-compensated total, prefix by a blocked scan",
            "        out = kahan_sum(x, d) - blocked_scan(x, d) + x\n",
        ),
        "fp64_total": (
            "total in fp64 then rounded, prefix fp32 cumsum",
            "        out = x.double().sum(d, keepdim=True).float() - torch.cumsum(x, d) + x\n",
        ),
        "last_cols": (
            "total_minus plus 3e-4 at the last 4 columns (few-term suffixes)",
            RT + "        out[:, -4:] += 3e-4\n",
        ),
        "last_elem_rel": (
            "scan_total with out[:, -1] = x[:, -1] * (1 + 1e-4)",
            RS + "        out[:, -1] = x[:, -1] * (1 + 1e-4)\n",
        ),
        "total_drop_last": (
            "total summed without the last term",
            "        out = x[:, :-1].sum(d, keepdim=True) - torch.cumsum(x, d) + x\n",
        ),
        "off_by_one_x": (
            "total_minus, but + x[:, 1001] at position 1000",
            RT + "        out[:, 1000] += x[:, 1001] - x[:, 1000]\n",
        ),
        "bias_1e5": ("total_minus plus 1e-5 at every output (one sign)", RT + "        out += 1e-5\n"),
        "total_fp16": (
            "total rounded to fp16",
            "        out = x.sum(d, keepdim=True).half().float() - torch.cumsum(x, d) + x\n",
        ),
        "one_row_tail": (
            "total_minus plus 4e-4 at the last 16 positions of row 5",
            RT + "        out[5, -16:] += 4e-4\n",
        ),
        "plain_tail_1e4": (
            "the reverse scan itself plus 1e-4 at out[3, -3] (control, no formula)",
            REV + "        out[3, -3] += 1e-4\n",
        ),
    },
    "rev_cumsum_rand": {
        "total_minus": ("total - prefix + x", RT),
        "scan_total": ("c[-1] - c + x", RS),
        "total_scaled": (
            "total_minus with total * (1 + 1e-6)",
            "        out = x.sum(d, keepdim=True) * (1 + 1e-6) - torch.cumsum(x, d) + x\n",
        ),
        "last_cols": ("total_minus plus 2e-4 at the last 8 columns", RT + "        out[:, -8:] += 2e-4\n"),
    },
    "masked_cumsum": {
        "from_total": (
            "masked total - masked sums after each position + masked x",
            "        xm = x * mask\n        out = xm.sum(d, keepdim=True) - suffix(xm, d) + xm\n",
        ),
        "mask_total_only": (
            "mask applied to the total, not to the sums after each position",
            "        xm = x * mask\n        out = xm.sum(d, keepdim=True) - suffix(x, d) + xm\n",
        ),
        "from_total_start": (
            "from_total plus 3e-4 at columns 1..3 of rows 0..31",
            "        xm = x * mask\n        out = xm.sum(d, keepdim=True) - suffix(xm, d) + xm\n"
            "        out[:32, 1:4] += 3e-4\n",
        ),
        "x_term_unmasked": (
            "from_total with + x unmasked",
            "        xm = x * mask\n        out = xm.sum(d, keepdim=True) - suffix(xm, d) + x\n",
        ),
    },
    "excl_cumsum": {
        "total_minus_suffix": (
            "total - sums at and after each position",
            "        out = x.sum(d, keepdim=True) - suffix(x, d)\n",
        ),
        "inclusive_minus_x": ("inclusive scan - x", "        out = torch.cumsum(x, d) - x\n"),
        "start_err": (
            "total_minus_suffix plus 3e-4 at columns 0..2",
            "        out = x.sum(d, keepdim=True) - suffix(x, d)\n        out[:, :3] += 3e-4\n",
        ),
    },
    "rev_cumsum_short": {
        "total_minus": ("total - prefix + x", RT),
        "start_1e4": (
            "total_minus plus 1e-4 at out[3, 509] (the unit test's bug, on the formula)",
            RT + "        out[3, 509] += 1e-4\n",
        ),
    },
    "rev_cumsum_offset": {
        "total_minus": ("total - prefix + x", RT),
        "tail_err": ("total_minus plus 2e-3 at the last 2 columns", RT + "        out[:, -2:] += 2e-3\n"),
    },
}


def main():
    for name, p in PROBLEMS.items():
        os.makedirs(os.path.join(HERE, name), exist_ok=True)
        with open(os.path.join(HERE, name, "problem.py"), "w") as f:
            f.write(PROBLEM.format(**p))
        for sol, (doc, body) in SOLUTIONS[name].items():
            with open(os.path.join(HERE, name, sol + ".py"), "w") as f:
                f.write(HELPERS.format(doc=doc, args=p["args"], body=body + "        return out\n"))


if __name__ == "__main__":
    main()


# second round (written after the first's RESULTS: the exact-inputs trial caught most planted constants)
PROBLEMS2 = {
    "rev_cumsum_scaled": dict(
        doc="Suffix sums, scaled by 0.1.",
        args="x",
        body="torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim) * 0.1",
        batch=128,
        n=4000,
        draw="torch.randn(batch_size, *input_shape)",
        extra=RET,
    ),
    "running_mean": dict(
        doc="Running mean along a dim: the inclusive scan over the count so far.",
        args="x",
        body="torch.cumsum(x, dim=self.dim) / torch.arange(1, x.shape[self.dim] + 1, device=x.device, dtype=x.dtype)",
        batch=128,
        n=4000,
        draw="torch.randn(batch_size, *input_shape)",
        extra=RET,
    ),
    "rev_cumsum_long": dict(
        doc="Suffix sums over long rows.",
        args="x",
        body="torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)",
        batch=32,
        n=16384,
        draw="torch.randn(batch_size, *input_shape)",
        extra=RET,
    ),
    "rev_cumsum_64k": dict(
        doc="Suffix sums over rows of 65536.",
        args="x",
        body="torch.cumsum(x.flip(self.dim), self.dim).flip(self.dim)",
        batch=16,
        n=65536,
        draw="torch.randn(batch_size, *input_shape)",
        extra=RET,
    ),
}
CNT = "torch.arange(1, x.shape[d] + 1, device=x.device, dtype=x.dtype)"
SOLUTIONS2 = {
    "rev_cumsum_scaled": {
        "total_minus": ("(total - prefix + x) * 0.1", RT + "        out = out * 0.1\n"),
        "last_cols": (
            "total_minus plus 3e-5 at the last 4 columns",
            RT + "        out = out * 0.1\n        out[:, -4:] += 3e-5\n",
        ),
        "start_1e5": (
            "total_minus plus 1e-5 at out[3, -3]",
            RT + "        out = out * 0.1\n        out[3, -3] += 1e-5\n",
        ),
        "sparse": (
            "total_minus plus 5e-5 at every 97th output",
            RT + "        out = out * 0.1\n        out.view(-1)[::97] += 5e-5\n",
        ),
        "plain_last_cols": (
            "the Model itself plus 3e-5 at the last 4 columns (control, no formula)",
            REV + "        out = out * 0.1\n        out[:, -4:] += 3e-5\n",
        ),
        "last_elem_rel": (
            "scan_total with out[:, -1] = x[:, -1] * (1 + 1e-4)",
            RS + "        out[:, -1] = x[:, -1] * (1 + 1e-4)\n        out = out * 0.1\n",
        ),
    },
    "running_mean": {
        "from_total": ("(total - suffix + x) / count", FT + f"        out = out / {CNT}\n"),
        "first_cols": (
            "from_total plus 2e-4 at columns 0..7",
            FT + f"        out = out / {CNT}\n        out[:, :8] += 2e-4\n",
        ),
        "plain_first_cols": (
            "the Model itself plus 2e-4 at columns 0..7 (control, no formula)",
            f"        out = torch.cumsum(x, d) / {CNT}\n        out[:, :8] += 2e-4\n",
        ),
    },
    "rev_cumsum_long": {
        "total_minus": ("total - prefix + x", RT),
        "x_fp16": (
            "total - prefix + x, the + x term read as fp16",
            "        out = x.sum(d, keepdim=True) - torch.cumsum(x, d) + x.half().float()\n",
        ),
    },
    "rev_cumsum_64k": {
        "total_minus": ("total - prefix + x", RT),
        "x_bf16": (
            "total - prefix + x, the + x term read as bf16",
            "        out = x.sum(d, keepdim=True) - torch.cumsum(x, d) + x.bfloat16().float()\n",
        ),
    },
    "rev_cumsum_rand": {
        "fp64_total": (
            "total in fp64 then rounded, prefix fp32 cumsum",
            "        out = x.double().sum(d, keepdim=True).float() - torch.cumsum(x, d) + x\n",
        ),
    },
}


def main2():
    for name, p in PROBLEMS2.items():
        os.makedirs(os.path.join(HERE, name), exist_ok=True)
        with open(os.path.join(HERE, name, "problem.py"), "w") as f:
            f.write(PROBLEM.format(**p))
    for name, sols in SOLUTIONS2.items():
        args = {**PROBLEMS, **PROBLEMS2}[name]["args"]
        for sol, (doc, body) in sols.items():
            with open(os.path.join(HERE, name, sol + ".py"), "w") as f:
                f.write(HELPERS.format(doc=doc, args=args, body=body + "        return out\n"))


if __name__ == "__main__":
    main2()
