"""A Model under ``torch.autocast(device_type="cuda", dtype=bfloat16 or float16)``, re-created op by op: which values
are held in the reduced format and which ops run in fp32.

CUDA autocast (PyTorch's "Automatic Mixed Precision" op reference): the ops of its lower-precision list —
convolutions, matrix products, ``linear``, ``prelu`` — cast every floating operand (input, weight, bias) to the
format and return the format; the ops of its fp32 list — softmax and log-softmax, ``layer_norm`` and ``group_norm``,
``exp``/``log``/``pow``/``rsqrt``/``reciprocal``, ``sum``/``prod``/``cumsum``, ``softplus``, norms, distances and the
losses — cast to fp32 and return fp32; every other op runs in the dtype of its operands by type promotion: in the
format where all its (non-scalar) floating operands are, in fp32 as soon as one is fp32 — but batch norm, which
returns its input's dtype whatever its parameters'. An op computing in the format
rounds its result to it (PyTorch's elementwise kernels compute in fp32 internally and round the result once).

``Autocast.run`` applies that to one ATen op of an evaluation: it rounds the operands of a lower-precision op, rounds
the result of any op whose result is in the format, and remembers which tensors are (``held``). The Monte-Carlo floor
around it (``interpose.Noise``) moves each such result by the format's unit roundoff (``unit``): where an fp32
accumulation order differs, the result's rounding to the format may go the other way.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

import torch

from ..numerics.formats import FORMATS
from ..numerics.rounding import round_to

__all__ = ["FOLLOW_INPUT", "FP32_OPS", "LOWER_OPS", "Autocast"]

# ATen names (as the interposer sees them, after decomposition) of CUDA autocast's lists, checked against the
# dispatcher's AutocastCUDA kernels of torch 2.13 (a review). Losses that decompose before the interposer sees them
# (cosine_similarity, kl_div, l1_loss, the margin and embedding losses) run their pieces by type promotion here.
LOWER_OPS = frozenset({
    "convolution", "mm", "addmm", "bmm", "baddbmm", "addbmm", "mv", "addmv", "addr", "_prelu_kernel",
    "_scaled_dot_product_flash_attention", "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention", "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_attention_math",
})  # fmt: skip
FP32_OPS = frozenset({
    "_softmax", "_log_softmax", "native_layer_norm", "native_group_norm", "exp", "expm1", "log", "log10", "log1p",
    "log2", "pow", "rsqrt", "reciprocal", "sum", "prod", "cumsum", "cumprod", "softplus", "norm",
    "linalg_vector_norm", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss_forward",
    "nll_loss2d_forward", "kl_div", "binary_cross_entropy_with_logits", "cosine_similarity", "_cdist_forward",
    "dist", "acos", "asin", "cosh", "sinh", "tan", "erfinv", "renorm", "cosine_embedding_loss",
    "hinge_embedding_loss", "margin_ranking_loss", "soft_margin_loss", "multilabel_margin_loss_forward",
    "multi_margin_loss", "poisson_nll_loss", "triplet_margin_loss", "logsumexp", "upsample_nearest1d",
    "upsample_nearest2d", "upsample_nearest3d", "_upsample_nearest_exact1d", "_upsample_nearest_exact2d",
    "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d", "upsample_trilinear3d",
    "upsample_bicubic2d", "_upsample_bilinear2d_aa", "_upsample_bicubic2d_aa",
})  # fmt: skip
# Ops on neither list whose result takes its input's dtype whatever their parameters' (cuDNN's batch norm takes a
# reduced-format input with fp32 weight and statistics and returns the input's format).
FOLLOW_INPUT = frozenset({
    "native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training", "cudnn_batch_norm",
})  # fmt: skip


class Autocast:
    """One evaluation's autocast state in format ``fmt`` ("bf16" or "fp16"): which tensors it holds in the format.
    ``whole``: the whole Model in the format instead (``Model.half()`` / ``.bfloat16()`` with its inputs cast): every
    operand and every result in it, no op in fp32."""

    def __init__(self, fmt: str, whole: bool = False):
        self.fmt, self.whole = fmt, whole
        self._held: weakref.WeakValueDictionary[int, torch.Tensor] = weakref.WeakValueDictionary()

    def held(self, value) -> bool:
        """Whether ``value`` is a tensor this evaluation holds in the format."""
        return isinstance(value, torch.Tensor) and self._held.get(id(value)) is value

    def unit(self, value) -> float:
        """The unit roundoff of the format ``value`` is held in (0 where it is not held in it)."""
        return FORMATS[self.fmt].unit_roundoff if self.held(value) else 0.0

    def run(self, name: str, args: tuple, kwargs: dict, compute: Callable[[tuple, dict], object]):
        """ATen op ``name`` on ``args``/``kwargs`` as autocast runs it (module docstring); ``compute(args, kwargs)``
        evaluates the op itself."""
        if self.whole or name in LOWER_OPS:
            given = args
            args = tuple(self._rounded(a) for a in args)
            if self.whole:
                kwargs = {k: self._rounded(v) for k, v in kwargs.items()}
            out = self._hold(compute(args, kwargs))
            if name.endswith("_") and given and isinstance(given[0], torch.Tensor) and isinstance(out, torch.Tensor):
                # in place: the op wrote the rounded copy, and the caller reads its first operand (a GRU's add_); an
                # op in place on the metadata (unsqueeze_) changes the shape and computes nothing: run on the operand
                if out.shape != given[0].shape:
                    return compute(given, kwargs)
                return self._hold(given[0].copy_(out), in_place=True)
            return out
        out = compute(args, kwargs)
        if name in FP32_OPS or kwargs.get("dtype") in (torch.float32, torch.float64):
            return out
        if name.endswith("_") and args and isinstance(args[0], torch.Tensor):  # in place: its first operand's dtype
            return self._hold(out, in_place=True) if self.held(args[0]) else out
        if name in FOLLOW_INPUT and args and isinstance(args[0], torch.Tensor):
            return self._hold(out) if self.held(args[0]) else out
        operands = [v for v in (*args, *kwargs.values()) if isinstance(v, torch.Tensor) and v.is_floating_point()]
        shaped = [v for v in operands if v.dim() > 0] or operands  # a 0-dim tensor does not promote a shaped one
        if shaped and all(self.held(v) for v in shaped):
            return self._hold(out)
        return out

    def carry(self, before: torch.Tensor, after: torch.Tensor) -> torch.Tensor:
        """``after`` (``before`` moved by a Monte-Carlo error) held in the format where ``before`` was, as it is:
        the error stands for a rounding to the format that went the other way."""
        if self.held(before):
            self._held[id(after)] = after
        return after

    def _rounded(self, value):
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            return round_to(value.float(), self.fmt).to(value.dtype)
        return value

    def _hold(self, out, in_place: bool = False):
        """``out`` (a tensor, or a tuple or list of them) rounded to the format, and held: the same tensor where it
        is in the format already (a view, a max) or the op wrote its first operand (``in_place``), else a new one."""
        if isinstance(out, (tuple, list)):
            return type(out)(self._hold(value, in_place) for value in out)
        if isinstance(out, torch.Tensor) and out.is_floating_point():
            rounded = round_to(out.float(), self.fmt).to(out.dtype)
            if in_place:
                out.copy_(rounded)
            elif not torch.equal(rounded, out):
                out = rounded
            self._held[id(out)] = out
        return out
