"""The K terms of chosen outputs of a convolution: which outputs (``sample_output_indices``), their (weight, input)
pairs (``gather_terms`` into ``Terms``), and the orders a kernel's loop nest visits them in (``term_permutation``).

A convolution output is a dot product of K = (C_in / groups) · prod(kernel_size) terms plus an optional bias
(``fp_analysis.ops.conv``). Gathering them lets the rest of the toolkit re-sum them in any order and precision on a
CPU, bit for bit. Validation happens here, at the public boundary; inner helpers trust validated input.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

import numpy as np
import torch

from ..errors import DtypeError, ParameterError, ShapeError
from ..numerics.memory import require
from .conv import ConvSpec, _is_int

__all__ = [
    "TermOrder",
    "Terms",
    "gather_terms",
    "require_terms_memory",
    "sample_output_indices",
    "term_permutation",
]


@dataclass(frozen=True)
class Terms:
    """The K (weight, input) pairs of M sampled outputs, ready to be summed in any order.

    ``w[m]`` equals ``weight[o].reshape(-1)`` for the output channel o of ``index[m]``; the K axis
    runs input channel (within the group) outermost, then kernel taps row-major. ``x[m, k]`` is the
    input value that meets ``w[m, k]``, 0.0 where the tap falls in the padding. ``bias`` is the
    per-output bias (None when the convolution has none).
    """

    w: np.ndarray  # (M, K) float32
    x: np.ndarray  # (M, K) float32
    bias: np.ndarray | None  # (M,) float32
    index: np.ndarray  # (M, 2 + spatial dims) int64: (n, o, *spatial)

    @property
    def M(self) -> int:
        """Number of sampled outputs."""
        return int(self.w.shape[0])

    @property
    def K(self) -> int:
        """Terms per output."""
        return int(self.w.shape[1])


def _as_float32_array(name: str, value: Any) -> np.ndarray:
    """Return ``value`` (torch tensor, any device, or numpy array) as a float32 numpy array, or raise."""
    if isinstance(value, torch.Tensor):
        if value.dtype != torch.float32:
            raise DtypeError(f"{name} must have dtype float32, got {value.dtype}")
        return value.detach().cpu().contiguous().numpy()
    if isinstance(value, np.ndarray):
        if value.dtype != np.float32:
            raise DtypeError(f"{name} must have dtype float32, got {value.dtype}")
        return value
    raise DtypeError(f"{name} must be a torch.Tensor or numpy.ndarray of float32, got {type(value).__name__}")


def _validated_out_index(out_index: Any, out_shape: tuple[int, ...]) -> np.ndarray:
    if isinstance(out_index, torch.Tensor):
        out_index = out_index.detach().cpu().numpy()
    index = np.asarray(out_index)
    if index.dtype.kind not in "iu":
        raise DtypeError(f"out_index must hold integers, got dtype {index.dtype}")
    if index.ndim != 2 or index.shape[1] != len(out_shape):
        raise ShapeError(
            f"out_index must have shape (M, {len(out_shape)}) holding (n, o, *spatial) per row; got shape {index.shape}"
        )
    index = index.astype(np.int64)
    bad = (index < 0) | (index >= np.asarray(out_shape, dtype=np.int64))
    if bad.any():
        row = int(np.argwhere(bad.any(axis=1))[0, 0])
        raise ShapeError(f"out_index row {row} = {index[row].tolist()} is outside the output shape {list(out_shape)}")
    return index


def gather_terms(spec: ConvSpec, x: Any, weight: Any, bias: Any, out_index: Any) -> Terms:
    """Return the ``Terms`` (weights, inputs, bias) that produce the outputs at ``out_index``.

    For output (n, o, *p) with o in group g = o // (C_out/groups), term (c, *t) pairs
    weight[o, c, *t] with input[n, g·(C_in/groups) + c, *(p·stride − pad_before + t·dilation)]
    (PyTorch ``torch.nn.Conv2d`` docs: cross-correlation with stride, padding, dilation, groups);
    inputs whose position falls outside the input read the zero padding. For a transposed convolution,
    term (c, *t) pairs weight[g·(C_in/groups) + c, o mod (C_out/groups), *t] with input[n, g·(C_in/groups)
    + c, *i] where i = (p + padding − t·dilation) / stride, and is 0.0 where that i is not a whole number
    inside the input (``torch.nn.ConvTranspose2d``: the gradient of Conv2d with respect to its input).

    ``x``, ``weight``, ``bias`` are float32 torch tensors or numpy arrays (``bias`` None iff
    ``spec.bias`` is False); ``out_index`` is an integer array (M, 2 + spatial dims).
    """
    if not isinstance(spec, ConvSpec):
        raise ParameterError(f"spec must be a ConvSpec, got {type(spec).__name__}")
    x_arr = _as_float32_array("x", x)
    w_arr = _as_float32_array("weight", weight)
    out_shape = spec.output_shape(x_arr.shape)
    if tuple(w_arr.shape) != spec.weight_shape:
        raise ShapeError(f"weight must have shape {list(spec.weight_shape)} for this spec, got {list(w_arr.shape)}")
    b_arr = _validated_bias(spec, bias)
    index = _validated_out_index(out_index, out_shape)
    require_terms_memory(spec, index.shape[0])

    m = index.shape[0]
    o = index[:, 1]
    w_terms = _weights_per_output_channel(spec, w_arr)[o]
    x_terms = _gather_inputs(spec, x_arr, index)
    b_terms = None if b_arr is None else b_arr[o]
    return Terms(
        w=np.ascontiguousarray(w_terms, dtype=np.float32).reshape(m, spec.K),
        x=x_terms,
        bias=b_terms,
        index=index,
    )


def require_terms_memory(spec: ConvSpec, samples: int) -> None:
    """Refuse (ParameterError naming ``samples``) gathering the terms of ``samples`` outputs where they do not
    fit in memory: the (M, K) weights and inputs, and the gather's int64 coordinate arrays of that size."""
    per_term = 4 + 4 + 8 * (2 + spec.spatial_dims)
    require({"terms of the sampled outputs": per_term * samples * spec.K}, f"samples={samples}")


