"""What the engine can model, checked: the Model's evaluations guarded (a failure is out of scope, exit 2), its
forward free of random draws and on the same path in fp64 as in fp32. ``fpa explain``'s analysis and ``fpa
tolerance --problem`` both start here, so a Model is in scope for one exactly when it is for the other.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import torch

from ..errors import AnalysisMemoryError, OutOfScopeError
from ..numerics.backends import tf32
from .graph import DATA_MOVES, OpKind, OpRecord, describe_op
from .interpose import Arithmetic, Evaluation, evaluate
from .state import carried, named, same_bits

__all__ = ["KeptItems", "check_path", "checked_fp32", "guarded"]


class KeptItems(torch.nn.Module):
    """The Model evaluated whole, the batch items ``start`` … ``start + count − 1`` of its output kept: what the
    analysis holds where the output is too large to analyse whole and the Model does not treat batch items apart (a
    norm over the whole tensor, BatchNorm in training mode), so one item cannot be run alone. Every op still runs on
    the whole batch — the semantics are the Model's own — and only the output kept is compared; the memory an
    evaluation needs is the whole Model's, what is kept across evaluations is the items'.

    Its modules are the Model's under the Model's own names (``named_modules``), so the words name the user's
    modules ("the LayerNorm `ln`", not `model.ln`) and its parameters are the Model's."""

    def __init__(self, model: torch.nn.Module, start: int, count: int = 1):
        super().__init__()
        self.model, self.start, self.count = model, start, count

    def named_modules(self, memo=None, prefix: str = "", remove_duplicate: bool = True):
        return self.model.named_modules(memo, prefix, remove_duplicate)

    def forward(self, *inputs):
        output = self.model(*inputs)
        if not isinstance(output, torch.Tensor) or output.dim() == 0:
            raise TypeError("the Model's output has no batch dimension to keep items of")
        return output[self.start : self.start + self.count]


def guarded(watch: Callable[[str], contextlib.AbstractContextManager] | None, purpose: str) -> Callable:
    """``run(what, fn, *args, **kwargs)``: ``fn(*args, **kwargs)``, one evaluation of the Model, inside ``watch(where)``
    (the worker reports it, so the timeout applies); any failure but our own is out of scope, naming what failed.
    ``purpose``: what the evaluation is for ("the analysis", "the tolerance")."""

    def run(what: str, fn, *args, **kwargs):
        with (watch or (lambda where: contextlib.nullcontext()))(f"Model.forward ({what}, for {purpose})"):
            try:
                return fn(*args, **kwargs)
            except OutOfScopeError:
                raise
            except torch.OutOfMemoryError as error:  # the analysis's copies, not the Model's fault
                raise AnalysisMemoryError(
                    f"the Model cannot be evaluated {what} at this size: the device ran out of memory "
                    f"({str(error)[:160]})"
                ) from None
            except Exception as error:
                raise OutOfScopeError(
                    f"the Model cannot be evaluated {what}: {type(error).__name__}: {str(error)[:300]}"
                ) from None

    return run


# Seeds of the evaluations that check whether a Model's random draws reach its output (``_draws_reach``).
_OTHER_SEEDS = (1, 2)


def checked_fp32(model: torch.nn.Module, inputs: Sequence) -> Evaluation:
    """The Model in plain fp32 through the interposer (its ops recorded; on a GPU cuDNN's and cuBLAS's TF32 off: plain
    fp32 is the baseline), checked to return floating-point values and to draw no random numbers that reach its
    output (dropout before a softmax over one element: the draws are made, the output is 1 whatever they are)."""
    try:
        with tf32(conv=False, matmul=False):
            as_fp32 = evaluate(model, inputs, Arithmetic(dtype=torch.float32))
    except TypeError as error:
        raise OutOfScopeError(str(error)) from None
    state = carried(model, lambda: _plain_call(model, inputs))
    if state:
        raise OutOfScopeError(
            f"the Model's output depends on what its previous call left in it ({named(state)}, changed by forward "
            "and read by the next call): each trial's output depends on the calls before it, which the analysis's "
            "evaluations of one trial do not repeat; pass that state as an input, or reset it in forward"
        )
    random = [o for o in as_fp32.ops if o.kind is OpKind.RANDOM]
    if random and _draws_reach(model, inputs, as_fp32.output):
        raise OutOfScopeError(
            f"the Model draws random numbers in forward ({describe_op(as_fp32.ops, random[0].index)}: "
            f"{random[0].name}) and its output changes with them: there is no one output; put dropout in eval mode "
            "or set p = 0"
        )
    output = as_fp32.output
    if not output.is_floating_point():
        raise OutOfScopeError(
            f"the Model returns {output.dtype} {tuple(output.shape)}, not floating-point values: integer outputs "
            "(argmax/argmin indices) are compared exactly, so no tolerance applies (atol 0); fpa explain judges a "
            "candidate's other pick among values that tie within the floor"
        )
    if output.numel() == 0:
        raise OutOfScopeError(f"the Model's output {tuple(output.shape)} is empty: there is nothing to compare")
    return as_fp32


def _draws_reach(model: torch.nn.Module, inputs: Sequence, output) -> bool:
    """Whether the Model's output depends on its random draws: evaluated again under other seeds (torch's generators
    as they were afterwards), it gives other bits. Where it gives the same bits every time, each evaluation of the
    analysis gives them too, draws and all."""
    if not isinstance(output, torch.Tensor):
        return True
    devices = [output.device.index or 0] if output.is_cuda else []
    for seed in _OTHER_SEEDS:
        with torch.random.fork_rng(devices=devices), tf32(conv=False, matmul=False):
            torch.manual_seed(seed)
            again = evaluate(model, inputs, Arithmetic(dtype=torch.float32)).output
        if not same_bits(again, output):
            return True
    return False


def _plain_call(model: torch.nn.Module, inputs: Sequence):
    """The Model called as the check calls it (inputs copied, no gradients), cuDNN's and cuBLAS's TF32 off."""
    with torch.no_grad(), tf32(conv=False, matmul=False):
        return model(*[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs])


def check_path(ops32: Sequence[OpRecord], ops64: Sequence[OpRecord]) -> None:
    """Out of scope where the forward takes another path in fp64 than in fp32 (the ops that compute, in order,
    whatever copies their memory layout needs): control flow that depends on the values."""
    path32 = [o.name for o in ops32 if o.name not in DATA_MOVES]
    path64 = [o.name for o in ops64 if o.name not in DATA_MOVES]
    if path32 != path64:
        first = next(i for i, (a, b) in enumerate(zip([*path32, "(end)"], [*path64, "(end)"], strict=False)) if a != b)
        at32, at64 = [*path32, "(end)"][first], [*path64, "(end)"][first]
        raise OutOfScopeError(
            f"the Model's forward takes another path in fp64 than in fp32 (computing op {first}: {at32} in fp32, "
            f"{at64} in fp64): control flow that depends on the values cannot be re-created"
        )
