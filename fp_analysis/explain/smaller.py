"""A smaller instance of a KernelBench problem, for a Model whose fp64 analysis does not fit the device at the size
the problem gives: the same Model (``get_init_inputs`` untouched) on smaller inputs, made by halving the sizes
``get_inputs`` reads from the problem's module.

KernelBench's problems size their inputs with module-level ints (``batch_size``, ``dim1``...) that ``get_inputs``
reads by name. Those it reads and ``get_init_inputs`` does not leave the Model as it is built — its weights, its
channels — and change only how much data it sees: the batch first (the structure of each item kept), then the
largest of the others. Each is halved until the largest input or output, at ``copies`` fp64 copies, fits what the
device has. What the smaller instance measures is said beside it: a sum over the whole tensor has fewer terms
there, so the full size may need more than it shows.
"""

from __future__ import annotations

import dataclasses
import gc
import types
from collections.abc import Callable

import torch

from ..errors import AnalysisMemoryError, Fate, OutOfScopeError, ParameterError, Side, UserCodeError
from ..numerics.memory import available_bytes, format_bytes, require
from ..run.usercode import UserFile

__all__ = [
    "FP64_COPIES", "Sizes", "described", "input_sizes", "largest_elements", "on_fitting_instance", "require_fp64_room",
    "shrink", "sizes_words",
]  # fmt: skip

_HEADROOM = 0.8  # of the memory the device has: allocator slack and the libraries' own (numerics.memory)
# fp64 copies of its largest tensor that an analysis of the whole Model is planned to hold (the H200 held 8.5 of them
# for a Frobenius norm over 1.9 G elements when it ran out, experiments/results/tolerance_h200.json at 9a3a017); a
# Model that does not fit is analysed on a smaller instance, tried this many times.
FP64_COPIES, _SHRINK_ATTEMPTS = 16, 3


@dataclasses.dataclass
class Sizes:
    """What an attempt saw of the problem at its size, for the next attempt's halving: the problem's file, the
    output's first dimension (the batch) and the element count of the largest input or output."""

    problem: UserFile | None = None
    batch: int = 1
    largest: int = 0

    def saw(self, problem: UserFile, inputs, reference: torch.Tensor | None = None) -> None:
        """What ``problem``'s inputs and (once it has run) reference output are; before the reference has run, the
        first input's first dimension stands for the batch."""
        shaped = reference if reference is not None else next((t for t in _tensors(inputs) if t.dim()), None)
        self.problem = problem
        self.batch = shaped.shape[0] if shaped is not None and shaped.dim() else 1
        self.largest = largest_elements(inputs, reference)


def _tensors(values) -> list[torch.Tensor]:
    return [t for t in values if isinstance(t, torch.Tensor)]


def largest_elements(inputs, output: torch.Tensor | None = None) -> int:
    """The element count of the largest of ``inputs`` and ``output`` (0 where there is no tensor)."""
    return max([t.numel() for t in _tensors(inputs)] + ([output.numel()] if output is not None else [0]))


def require_fp64_room(inputs, output: torch.Tensor, what: str) -> None:
    """AnalysisMemoryError where ``FP64_COPIES`` fp64 copies of the largest of ``inputs`` and ``output`` (what each
    evaluation of the whole Model holds: the inputs' copies, the output, the ops' results and noise) do not fit the
    output's device: a smaller instance is analysed instead, rather than minutes of evaluations ending out of memory.
    ``what``: the analysis, in words, for the message."""
    needed = FP64_COPIES * 8 * largest_elements(inputs, output)
    try:
        require({"fp64 copies of the largest tensor, in each evaluation": needed}, what, output.device.type)
    except ParameterError as error:  # not the user's size to change
        raise AnalysisMemoryError(str(error)) from None


# How the user's code may end on a smaller instance for a reason of size (sizes written in, a shape it assumes; a
# reply past the size the smaller output allows, the full size's output returned, is a malformed reply); the rest
# (forking, edited files, closed channels) are what it does at any size: its failure still.
_SIZE_FATES = frozenset({Fate.RAISED, Fate.EXITED, Fate.KILLED, Fate.TIMED_OUT, Fate.BAD_OUTPUT, Fate.MALFORMED_REPLY})


