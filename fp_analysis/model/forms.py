"""Other forms of an op a kernel may compute instead of PyTorch's (``FORMS``): an activation's approximations, and
formulas equal in exact arithmetic that round differently in fp32 (``FORMULAS``).

The approximations: GELU's tanh form for its erf form (or the reverse), softplus and Mish computed the naive way in
fp32 (``approximation``, ``gelu_approximation``). The formulas (``formula``): softmax, log-softmax, log-sum-exp, ELU's
and tanh's exp forms, and the norms' variance. Each is evaluated in fp32 whatever the graph's precision (the
difference is how fp32 rounds it) and returns what the ATen op returns (a norm's (output, mean, rstd) too):

* **softmax without the max shift**, exp(x)/Σexp(x): equal to exp(x − max)/Σexp(x − max) in exact arithmetic; in fp32
  it overflows past x ≈ 88.7 and loses the small entries' relative accuracy where exp(x) is large (the shift exists
  for both reasons: Goodfellow, Bengio & Courville 2016, §4.1; Blanchard, Higham & Higham 2021, IMA J. Numer. Anal.
  41(4), "Accurately computing the log-sum-exp and softmax functions", §2–3).
* **softmax as exp(x − logsumexp(x))**, the log-sum-exp computed with the max shift and rounded once: equal in exact
  arithmetic, but the rounding of log-sum-exp (half an ulp of a value near max(x)) scales a whole row, by up to
  u·|logsumexp(x)| — at a mean of 100, 64 u (same source, §3, the error of the exponentiated difference).
* **log-softmax as log(softmax(x))**: its small probabilities' relative error becomes an absolute error of the log,
  and a probability that underflows to 0 gives −inf where x − logsumexp(x) is finite (same source, §3).
* **log-softmax and log-sum-exp without the max shift**: x − log Σexp(x), log Σexp(x) (same source, §2).
* **ELU's negative side as alpha·(exp(x) − 1)** (SELU and CELU too, which are ELU scaled), and **tanh through exp**
  (2/(1 + exp(−2x)) − 1, 1 − 2/(exp(2x) + 1), (exp(2x) − 1)/(exp(2x) + 1), (1 − exp(−2x))/(1 + exp(−2x)),
  (exp(x) − exp(−x))/(exp(x) + exp(−x))), as kernels commonly write them: near x = 0 the subtraction cancels,
  leaving an absolute error of about u where PyTorch's expm1 and tanh err by u·|f(x)| (Higham 2002, §1.7 on
  cancellation and §1.14.1 on computing exp(x) − 1; Goldberg 1991, ACM Comput. Surv. 23(1), §1.4).
* **hardsigmoid and hardswish as clamp(x/6 + 1/2, 0, 1)** (or with x·(1/6)), not PyTorch's clamp(x + 3, 0, 6)/6:
  exact arithmetic in another order, whose addition cancels near x = −3 (Higham 2002, §1.7).
* **one-pass variance**, E[x²] − E[x]², for the statistics of LayerNorm, GroupNorm and BatchNorm in training mode:
  subtracts two nearly equal numbers when |mean| ≫ standard deviation, losing about log2(E[x²]/var) bits — catastrophic
  cancellation (Chan, Golub & LeVeque 1983, Am. Stat. 37(3), "Algorithms for computing the sample variance";
  Higham 2002, §1.9). PyTorch computes the variance in two passes or by Welford's update (both accurate).

``FORMS`` and ``FORMULAS``: op name → {form name: (what it is, function(func, args, kwargs))}; ``FORMULA_FORMS``
names the forms whose cause is ``formula``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch._decomp import decomposition_table

from .dynamo_guards import EagerDispatchMode

__all__ = ["FORMS", "FORMULAS", "FORMULA_FORMS", "ONE_PASS"]

aten = torch.ops.aten
ONE_PASS = "one_pass_variance"


def _fp32(value):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.float()
    if isinstance(value, (list, tuple)):
        return type(value)(_fp32(v) for v in value)
    return value


def _like(out, dtype):
    if isinstance(out, torch.Tensor):
        return out.to(dtype) if out.is_floating_point() else out
    return tuple(_like(o, dtype) for o in out)


def _rowwise_in_fp32(compute: Callable) -> Callable:
    """``compute(x, dim)`` on the op's first operand in fp32, the result in the operand's dtype."""

    def form(func, args, kwargs):
        x, dim = args[0], args[1] if len(args) > 1 else kwargs.get("dim")
        return compute(x.float(), dim).to(x.dtype)

    return form


def _elementwise_in_fp32(compute: Callable) -> Callable:
    """``compute(x)`` on the op's first operand in fp32, the result in the operand's dtype."""

    def form(func, args, kwargs):
        return compute(args[0].float()).to(args[0].dtype)

    return form


def _softmax_unshifted(x, dim):
    e = torch.exp(x)
    return e / e.sum(dim, keepdim=True)


def _softmax_via_logsumexp(x, dim):
    return torch.exp(x - torch.logsumexp(x, dim, keepdim=True))


def _log_of_softmax(x, dim):
    return torch.log(torch.softmax(x, dim))


def _log_softmax_unshifted(x, dim):
    return x - torch.log(torch.exp(x).sum(dim, keepdim=True))


def _logsumexp_unshifted(x, dim):
    return torch.log(torch.exp(x).sum(dim))


def _logsumexp_form(func, args, kwargs):
    x, dim = args[0], args[1] if len(args) > 1 else kwargs.get("dim")
    keepdim = args[2] if len(args) > 2 else kwargs.get("keepdim", False)
    out = torch.log(torch.exp(x.float()).sum(dim, keepdim=keepdim))
    return out.to(x.dtype)


def _elu_exp_minus_one(func, args, kwargs):
    """ELU as scale·(x > 0 ? x : alpha·(exp(x·input_scale) − 1)) in fp32 (aten.elu's arguments); CELU (aten.celu) as
    x > 0 ? x : alpha·(exp(x/alpha) − 1), divided as it is written, not multiplied by a rounded 1/alpha."""
    x, given = args[0], {**dict(zip(("alpha", "scale", "input_scale"), args[1:], strict=False)), **kwargs}
    alpha, x32 = float(given.get("alpha", 1.0)), x.float()
    if "celu" in str(func):
        inner = x32 / alpha
    else:
        input_scale = float(given.get("input_scale", 1.0))
        inner = x32 * input_scale if input_scale != 1.0 else x32
    out = float(given.get("scale", 1.0)) * torch.where(x32 > 0, x32, alpha * (torch.exp(inner) - 1))
    return out.to(x.dtype)


_TANH_FORMS = {
    "tanh_via_sigmoid": ("tanh as 2/(1 + exp(−2x)) − 1, in fp32", lambda x: 2 / (1 + torch.exp(-2 * x)) - 1),
    "tanh_exp_ratio": ("tanh as (exp(2x) − 1)/(exp(2x) + 1), in fp32",
                       lambda x: (torch.exp(2 * x) - 1) / (torch.exp(2 * x) + 1)),
    "tanh_exp_difference": ("tanh as (exp(x) − exp(−x))/(exp(x) + exp(−x)), in fp32",
                            lambda x: (torch.exp(x) - torch.exp(-x)) / (torch.exp(x) + torch.exp(-x))),
    "tanh_one_minus": ("tanh as 1 − 2/(exp(2x) + 1), in fp32", lambda x: 1 - 2 / (torch.exp(2 * x) + 1)),
    "tanh_decaying_ratio": ("tanh as (1 − exp(−2x))/(1 + exp(−2x)), in fp32",
                            lambda x: (1 - torch.exp(-2 * x)) / (1 + torch.exp(-2 * x))),
}  # fmt: skip


def _hard_sigmoid_forms(times_x: bool) -> dict:
    """hardsigmoid (``times_x``: hardswish, x times it) with its line written as x/6 + 1/2 or x·(1/6) + 1/2."""
    name, what = ("hardswish", "x·clamp({}, 0, 1)") if times_x else ("hardsigmoid", "clamp({}, 0, 1)")
    lines = {
        "divided": ("x/6 + 1/2", lambda x: x / 6 + 0.5),
        "by_reciprocal": ("x·(1/6) + 1/2", lambda x: x * (1 / 6) + 0.5),
    }
    return {
        f"{name}_{key}": (f"{name} as {what.format(words)}, in fp32",
                          _elementwise_in_fp32(lambda x, f=line: (x if times_x else 1) * torch.clamp(f(x), 0, 1)))
        for key, (words, line) in lines.items()
    }  # fmt: skip


class _OnePassVarianceMode(EagerDispatchMode):
    """Every var_mean computed as E[x²] − E[x]² (biased, then corrected), in the dtype it is given."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func.overloadpacket is aten.var_mean:
            x = args[0]
            dims = args[1] if len(args) > 1 else kwargs.get("dim")
            keepdim = kwargs.get("keepdim", args[3] if func is aten.var_mean.dim and len(args) > 3 else False)
            if func is aten.var_mean.dim:
                unbiased = args[2] if len(args) > 2 else kwargs.get("unbiased", True)
                correction = 1 if unbiased else 0
            else:
                correction = kwargs.get("correction")
                correction = 1 if correction is None else correction
            dims = list(range(x.dim())) if dims is None or dims == [] else list(dims)
            n = math.prod(x.shape[d] for d in dims)
            mean = x.mean(dims, keepdim=True)
            square = (x * x).mean(dims, keepdim=True)
            var = (square - mean * mean) * (n / max(n - correction, 1))
            if not keepdim:
                var, mean = var.squeeze(dims), mean.squeeze(dims)
            return var, mean
        return func(*args, **kwargs)


def _one_pass(func, args, kwargs):
    """The norm's decomposition (``torch._decomp``) in fp32 with its variance taken in one pass."""
    dtype = next(a.dtype for a in args if isinstance(a, torch.Tensor) and a.is_floating_point())
    decomposed = decomposition_table[func]
    with _OnePassVarianceMode():
        out = decomposed(*_fp32(args), **_fp32(kwargs))
    return _like(out, dtype)


_ONE_PASS_WORDS = "the statistics' variance as E[x²] − E[x]² (one pass, in fp32)"

FORMULAS: dict[str, dict[str, tuple[str, Callable]]] = {
    "_softmax": {
        "softmax_unshifted": ("softmax as exp(x)/Σexp(x) without subtracting the max, in fp32",
                              _rowwise_in_fp32(_softmax_unshifted)),
        "softmax_via_logsumexp": ("softmax as exp(x − logsumexp(x)), in fp32",
                                  _rowwise_in_fp32(_softmax_via_logsumexp)),
    },
    "_log_softmax": {
        "log_of_softmax": ("log-softmax as log(softmax(x)), in fp32", _rowwise_in_fp32(_log_of_softmax)),
        "log_softmax_unshifted": ("log-softmax as x − log Σexp(x) without the max shift, in fp32",
                                  _rowwise_in_fp32(_log_softmax_unshifted)),
    },
    "logsumexp": {
        "logsumexp_unshifted": ("log-sum-exp as log Σexp(x) without the max shift, in fp32", _logsumexp_form),
    },
    **{
        name: {"elu_exp_minus_1": (f"{words} with its negative side as alpha·(exp(x) − 1), not expm1, in fp32",
                                   _elu_exp_minus_one)}
        for name, words in (("elu", "ELU (or SELU)"), ("celu", "CELU"))
    },
    "tanh": {name: (words, _elementwise_in_fp32(fn)) for name, (words, fn) in _TANH_FORMS.items()},
    "hardsigmoid": _hard_sigmoid_forms(times_x=False),
    "hardswish": _hard_sigmoid_forms(times_x=True),
    **{
        name: {ONE_PASS: (_ONE_PASS_WORDS, _one_pass)}
        for name in ("native_layer_norm", "native_group_norm", "native_batch_norm", "_native_batch_norm_legit")
    },
}  # fmt: skip


def _gelu_other(func, args, kwargs):
    own = kwargs.get("approximate", "none")
    return aten.gelu.default(args[0], approximate="none" if own == "tanh" else "tanh")


def _in_fp32(fn: Callable[[torch.Tensor], torch.Tensor]):
    """A form evaluated in fp32 whatever the graph's precision: these forms differ from the op by how fp32
    rounds them (1 + exp(x) rounding to 1 for x < −17, say), which fp64 would hide."""

    def form(func, args, kwargs):
        x = args[0]
        return fn(x.float()).to(x.dtype)

    return form


def _softplus_naive(x):
    return torch.log(1 + torch.exp(x))


def _softplus_no_threshold(x):
    return torch.log1p(torch.exp(x))


# op name → {form name: (what it is, function(func, args, kwargs))}: an activation's approximations, then the
# formulas equal in exact arithmetic that round otherwise (``formulas``)
FORMS: dict[str, dict[str, tuple[str, Callable]]] = {
    "gelu": {"other_gelu": ("the other GELU form (tanh approximation for erf, or the reverse)", _gelu_other)},
    "softplus": {
        "softplus_naive": ("softplus as log(1 + exp(x)) in fp32", _in_fp32(_softplus_naive)),
        "softplus_no_threshold": (
            "softplus as log1p(exp(x)) without PyTorch's threshold",
            _in_fp32(_softplus_no_threshold),
        ),
    },
    "mish": {
        "mish_naive": (
            "Mish as x·tanh(log(1 + exp(x))) in fp32",
            _in_fp32(lambda x: x * torch.tanh(_softplus_naive(x))),
        ),
    },
    **FORMULAS,
}  # fmt: skip
FORMULA_FORMS = frozenset(form for forms in FORMULAS.values() for form in forms)
