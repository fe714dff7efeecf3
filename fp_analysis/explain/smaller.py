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

import types

from ..errors import AnalysisMemoryError
from ..numerics.memory import available_bytes, format_bytes
from ..run.usercode import UserFile

__all__ = ["described", "input_sizes", "shrink"]

_HEADROOM = 0.8  # of the memory the device has: allocator slack and the libraries' own (numerics.memory)


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
    first) until ``largest`` elements, scaled as they are, fit ``copies`` fp64 copies in what ``device`` has; set
    them in its module and return {name: [was, now]}. Raises ``why`` where nothing can be halved, or halving all
    still does not fit."""
    sizes = input_sizes(problem)
    free = available_bytes(device)
    if not sizes or not free:
        raise why
    budget = _HEADROOM * free
    now, scale = dict(sizes), 1.0
    order = sorted(sizes, key=lambda name: (sizes[name] != batch, -sizes[name]))
    while largest * scale * copies * 8 > budget:
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


def described(changed: dict) -> str:
    """The note that says what the smaller instance is."""
    sizes = ", ".join(f"{name} {was} → {now}" for name, (was, now) in changed.items())
    return (
        f"measured on a smaller instance of the problem ({sizes}: the sizes its get_inputs reads, halved until its "
        "fp64 analysis fits the device; the Model itself as built): a sum over the whole tensor has fewer terms "
        "here, so at full size it may need more"
    )
