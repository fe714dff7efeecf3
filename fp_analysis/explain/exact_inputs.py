"""One more trial, on inputs of few significant bits: where every legitimate order of the Model's sums gives the same
bits, so that a small bug is not inside an accumulation order's allowance.

On random inputs a sum of n terms may err by up to ~u·Σ|x| in a legitimate order, so the floor (``model.floor``)
must allow that much, and a bug that moves an output by less — a term dropped from a 10^5-term reduction, a loss
divided by n + 1, one element of a matrix product off by 10^-5 — is explained as ``accumulation_order``. On inputs
that are all small multiples of one power of two each of those sums is exact in fp32 in any order, tree or
sequential, with or without FMA, in TF32, bf16 or fp16 operands (``model.exactness``: Σ|x| ≤ 2^24·g), so every
legitimate kernel returns the same bits and the floor there holds only the rounding of the ops that are not exact.
The candidate's departure on those inputs is judged by the same engine as every trial's
(``fp_analysis.explain.job``); this trial can make an explanation a ``bug``, never the reverse.

Each floating input x is rounded away from zero to a multiple of g = 2^⌈log2(max|x| / L)⌉, with L levels, the
same L for every input: the finest of 256, 32, 4 and 1 at which every op of the reference Model that rounds is
exact (``model.exactness``, recorded by one fp64 evaluation of the Model each: its matrix products, sums and scans,
those inside a loss too, and its additions and multiplications; a mean by its sum), so each legitimate order gives
the same bits. Not one inexact op is allowed, not even after the sums: a kernel may fold it into them (a scale
applied to an operand before the product, each term divided before an atomic add), and then its sums are not exact
though the reference's are. 256 levels are 8 significant bits: exact in bf16, fp16 and TF32 operands. Rounding
away from zero keeps every sign and every zero (a mask, a triangle, a positive input to a log stay so), and the order
of the values (sorted inputs stay sorted). What the rounding does not keep — a normalisation (rows summing to 1), a
definite matrix — a candidate could rely on legitimately; the verdict names the trial, so such a case reads as what
it is.

The trial is run only where it can be exact and ties do not decide: the reference's output is floating, it picks
no index among values (a sort, a top-k, an argmax or a max over a dim, max-pooling's indices: which of equal values
comes first is an implementation's to choose, and these inputs are full of equal values), the Model's own
parameters and buffers are few-bit numbers too (none, or ones and zeros: a norm's affine defaults; random weights
make every product inexact), and some L makes all its arithmetic exact (an exponential, a square root, a division
by other than a power of two never is: the trial would only repeat the others). A mean counts as exact where its sum
is; the floor still gives its division its rounding.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from ..errors import UserCodeError
from ..model.exactness import significant_bits
from ..model.interpose import Arithmetic, evaluate
from ..numerics.allclose import atol_to_pass, beyond_rtol
from ..numerics.metrics import error_stats
from ..run.candidate import CandidateProcess
from ..run.usercode import Side, UserFile, check_output, wrong_output
from .kernelbench import TrialResult, WrongOutput, emulated_reference, reference_forward

__all__ = ["EXACT_INPUTS_WORDS", "EXACT_TRIAL", "exact_inputs_trial", "few_bits", "order_free_inputs"]

EXACT_TRIAL = -1  # the trial's number: not one of the check's

EXACT_INPUTS_WORDS = (
    "inputs of few significant bits (each input rounded away from zero to a multiple of a power of two, on which "
    "every order of the Model's sums is exact in fp32)"
)
_LEVELS = (256, 32, 4, 1)  # finest first; 256: 8 significant bits, exact in bf16, fp16 and TF32 operands
_PARAMETER_BITS = 8  # the most significant bits a parameter may have for the products with it to stay exact
_SAMPLE = 4096  # a parameter's values looked at first
# Ops that pick among values, whose result (an index, or what is gathered by it) depends on which of equal values
# comes first, an order an implementation is free to choose: random inputs never tie, these inputs do everywhere.
_ORDER_OF_TIES = frozenset({
    "sort", "argsort", "topk", "argmax", "argmin", "max", "min", "kthvalue", "median", "nanmedian", "mode",
    "_unique2", "unique_dim", "unique_consecutive", "cummax", "cummin", "searchsorted", "bucketize",
    "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d",
})  # fmt: skip


def few_bits(inputs: list, levels: int) -> list:
    """``inputs`` with each floating tensor rounded away from zero to ``levels`` steps of its largest magnitude (a
    power of two each: module docstring); others, and tensors holding a NaN or an infinity or only zeros, as they
    are."""
    return [_rounded(t, levels) if isinstance(t, torch.Tensor) and t.is_floating_point() else t for t in inputs]


def _rounded(t: torch.Tensor, levels: int) -> torch.Tensor:
    if not t.numel() or not bool(torch.isfinite(t).all()):
        return t
    top = float(t.abs().max())
    if top == 0.0:
        return t
    grid = math.ldexp(1.0, math.ceil(math.log2(top / levels)))
    return (torch.sign(t) * torch.ceil(t.abs() / grid) * grid).to(t.dtype)


def order_free_inputs(model: nn.Module, inputs: list, output: torch.Tensor) -> list | None:
    """The finest rounding of ``inputs`` (``few_bits``) on which every op of ``model`` that rounds is exact, or None
    where the trial does not apply (module docstring)."""
    if not output.is_floating_point():
        return None
    floating = [t.detach() for t in (*model.parameters(), *model.buffers()) if t.is_floating_point()]
    # a parameter's first values first: random weights are ruled out without a pass over a large one
    for look in (lambda t: t.reshape(-1)[:_SAMPLE], lambda t: t):
        if any(significant_bits(look(t)) > _PARAMETER_BITS for t in floating):
            return None
    for levels in _LEVELS:
        rounded = few_bits(inputs, levels)
        if all(r is t or torch.equal(r, t) for r, t in zip(rounded, inputs, strict=True)):
            continue  # already of so few bits: the check's own trials were this trial
        try:
            evaluation = evaluate(model, rounded, Arithmetic(), record_exact=True)
        except Exception:  # the Model does not take them (a value it checks): no such trial
            return None
        if any(op.name in _ORDER_OF_TIES for op in evaluation.ops):
            return None  # equal values the rounding makes would be picked among as no random input's are
        if evaluation.order_free:
            return rounded
    return None


def exact_inputs_trial(
    problem: UserFile, reference: nn.Module, candidate: CandidateProcess, worst: TrialResult, check: tuple
) -> tuple[TrialResult | None, str | None]:
    """(the trial on the worst trial's inputs of few bits, a note): (None, None) where it does not apply; (None,
    a note) where the candidate could not run on them — our inputs, not the benchmark's, so not its failure.
    ``check``: (reference mode, atol, rtol). A wrong shape or dtype on them is a bug, as on any trial
    (``WrongOutput``, of the worst trial)."""
    mode, atol, rtol = check
    with problem.watched("Model.forward (finding inputs of few significant bits its sums are exact on)"):
        inputs = order_free_inputs(reference, worst.inputs, worst.reference)
    if inputs is None:
        return None, None
    detail = "on inputs of few significant bits"
    with emulated_reference(mode):
        ref_out, _ = reference_forward(problem, reference, inputs, detail=detail)
    ref_out = ref_out.detach()
    try:
        out, made_on, _ = candidate.forward(inputs, like=ref_out, detail=detail)
    except UserCodeError as error:
        return None, f"ModelNew.forward failed on {EXACT_INPUTS_WORDS}, which are ours: not judged on them ({error})"
    check_output(out, "ModelNew.forward", Side.SOLUTION, like=ref_out, device=made_on, detail=detail)
    wrong = wrong_output(out, ref_out)
    if wrong is not None:
        raise WrongOutput(f"{wrong} ({detail})", worst.trial, ref_out.numel())
    out = out.to(ref_out.device)
    passed = bool(torch.allclose(ref_out, out, atol=atol, rtol=rtol))
    stats = error_stats(out, ref_out, atol=atol, rtol=rtol)
    scores = {"atol_to_pass": atol_to_pass(ref_out, out, rtol), "beyond_rtol": beyond_rtol(ref_out, out, rtol)}
    return TrialResult(EXACT_TRIAL, worst.seed, passed, stats, inputs, ref_out, out, **scores), None