def _validated_bias(spec: ConvSpec, bias: Any) -> np.ndarray | None:
    if bias is None:
        if spec.bias:
            raise ParameterError("bias is None but spec.bias is True; pass the (out_channels,) bias tensor")
        return None
    if not spec.bias:
        raise ParameterError("bias was given but spec.bias is False; pass bias=None")
    b_arr = _as_float32_array("bias", bias)
    if tuple(b_arr.shape) != (spec.out_channels,):
        raise ShapeError(f"bias must have shape [{spec.out_channels}], got {list(b_arr.shape)}")
    return b_arr


def _weights_per_output_channel(spec: ConvSpec, w: np.ndarray) -> np.ndarray:
    """(C_out, K): row o is the weights output channel o uses, input channel (in its group) outermost."""
    if not spec.transposed:
        return w.reshape(spec.out_channels, spec.K)
    cin_g, cout_g = spec.in_channels_per_group, spec.out_channels_per_group
    # weight is (C_in, C_out/groups, *k); group g's input channels are rows g·cin_g … (g+1)·cin_g − 1.
    grouped = w.reshape(spec.groups, cin_g, cout_g, spec.taps)
    return np.ascontiguousarray(grouped.transpose(0, 2, 1, 3)).reshape(spec.out_channels, spec.K)