def on_fitting_instance(
    device: torch.device, attempt: Callable[[int, Sizes], dict], report: Callable[[str], None]
) -> tuple[dict, dict]:
    """(``attempt``'s result, the sizes changed {name: [was, now]}): ``attempt(n, sizes)`` at the problem's own size
    (n = 0), then, each time it raises ``AnalysisMemoryError`` or the device runs out of memory (the analysis's own
    copies, or the user's code beside them: never the user's failure), on a smaller instance (``shrink`` of the
    problem ``sizes`` saw at the last try). ``report`` is told what each smaller instance is. Raises the memory
    error after ``_SHRINK_ATTEMPTS`` halvings, or where nothing can be halved. The user's code failing on a smaller
    instance as code fails for a reason of size (``_SIZE_FATES``) is out of scope, not its failure: the instance is
    ours (a kernel may have the problem's sizes written in)."""
    smaller: dict = {}
    for n in range(_SHRINK_ATTEMPTS + 1):
        sizes = Sizes()
        try:
            return attempt(n, sizes), smaller
        except (AnalysisMemoryError, torch.OutOfMemoryError, UserCodeError) as error:
            why = memory_error(error, device)
            if why is None and (not n or error.fate not in _SIZE_FATES):
                raise
            if why is None:
                raise OutOfScopeError(
                    f"the problem's fp64 analysis does not fit the device at its size, and on the smaller instance "
                    f"made for it ({sizes_words(smaller)}) {error.where} failed: {str(error)[:300]}"
                ) from None
            del error  # its frames would hold the attempt's tensors
            if n == _SHRINK_ATTEMPTS or sizes.problem is None:
                raise why from None
        gc.collect()  # the memory of the attempt that did not fit, given back before the next
        if device.type == "cuda":
            torch.cuda.empty_cache()
        halved = shrink(sizes.problem, sizes.batch, sizes.largest, FP64_COPIES, device.type, why)
        for name, (was, now) in halved.items():
            smaller[name] = [smaller.get(name, [was])[0], now]
        report(described(smaller))
    raise AssertionError("unreachable")  # the loop returns or raises


def memory_error(error: Exception, device: torch.device) -> AnalysisMemoryError | None:
    """The memory error ``error`` is, as an AnalysisMemoryError (its message alone), or None where it is not one.
    The problem's code running out of device memory counts (it ran beside our copies of its tensors). The
    solution's does not make a smaller instance: a solution could raise it on purpose, to be analysed where it
    behaves; on a GPU it is out of scope (OutOfScopeError), neither its failure (our copies took memory beside it)
    nor explained. On a CPU torch raises no OutOfMemoryError of its own (its allocator's failure is a RuntimeError):
    one there is the solution's, raised by its code, and its failure (exit 3), as any exception it raises."""
    if not isinstance(error, UserCodeError):
        return AnalysisMemoryError(str(error)[:400])
    if error.details.get("exception") != "OutOfMemoryError":
        return None
    if error.side is Side.SOLUTION and device.type != "cuda":
        return None
    if error.side is Side.SOLUTION:
        raise OutOfScopeError(
            f"{error.where} ran out of device memory beside fpa's copies of each trial's tensors ({str(error)[:200]}): "
            "fpa cannot run the check at this size, and a solution out of memory is not analysed on a smaller instance"
        ) from None
    return AnalysisMemoryError(f"{error.where} ran out of device memory beside fpa's copies: {error}"[:400])


def input_sizes(problem: UserFile) -> dict[str, int]:
    """The module-level ints (2 or more) that ``get_inputs`` reads by name, in its code or code nested in it, and
    ``get_init_inputs`` does not: the sizes of the inputs alone."""
    module = problem.module
    read = _names(module.get_inputs.__code__) - _names(module.get_init_inputs.__code__)
    sizes = {}
    for name in sorted(read):
        value = getattr(module, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 2:
            sizes[name] = value
    return sizes


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names(constant)
    return names


def shrink(problem: UserFile, batch: int, largest: int, copies: int, device: str, why: AnalysisMemoryError) -> dict:
    """Halve ``problem``'s input sizes (``input_sizes``; the one equal to ``batch``, the output's first dimension,
    first), at least once (the size it had ran out of memory, whatever the estimate says), until ``largest``
    elements, scaled as they are, fit ``copies`` fp64 copies in what ``device`` has; set
    them in its module and return {name: [was, now]}. Raises ``why`` where nothing can be halved, or halving all
    still does not fit."""
    sizes = input_sizes(problem)
    free = available_bytes(device)
    if not sizes or not free:
        raise why
    budget = _HEADROOM * free
    now, scale = dict(sizes), 1.0
    order = sorted(sizes, key=lambda name: (sizes[name] != batch, -sizes[name]))
    while scale == 1.0 or largest * scale * copies * 8 > budget:  # at least once: this size ran out
        name = next((n for n in order if now[n] >= 2), None)
        if name is None:
            raise AnalysisMemoryError(
                f"{why} — and the problem's input sizes ({', '.join(sizes)}) all halved down to 1 still need "
                f"{format_bytes(largest * scale * copies * 8)} of {format_bytes(budget)}"
            ) from None
        scale *= (now[name] // 2) / now[name]
        now[name] //= 2
    changed = {name: [sizes[name], now[name]] for name in sizes if now[name] != sizes[name]}
    for name, (_, value) in changed.items():
        setattr(problem.module, name, value)
    return changed


def described(changed: dict, done: str = "measured") -> str:
    """The note that says what the smaller instance is (``done``: what was done on it)."""
    return (
        f"{done} on a smaller instance of the problem ({sizes_words(changed)}: the sizes its get_inputs reads, "
        "halved until its fp64 analysis fits the device; the Model itself as built): a sum over the whole tensor has "
        "fewer terms here than at full size, so it rounds less; at full size a tolerance may need to be larger"
    )


def sizes_words(changed: dict) -> str:
    """The sizes changed, in words: "batch_size 112 → 28"."""
    return ", ".join(f"{name} {was} → {now}" for name, (was, now) in changed.items())
