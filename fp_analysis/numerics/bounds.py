"""Error bounds for the emulated dot products, the operand-rounding models and the conv epilogue.

Notation (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM 2002 — "Higham"):
u is the unit roundoff of the accumulation format, γ_n = n·u / (1 − n·u) (Higham Lemma 3.1), and the
bounds are componentwise: for one output s = b + Σ_k w_k·x_k the error is bounded by a multiple of
S = |b| + Σ_k |w_k|·|x_k| — the output of the same op applied to |W| and |X| (Higham §3.1, eq. (3.5)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import ParameterError
from .formats import FORMATS
from .orders import AccumulationSpec, Combine, Contraction, OperandRounding, Order
from .rounding import Rounding

__all__ = [
    "GELU_LIPSCHITZ",
    "DotBound",
    "TermSums",
    "bound_from_sums",
    "dot_bound",
    "epilogue_bound",
    "gamma",
    "gamma_tilde",
    "lambda_for_probability",
    "rounding_depth",
    "tensor_core_bound",
    "term_sums",
]

_FP32 = FORMATS["fp32"]
_FP64 = FORMATS["fp64"]


def gamma(n: int, u: float) -> float:
    """γ_n = n·u / (1 − n·u), defined while n·u < 1 (Higham Lemma 3.1)."""
    if n * u >= 1:
        raise ParameterError(f"gamma needs n·u < 1, got n={n}, u={u}")
    return n * u / (1 - n * u)


def gamma_tilde(n: int, u: float, lam: float) -> float:
    """γ̃_n(λ) = exp(λ·√n·u + n·u²/(1 − u)) − 1 (Higham & Mary 2019, SIAM J. Sci. Comput. 41(5), Thm 2.4).

    |θ_n| ≤ γ̃_n(λ) holds with probability at least 1 − 2·exp(−λ²(1 − u)²/2) when the n rounding errors
    are independent random variables of mean zero (their model M).
    """
    return math.expm1(lam * math.sqrt(n) * u + n * u * u / (1 - u))


def lambda_for_probability(n: int, probability: float, u: float) -> float:
    """The λ for which an inner product with n roundings meets its probabilistic bound with the given
    probability: Q(λ, n) = 1 − 2n·exp(−λ²(1 − u)²/2) (Higham & Mary 2019, Thm 3.1) solved for λ, with one
    more Hoeffding event (probability 2·exp(−λ²/2)) for the operand rounding (Hoeffding 1963, Thm 2)."""
    if not 0 < probability < 1:
        raise ParameterError(f"Got probability={probability!r}, but it must lie strictly between 0 and 1.")
    return math.sqrt(2 * math.log(2 * (n + 1) / (1 - probability))) / (1 - u)


def rounding_depth(spec: AccumulationSpec, k: int, has_init: bool) -> int:
    """The largest number of fp32 roundings any one term passes through: the n of γ_n for ``spec``.

    Sequential, fused: the first product is rounded by its own FMA and by each later one: n = K (the
    bias, if any, also K). Separate: the product's own rounding plus K − 1 adds, or K adds when a bias
    starts the accumulator: n = K (+1 with bias) (Higham §3.1, eq. (3.2)–(3.4)). Blocked orders add the
    combine depth: ⌈log2 B⌉ for a tree, B − 1 sequentially (Higham §4.2). Kahan and fp64 accumulation
    have their own bounds and use n only for the probabilistic part.
    """

    def chain(length: int) -> int:
        fused = spec.contraction is Contraction.FMA
        return max(length, 1) + (1 if has_init and not fused else 0)

    if spec.order in (Order.TREE, Order.SPLIT_K):
        blocks = spec.blocks(k)
        size = spec.block if spec.order is Order.TREE else math.ceil(k / spec.splits)
        tree = spec.order is Order.TREE or spec.combine is Combine.TREE
        depth = math.ceil(math.log2(blocks)) if tree and blocks > 1 else (0 if tree else blocks - 1)
        return chain(min(size, k)) + depth
    return chain(k)


def _operation_count(spec: AccumulationSpec, k: int) -> int:
    """fp32 roundings per output, each of which may underflow (used for the absolute underflow term)."""
    per_term = 1 if spec.contraction is Contraction.FMA else 2
    if spec.order is Order.KAHAN:
        return k * (per_term + 3)
    if spec.order is Order.FP64:
        return 1
    return k * per_term + spec.blocks(k)


@dataclass(frozen=True)
class TermSums:
    """The data-dependent scales of the bounds, per output (see ``dot_bound``), computed once per data set."""

    k: int
    s1: np.ndarray  # Σ|w||x|
    s2: np.ndarray  # Σ(|w| + |x|)
    sq: np.ndarray  # (Σ(|w||x|)²)^½
    b: np.ndarray  # |init|, zeros without one
    has_init: bool


def term_sums(w: np.ndarray, x: np.ndarray, init: np.ndarray | None = None) -> TermSums:
    """S1, S2, Sq and |b| of ``dot_bound``, each inflated by γ_{K+1}(u64) so float64 rounding cannot shrink them."""
    k = w.shape[1]
    w64, x64 = np.abs(w.astype(np.float64)), np.abs(x.astype(np.float64))
    prod = w64 * x64
    inflate = 1 + gamma(k + 1, _FP64.unit_roundoff)
    b = np.zeros(w.shape[0]) if init is None else np.abs(init.astype(np.float64))
    return TermSums(
        k,
        prod.sum(axis=1) * inflate,
        (w64 + x64).sum(axis=1) * inflate,
        np.sqrt((prod * prod).sum(axis=1)) * inflate,
        b,
        init is not None,
    )


@dataclass(frozen=True)
class DotBound:
    """Componentwise error bounds for M outputs, against the exact b + Σ w·x of the unrounded operands."""

    deterministic: np.ndarray  # (M,) always holds (barring overflow)
    probabilistic: np.ndarray  # (M,) holds for each output with at least ``probability``
    n: int  # the γ_n depth used
    lam: float
    probability: float


def _operand_model(rounding: OperandRounding) -> tuple[float, float]:
    """(u_op, η_op) for operand rounding: x̃ = x(1 + δ) + η with |δ| ≤ u_op, |η| ≤ η_op.

    Nearest rounding has |δ| ≤ u = 2^-p, truncation |δ| < 2^(1−p); η covers gradual underflow, at most half
    (nearest) or one (truncation) smallest subnormal of the operand format (Higham §2.1, eq. (2.8)).
    """
    spec = rounding.format_and_rounding
    if spec is None:
        return 0.0, 0.0
    fmt = FORMATS[spec[0]]
    if spec[1] is Rounding.RZ:
        return fmt.eps, fmt.smallest_subnormal
    return fmt.unit_roundoff, fmt.smallest_subnormal / 2


def dot_bound(
    w: np.ndarray, x: np.ndarray, spec: AccumulationSpec, init: np.ndarray | None = None, probability: float = 0.99
) -> DotBound:
    """Deterministic and probabilistic bounds on |accumulate(w, x, spec, init) − (init + Σ w·x)|, per output.

    With S1 = Σ|w||x|, S2 = Σ(|w| + |x|), Sq = (Σ(|w||x|)²)^½ and b = |init|:

    - operand rounding (tensor-core model of Blanchard, Higham, Lopez, Mary & Pranesh 2020, SIAM J. Sci.
      Comput. 42(3), C124–C141, with the underflow term of Higham eq. (2.8)):
      E_op = (2u_op + u_op²)·S1 + η_op(1 + u_op)·S2 + K·η_op²;
    - accumulation: sequential, tree and split-K: γ_n·(S1 + E_op + b) (Higham eq. (3.5), n from
      ``rounding_depth``); Kahan: the product's rounding u plus (2u + 2K·u²)(1 + u) — Higham eq. (4.8) and
      Goldberg 1991 (ACM Comput. Surv. 23(1)) Thm 8 give 2u + O(K·u²); the constant 2 of the second-order
      term is our choice, checked by the property tests; fp64 accumulation: u32 + γ_K(u64)(1 + u32)
      (one final rounding after an fp64 sum);
    - underflow: each of the order's fp32 operations may add an absolute error of half the smallest
      subnormal (Higham eq. (2.8)), or of the smallest normal when results are flushed (FTZ), and FTZ of
      the operands perturbs each product by at most 2^-126·(|w| + |x|) + 2^-252.

    Total: (1 + γ)·E_op + γ·(S1 + b) + underflow terms. The probabilistic bound replaces γ_n by γ̃_n(λ)
    (Higham & Mary 2019, Thm 3.1) and E_op by Hoeffding's λ·2u_op(1 + u_op)·Sq for the operand
    rounding errors, independent and of mean zero (Hoeffding 1963, Thm 2); λ is chosen so that both hold
    together with at least ``probability`` per output (``lambda_for_probability``).
    """
    return bound_from_sums(term_sums(w, x, init), spec, probability)


def bound_from_sums(sums: TermSums, spec: AccumulationSpec, probability: float = 0.99) -> DotBound:
    """``dot_bound`` from precomputed ``term_sums`` (many specs over the same data)."""
    k, s1, s2, sq, b = sums.k, sums.s1, sums.s2, sums.sq, sums.b
    u = _FP32.unit_roundoff
    u_op, eta_op = _operand_model(spec.operand_rounding)
    e_op = (2 * u_op + u_op * u_op) * s1 + eta_op * (1 + u_op) * s2 + k * eta_op * eta_op
    n = rounding_depth(spec, k, sums.has_init)
    if spec.order is Order.KAHAN:
        g = (1 + u) * (1 + 2 * u + 2 * k * u * u) - 1
    elif spec.order is Order.FP64:
        g = u + gamma(k + 1, _FP64.unit_roundoff) * (1 + u)
    else:
        g = gamma(n, u)
    eta = _FP32.smallest_normal if spec.ftz else _FP32.smallest_subnormal / 2
    underflow = _operation_count(spec, k) * eta * (1 + g)
    if spec.ftz:
        underflow = underflow + (_FP32.smallest_normal * s2 + k * _FP32.smallest_normal**2) * (1 + g)
    deterministic = (1 + g) * e_op + g * (s1 + b) + underflow

    lam = lambda_for_probability(n, probability, u)
    g_prob = min(gamma_tilde(n, u, lam), g)
    e_op_prob = np.minimum(lam * 2 * u_op * (1 + u_op) * sq + eta_op * (1 + u_op) * s2 + k * eta_op**2, e_op)
    probabilistic = (1 + g_prob) * e_op_prob + g_prob * (s1 + b) + underflow
    with np.errstate(invalid="ignore"):
        overflowed = ~np.isfinite(s1) | (s1 > _FP32.max_finite)
    deterministic = np.where(overflowed, np.inf, deterministic)
    probabilistic = np.where(overflowed, np.inf, probabilistic)
    return DotBound(deterministic, probabilistic, n, lam, probability)


def tensor_core_bound(sums: TermSums, split: int) -> np.ndarray:
    """Deterministic bound for the TF32 tensor-core conv (``split`` 1) and 3xTF32 (``split`` 3), per output.

    Operands: rounded to TF32 (nearest), |δ| ≤ u_t = 2^-11 each, so products err by ≤ (2u_t + u_t²)|w·x|
    (Blanchard, Higham, Lopez, Mary & Pranesh 2020, SIAM J. Sci. Comput. 42(3), C124–C141); with the
    3xTF32 split a = a_big + a_small + e, |e| ≤ u_t²|a|, and the dropped a_small·b_small, the product
    errs by ≤ (3u_t² + 3u_t³ + u_t⁴)|w·x| (Ootomo & Yokota 2022, IJHPCA 36(4), §3). Accumulation: the
    tensor cores' internal additions need not round to nearest (Fasi, Higham, Mikaitis & Pranesh 2021,
    PeerJ Comput. Sci. 7:e330, found truncation), so each of the split·K + 1 additions is charged
    2u (round toward zero): γ_{split·K+1}(2u)·(S1 + E_op + |b|). Assumes no underflow or overflow.
    """
    u_t = FORMATS["tf32"].unit_roundoff
    op = (2 * u_t + u_t * u_t) if split == 1 else (3 * u_t**2 + 3 * u_t**3 + u_t**4)
    e_op = op * sums.s1
    g = gamma(split * sums.k + 1, 2 * _FP32.unit_roundoff)
    return (1 + g) * e_op + g * (sums.s1 + sums.b)


# max_x GELU′(x), GELU's Lipschitz constant: GELU′(x) = Φ(x) + x·φ(x) and GELU″(x) = φ(x)·(2 − x²), so the maximum is
# at x = √2 (Hendrycks & Gimpel 2016): Φ(√2) + √2·φ(√2) = (1 + erf(1))/2 + e^(−1)/√π ≈ 1.129. Written in closed form
# so that this layer needs no op; ``fp_analysis.ops.epilogue.gelu_derivative_extremum`` finds the same maximum with
# mpmath's root finder, and a test holds the two equal.
GELU_LIPSCHITZ = 0.5 * (1.0 + math.erf(1.0)) + math.exp(-1.0) / math.sqrt(math.pi)


def epilogue_bound(
    y: np.ndarray,
    y_err: np.ndarray,
    multiplier: np.ndarray,
    negative_slope: float = 0.01,
    gelu_lipschitz: float | None = None,
    gelu_eval_ulps: float = 6.0,
    ftz: bool = False,
) -> np.ndarray:
    """Bound on the error of gelu(leaky_relu(m·y)) computed in fp32 from a conv value with error ≤ y_err.

    Propagation through each step (first-order perturbation, Higham §3.1, and the Lipschitz constants):
    the fp32 product m·ŷ adds u·|m·ŷ| (one rounding) to |m|·y_err; LeakyReLU is 1-Lipschitz and its
    negative branch slope·v adds one more rounding u·|slope·v|; GELU is Lipschitz with constant
    max GELU′ = GELU′(√2) ≈ 1.13 (Hendrycks & Gimpel 2016, GELU′(x) = Φ(x) + x·φ(x)); its own fp32
    evaluation adds ``gelu_eval_ulps``·u·|v|. First-order count for g = (0.5·v)·(1 + erf(z)), z = v/√2, with
    an erf of at most E ulps (one ulp ≤ 2u relative): the erf error 2E·u and the rounding of 1 + erf (≤ 2u,
    as |1 + erf| ≤ 2) reach g times 0.5|v|; the final product adds u·|g| ≤ u·|v|; the rounding of z moves
    erf by ≤ (2/√π)e^(−z²)·u|z| and g by ≤ 0.25u|v|. Total (E + 2.25)·u·|v|: with fp_analysis.numerics.gelu32's
    erf (E ≤ 2.5, tests/unit/test_gelu32.py) 4.75, with CUDA's erff (E ≤ 1, shared/facts) 3.25; the default 6
    covers both with a margin, and the tanh form likewise (tanh32 ≤ 1.5 ulp, |∂g/∂arg| ≤ 0.5|v|).

    Underflow: each of the epilogue's fp32 operations (2 products, 12 in the GELU: 13 with the erf's
    Horner chain of 7 FMAs; 16 allowed) may also add an absolute error of half the smallest subnormal
    (Higham eq. (2.8)), or of the smallest normal when ``ftz`` flushes results (fast-math) — outputs in
    the subnormal range are otherwise held to a relative bound they cannot meet (found by ``fpa fuzz``).
    """
    lipschitz = GELU_LIPSCHITZ if gelu_lipschitz is None else gelu_lipschitz
    u = _FP32.unit_roundoff
    v = np.abs(multiplier) * (np.abs(y) + y_err)
    after_mult = np.abs(multiplier) * y_err + u * v
    after_leaky = after_mult + u * negative_slope * v
    underflow = 16 * (_FP32.smallest_normal if ftz else _FP32.smallest_subnormal / 2)
    return lipschitz * after_leaky + gelu_eval_ulps * u * (v + after_leaky) + lipschitz * underflow
