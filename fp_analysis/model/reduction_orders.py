"""Sums over many terms — reductions and scans — computed in fp32 in a named order, as kernels compute them.

A reduction's rounding error scales with Σ|x| and depends on the order its terms are added in, as a linear op's does
(Higham 2002, §4.2: |ŝ − s| ≤ γ_{n−1}·Σ|x_i| for recursive summation in any order, with the order deciding which
partial sums each rounding scales with). The floor (``interpose.Noise``) gives a reduction an error of u·Σ|x| — the
unit, as u·Σ|w·x| is a linear op's — and these orders re-create the kernels whose order errs by more than that
allows: a sequential loop over a long row of same-signed terms errs by about u·√(n/3)·Σ|x| (each of n roundings
scales with a partial sum that grows with the index), where PyTorch's cascade or tree errs by about u·log2(n)·Σ|x|.

``ORDERS`` (each a torch computation, on any device, exact IEEE fp32 additions):

* ``sequential`` — one accumulator, terms added from the first to the last: a per-thread loop over a row, and the
  scan every sequential cumsum is (``numerics.orders.Order.SEQUENTIAL`` with unit weights, bit for bit: a fused
  multiply-add of 1·x rounds once, as an addition does).
* ``pairwise`` — adjacent pairs added level by level, (x0+x1), (x2+x3), …, an odd last one moving up unchanged
  (``numerics.orders.Order.TREE`` with blocks of one term, bit for bit).
* ``threads256``, ``threads32`` — the textbook GPU reduction: T threads each add every T-th term (t, t+T, t+2T, …)
  sequentially, then the T partial sums are halved in a tree, a[i] += a[i + s] for s = T/2, …, 1 (a block of 256
  threads in shared memory; a warp's ``__shfl_down_sync`` for 32).

A sum in an order no one can re-create — atomics add in the order threads arrive, different on every run — is
allowed for, not re-created: ``ANY_ORDER`` gives each sum the error a sequential order of its terms has, u·√(Σ_k s_k²)
over its partial sums s_k (n roundings, each of size u·|s_k|, in random directions: the probabilistic model of
Higham & Mary 2019, SIAM J. Sci. Comput. 41(5), "A new approach to probabilistic rounding error analysis"); for
terms of one sign any order's partial sums grow as these do, so one allowance holds them all
(``sequential_error_scale``).

A matrix product's dot products are sums too: ``sequential_product`` re-creates the naive kernel, one fp32 accumulator
per output and a fused multiply-add per term in k order (the product exact in fp64 and the sum rounded once to fp32:
what ``fmaf`` computes, but for the rare double rounding of a tie), as ``numerics.orders.Order.SEQUENTIAL`` does on
the terms.

On a GPU the sequential orders run as one kernel each (``fpa_kernels.sequential``: the same bits, and the dot
products' a true ``fmaf`` chain), where the torch loops would launch an operation per term; the loops stay for the
CPU and wherever nvcc is missing.

Products over many terms (prod, cumprod) are computed in the same orders, multiplying where a sum adds:
``ordered_prod``, ``ordered_cumprod``. Their error does not depend on the order's magnitudes as a sum's does: each
of the m multiplications a result takes rounds relative to its partial product, fl(x1·…·xn) = x1·…·xn·(1 + θ_m) with
|θ_m| ≤ γ_m (Higham 2002, §3.1, Lemma 3.1), and with roundings in random directions |θ_m| ≲ λ·√m·u (Higham & Mary
2019, Theorem 2.4): ``product_error_scale`` gives each result |result|·√m, whatever the order. PyTorch's CPU cumprod
of fp32 multiplies in fp64 and rounds once; a GPU's fp32 scan rounds at every step.

A scan (cumsum, cumprod) is re-created sequentially only: a scan's parallel forms (Kogge-Stone, Blelloch, CUB's
decoupled look-back) are each their own order, not modelled; they stay within the floor or are named by what they leave.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from .graph import ADDED_FIRST

__all__ = [
    "ANY_ORDER",
    "ORDERS",
    "ORDER_WORDS",
    "ordered_cumprod",
    "ordered_cumsum",
    "ordered_matrix_product",
    "ordered_op",
    "ordered_prod",
    "ordered_sum",
    "product_error_scale",
    "sequential_error_scale",
    "sequential_product",
    "summed_dims",
]

ORDER_WORDS = {
    "sequential": "sequentially, first term to last (one accumulator: a per-thread loop)",
    "pairwise": "pairwise, adjacent pairs level by level (a tree over the terms)",
    "threads256": "as a 256-thread block reduces: every 256th term per thread, then a shared-memory tree",
    "threads32": "as a warp reduces: every 32nd term per lane, then a shuffle tree",
}
ORDERS = tuple(ORDER_WORDS)
ANY_ORDER = "any"
ORDER_WORDS[ANY_ORDER] = (
    "in an order not re-created bit for bit (atomics: the order threads arrive in), within the spread a sequential "
    "sum in any order has"
)


def _rows(x: torch.Tensor, dims: Sequence[int] | None, dtype=torch.float32) -> tuple[torch.Tensor, list[int]]:
    """(x in ``dtype`` with the reduced dims last, flattened to one: (rest..., n), the rest's shape)."""
    dims = list(range(x.dim())) if not dims else sorted(d % max(1, x.dim()) for d in dims)
    if x.dim() == 0:
        return x.reshape(1).to(dtype), []
    kept = [d for d in range(x.dim()) if d not in dims]
    moved = x.permute(*kept, *dims).to(dtype)
    rest = [x.shape[d] for d in kept]
    return moved.reshape(*rest, -1), rest


def _kernels(tensor: torch.Tensor):
    """``fpa_kernels.sequential`` where it runs on ``tensor`` (a CUDA tensor, nvcc at hand), else None: its kernels
    add in the orders below, bit for bit, in one launch where the torch loops launch an operation per term."""
    if not tensor.is_cuda:
        return None
    from fpa_kernels import sequential

    return sequential if sequential.available(tensor) else None


def _sequential(rows: torch.Tensor, multiply: bool = False) -> torch.Tensor:
    """Each row's terms combined one at a time into one fp32 accumulator: added, or ``multiply``'d."""
    kernels = None if multiply else _kernels(rows)
    if kernels is not None:
        try:
            return kernels.sequential_rows(
                rows.reshape(math.prod(rows.shape[:-1]), rows.shape[-1]), scan=False
            ).reshape(rows.shape[:-1])
        except Exception:  # not built or not loaded here (the reason is nvcc's or the driver's): the loop below
            pass
    # one operation per term, over views made at once: the loop's cost is the dispatch of each addition
    acc = torch.full(rows.shape[:-1], float(multiply), dtype=torch.float32, device=rows.device)
    combine = acc.mul_ if multiply else acc.add_
    for term in rows.unbind(-1):
        combine(term)
    return acc


def _pairwise(rows: torch.Tensor, multiply: bool = False) -> torch.Tensor:
    while rows.shape[-1] > 1:
        n = rows.shape[-1]
        pairs = rows[..., : n - n % 2]
        combined = pairs[..., 0::2] * pairs[..., 1::2] if multiply else pairs[..., 0::2] + pairs[..., 1::2]
        rows = torch.cat([combined, rows[..., n - n % 2 :]], dim=-1) if n % 2 else combined
    if rows.shape[-1]:
        return rows[..., 0]
    return torch.full(rows.shape[:-1], float(multiply), dtype=torch.float32, device=rows.device)


def _threads(rows: torch.Tensor, threads: int, multiply: bool = False) -> torch.Tensor:
    n = rows.shape[-1]
    steps = max(1, math.ceil(n / threads))
    # padding with +0 changes no fp32 sum (x + 0 = x exactly), with 1 no product, so every thread runs the same
    # number of steps
    padded = torch.nn.functional.pad(rows, (0, steps * threads - n), value=float(multiply))
    partial = _sequential(padded.reshape(*rows.shape[:-1], steps, threads).transpose(-1, -2), multiply)
    size = threads
    while size > 1:
        size //= 2
        low, high = partial[..., :size], partial[..., size : 2 * size]
        partial = low * high if multiply else low + high
    return partial[..., 0]


def ordered_sum(x: torch.Tensor, dims: Sequence[int] | None, keepdim: bool, order: str) -> torch.Tensor:
    """Σ x over ``dims`` (None or empty: all) in fp32, added in ``order`` (``ORDERS``); fp32 out, dims kept as 1 where
    ``keepdim``."""
    return _ordered_reduction(x, dims, keepdim, order, multiply=False)


def ordered_prod(x: torch.Tensor, dims: Sequence[int] | None, keepdim: bool, order: str) -> torch.Tensor:
    """∏ x over ``dims`` (None or empty: all) in fp32, multiplied in ``order`` (``ORDERS``); fp32 out, dims kept as 1
    where ``keepdim``."""
    return _ordered_reduction(x, dims, keepdim, order, multiply=True)


def _ordered_reduction(x: torch.Tensor, dims, keepdim: bool, order: str, multiply: bool) -> torch.Tensor:
    rows, rest = _rows(x, dims)
    if order == "sequential":
        out = _sequential(rows, multiply)
    elif order == "pairwise":
        out = _pairwise(rows, multiply)
    elif order.startswith("threads"):
        out = _threads(rows, int(order.removeprefix("threads")), multiply)
    else:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    out = out.reshape(rest)
    if keepdim:
        reduced = list(range(x.dim())) if not dims else sorted(d % x.dim() for d in dims)
        for d in reduced:
            out = out.unsqueeze(d)
    return out


def ordered_cumsum(x: torch.Tensor, dim: int) -> torch.Tensor:
    """The running sum of ``x`` along ``dim`` in fp32, each prefix the previous one plus the next term (a sequential
    scan); fp32 out."""
    if x.dim() == 0:  # a scan of one term is that term
        return x.float().clone()
    moved = x.float().movedim(dim, -1)
    if moved.shape[-1] == 0:
        return moved.movedim(-1, dim).clone()
    kernels = _kernels(moved)
    if kernels is not None:
        try:
            flat = kernels.sequential_rows(moved.reshape(math.prod(moved.shape[:-1]), moved.shape[-1]), scan=True)
            return flat.reshape(moved.shape).movedim(-1, dim)
        except Exception:  # as in _sequential
            pass
    prefixes = []
    acc = torch.zeros(moved.shape[:-1], dtype=torch.float32, device=x.device)
    for term in moved.unbind(-1):
        acc = acc + term
        prefixes.append(acc)
    return torch.stack(prefixes, dim=-1).movedim(-1, dim)


def ordered_cumprod(x: torch.Tensor, dim: int) -> torch.Tensor:
    """The running product of ``x`` along ``dim`` in fp32, each prefix the previous one times the next term (a
    sequential scan, as a per-row loop computes it); fp32 out."""
    if x.dim() == 0:  # a scan of one term is that term
        return x.float().clone()
    moved = x.float().movedim(dim, -1)
    prefixes = []
    acc = torch.ones(moved.shape[:-1], dtype=torch.float32, device=x.device)
    for term in moved.unbind(-1):
        acc = acc * term
        prefixes.append(acc)
    if not prefixes:
        return moved.movedim(-1, dim).clone()
    return torch.stack(prefixes, dim=-1).movedim(-1, dim)


def product_error_scale(name: str, out: torch.Tensor, x: torch.Tensor, dims: Sequence[int] | None) -> torch.Tensor:
    """|out|·√m for a product (``prod`` over ``dims``, None for all) or a running product (``cumprod`` along
    ``dims[0]``): m the multiplications each result takes (n − 1 of a product of n terms, k at a running product's
    k-th place from 0), at least one (module docstring: Higham & Mary 2019, Theorem 2.4); in out's dtype."""
    if x.dim() == 0:  # one term: nothing multiplied, one rounding allowed
        return out.abs()
    if name == "cumprod":
        dim = dims[0] % x.dim()
        steps = torch.arange(x.shape[dim], device=out.device, dtype=out.dtype)
        shape = [1] * out.dim()
        shape[dim] = -1
        return out.abs() * steps.clamp(min=1).sqrt().reshape(shape)
    n = math.prod(x.shape[d % x.dim()] for d in dims) if dims else x.numel()
    return out.abs() * math.sqrt(max(1, n - 1))


def sequential_error_scale(name: str, x: torch.Tensor, dims: Sequence[int] | None, keepdim: bool) -> torch.Tensor:
    """√(Σ_k s_k²) over the partial sums s_k of |x| (module docstring, ``ANY_ORDER``) for a sum or mean over ``dims``
    (a mean's divided by its count), and at each position of a cumsum along ``dims[0]``; in x's dtype."""
    if name == "cumsum":
        dim = dims[0]
        partial = x.abs().cumsum(dim)
        return (partial * partial).cumsum(dim).sqrt()
    rows, rest = _rows(x.abs(), dims, x.dtype)
    partial = rows.cumsum(-1)
    out = (partial * partial).sum(-1).sqrt().reshape(rest)
    if name == "mean":
        out = out / max(1, rows.shape[-1])
    if keepdim:
        for d in list(range(x.dim())) if not dims else sorted(d % x.dim() for d in dims):
            out = out.unsqueeze(d)
    return out


def sequential_product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """a @ b ((..., M, K) @ (..., K, N)) as a naive fp32 kernel computes it: each output one accumulator, terms added
    in k order by a fused multiply-add (module docstring); fp32 out."""
    batch = _broadcast(a.shape[:-2], b.shape[:-2])
    shape = (*batch, a.shape[-2], b.shape[-1])
    kernels = _kernels(a)
    if kernels is not None:
        try:
            left = a.float().expand(*batch, *a.shape[-2:]).reshape(math.prod(batch), *a.shape[-2:])
            right = b.float().expand(*batch, *b.shape[-2:]).reshape(math.prod(batch), *b.shape[-2:])
            return kernels.sequential_dot(left, right).reshape(shape)
        except Exception:  # as in _sequential
            pass
    columns = a.float().double().unsqueeze(-1).unbind(-2)  # K views of (..., M, 1)
    rows = b.float().double().unsqueeze(-2).unbind(-3)  # K views of (..., 1, N)
    acc = torch.zeros(shape, dtype=torch.float64, device=a.device)
    acc32 = torch.zeros(shape, dtype=torch.float32, device=a.device)
    for column, row in zip(columns, rows, strict=True):
        # the product of two fp32 values is exact in fp64, so the fp64 addition rounds once, then once more to fp32
        # (fmaf's one rounding, but for the rare tie that rounding twice breaks otherwise); three operations per
        # term, in place: the loop's cost is their dispatch
        acc.addcmul_(column, row)
        acc32.copy_(acc)
        acc.copy_(acc32)
    return acc32


def _broadcast(left: Sequence[int], right: Sequence[int]) -> tuple[int, ...]:
    """The broadcast of two batch shapes (NumPy's rule; the operands already met in the op being re-created).
    ``torch.broadcast_shapes`` would import torch's symbolic-shapes machinery on first use: seconds a process."""
    width = max(len(left), len(right))
    left, right = (1,) * (width - len(left)) + tuple(left), (1,) * (width - len(right)) + tuple(right)
    return tuple(r if s == 1 else s for s, r in zip(left, right, strict=True))


def ordered_matrix_product(func, args, kwargs) -> torch.Tensor:
    """A matrix product (mm, bmm, mv, dot, or addmm/baddbmm/addmv: beta·C + alpha·A·B) with each dot product summed
    sequentially in fp32 (``sequential_product``), in the dtype it was asked in."""
    added = func in ADDED_FIRST
    a, b = (args[1], args[2]) if added else (args[0], args[1])
    vector = b.dim() == 1
    left = a.unsqueeze(0) if a.dim() == 1 else a
    out = sequential_product(left, b.unsqueeze(-1) if vector else b)
    out = out.squeeze(-1) if vector else out
    out = out.squeeze(0) if a.dim() == 1 else out
    if added:
        beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
        out = (alpha * out + beta * args[0].float()).float()
    return out.to(a.dtype)


def summed_dims(name: str, args, kwargs) -> tuple[list[int] | None, bool]:
    """(the dims a sum, mean or cumsum, or a prod or cumprod (ATen's or prims') combines over, None for all;
    keepdim)."""
    dims = args[1] if len(args) > 1 else kwargs.get("dim", kwargs.get("dims"))
    dims = [dims] if isinstance(dims, int) else (list(dims) if dims else None)
    keepdim = bool(args[2]) if len(args) > 2 and isinstance(args[2], bool) else bool(kwargs.get("keepdim", False))
    return dims, keepdim


def ordered_op(func, name: str, args, kwargs, order: str) -> torch.Tensor:
    """A sum, mean or cumsum, or a prod or cumprod (ATen's or prims') computed in fp32 in ``order``
    (``ORDERS``), in the dtype it was asked in: a mean is that sum divided by the count, in fp32."""
    x = args[0]
    dims, keepdim = summed_dims(name, args, kwargs)
    dtype = kwargs.get("dtype") or x.dtype
    if name in ("cumsum", "cumprod"):
        return (ordered_cumsum if name == "cumsum" else ordered_cumprod)(x, dims[0]).to(dtype)
    if name == "prod":
        return ordered_prod(x, dims, keepdim, order).to(dtype)
    total = ordered_sum(x, dims, keepdim, order)
    if name == "mean":
        count = math.prod(x.shape[d] for d in dims) if dims else x.numel()
        total = total / torch.tensor(float(count), dtype=torch.float32)
    return total.to(x.dtype)