def _gather_inputs(spec: ConvSpec, x: np.ndarray, index: np.ndarray) -> np.ndarray:
    """Return the (M, K) input values of each output's terms, zeros where a tap is in the padding."""
    nd = spec.spatial_dims
    m = index.shape[0]
    cin_g = spec.in_channels_per_group
    # Index arrays broadcast to (M, C_in/groups, *kernel_size): one axis per term coordinate, so
    # reshaping to (M, K) gives channel outermost then taps row-major, the order of weight[o].reshape(-1).
    rank = 2 + nd

    def on_axis(values: np.ndarray, axis: int) -> np.ndarray:
        shape = [1] * rank
        shape[axis] = values.size
        return values.reshape(shape)

    def per_output(values: np.ndarray) -> np.ndarray:
        return values.reshape(m, *([1] * (rank - 1)))

    group = index[:, 1] // spec.out_channels_per_group
    batch = per_output(index[:, 0])
    channel = per_output(group * cin_g) + on_axis(np.arange(cin_g, dtype=np.int64), 1)
    inside = np.ones((m, *([1] * (rank - 1))), dtype=bool)
    positions = []
    for d in range(nd):
        offsets = on_axis(np.arange(spec.kernel_size[d], dtype=np.int64) * spec.dilation[d], 2 + d)
        size = x.shape[2 + d]
        if spec.transposed:  # p = i·stride − padding + t·dilation, solved for i
            numerator = per_output(index[:, 2 + d] + spec.padding[d][0]) - offsets
            pos = np.floor_divide(numerator, spec.stride[d])
            inside = inside & (numerator % spec.stride[d] == 0)
        else:
            pos = per_output(index[:, 2 + d] * spec.stride[d] - spec.padding[d][0]) + offsets
        inside = inside & (pos >= 0) & (pos < size)
        positions.append(np.clip(pos, 0, size - 1))  # keeps the gather in range; masked to 0 below
    gathered = np.where(inside, x[(batch, channel, *positions)], np.float32(0.0))
    term_shape = (m, cin_g, *spec.kernel_size)
    return np.ascontiguousarray(np.broadcast_to(gathered, term_shape), dtype=np.float32).reshape(m, spec.K)


class TermOrder(str, Enum):
    """An order of the K terms of one output, as a kernel's loop nest visits them."""

    CHANNEL_OUTER = "channel_outer"
    """Input channel outermost, kernel taps row-major inside: PyTorch's weight layout, im2col's order."""

    TAP_OUTER = "tap_outer"
    """Kernel taps (row-major) outermost, input channel inside: the order of NHWC / implicit-GEMM
    kernels that loop over the filter window and vectorise over channels."""


def term_permutation(spec: ConvSpec, order: TermOrder | str) -> np.ndarray:
    """Return a permutation p of range(K) such that ``terms.w[:, p]`` lists terms in ``order``.

    Term k in the gathered (channel-outer) layout is channel k // taps, tap k % taps; under
    ``tap_outer`` position j = t·(C_in/groups) + c holds k = c·taps + t.
    """
    if not isinstance(spec, ConvSpec):
        raise ParameterError(f"spec must be a ConvSpec, got {type(spec).__name__}")
    try:
        order = TermOrder(order)
    except ValueError:
        allowed = ", ".join(repr(o.value) for o in TermOrder)
        raise ParameterError(f"order must be one of {allowed}; got {order!r}") from None
    identity = np.arange(spec.K, dtype=np.int64)
    if order is TermOrder.CHANNEL_OUTER:
        return identity
    return identity.reshape(spec.in_channels_per_group, spec.taps).T.reshape(-1).copy()


def sample_output_indices(out_shape: Sequence[int], count: int, seed: int) -> np.ndarray:
    """Return ``count`` distinct output coordinates drawn uniformly, as int64 (M, len(out_shape)).

    Draws without replacement with ``numpy.random.default_rng(seed)``; rows are sorted in C order
    (so gathers touch memory in order). When ``count`` ≥ the number of outputs, every coordinate
    is returned, sorted.
    """
    if isinstance(out_shape, torch.Size):
        out_shape = tuple(out_shape)
    if not isinstance(out_shape, Sequence) or len(out_shape) == 0 or not all(_is_int(s) and s > 0 for s in out_shape):
        raise ParameterError(f"out_shape must be a non-empty sequence of positive integers, got {out_shape!r}")
    if not _is_int(count) or count < 1:
        raise ParameterError(f"count must be an integer >= 1, got {count!r}")
    if not _is_int(seed) or seed < 0:
        raise ParameterError(f"seed must be a non-negative integer, got {seed!r}")
    shape = tuple(int(s) for s in out_shape)
    numel = math.prod(shape)
    if count >= numel:
        flat = np.arange(numel, dtype=np.int64)
    else:
        rng = np.random.default_rng(int(seed))
        flat = np.sort(rng.choice(numel, size=int(count), replace=False)).astype(np.int64)
    return np.stack(np.unravel_index(flat, shape), axis=1).astype(np.int64)
