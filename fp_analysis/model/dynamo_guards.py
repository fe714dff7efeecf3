"""Keep torch._dynamo out of the interposer's process: the decompositions' guards against torch.compile, resolved.

PyTorch wraps its reference implementations (``torch._refs``), its decompositions and the Python kernels of its
prims (``prims.var``, ``prims.sum``: custom ops) in ``torch._compile._disable_dynamo``, a guard that keeps
torch.compile from tracing into them. The guard imports ``torch._dynamo`` on its first call, to build the disabled
function, and caches it on the wrapped function as ``__dynamo_disable``. That import is most of a small analysis's
time: 1.9 s on this repository's CPU machine, more on the H200 host whose imports are slower (a BatchNorm Model's
analysis spent it on the first ``var_mean`` inside batch norm's decomposition; experiments/PERF_NOTES.md).

The interposer evaluates Models eagerly, op by op, and nothing in an analysis's process is compiled, so there is
nothing for the guard to protect: ``resolve_dynamo_guards`` stores each guarded function itself as its own cached
"disabled" form, so the guard calls it straight away. A guard this misses still works (it imports torch._dynamo
on its first call, as before), and a guard whose form is not the one expected is left as it is;
tests/unit/test_dynamo_guards.py checks that the analyses of norms, softmax and losses no longer import it, so a
torch upgrade that moves the guard is noticed. Run only in our own analysis processes (the worker), where the
problem's Model runs eagerly too; the solution's code runs in a process of its own (``fp_analysis.run``), which
never resolves them, and may compile what it likes.
"""

from __future__ import annotations

import sys
import types

import torch
import torch._compile
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["EagerDispatchMode", "resolve_dynamo_guards"]

_GUARD_CODE = torch._compile._disable_dynamo(lambda: None).__code__  # the guard's ``inner``, the same code object
_CACHE_ATTRIBUTE = "__dynamo_disable"  # where the guard caches its disabled function (torch/_compile.py)
# The modules whose functions the interposer's decompositions reach: references, decompositions, prims.
_MODULE_PREFIXES = ("torch._refs", "torch._decomp", "torch._prims", "torch._prims_common")
_resolved = False


def resolve_dynamo_guards() -> None:
    """Resolve every ``_disable_dynamo`` guard the decompositions reach (module docstring); once per process."""
    global _resolved
    if _resolved:
        return
    _resolved = True
    for name, module in list(sys.modules.items()):
        if module is not None and name.startswith(_MODULE_PREFIXES):
            for value in list(vars(module).values()):
                _resolve(value)
    from torch._decomp import decomposition_table
    from torch._library.custom_ops import OPDEFS

    for function in list(decomposition_table.values()):
        _resolve(function)
    for opdef in list(OPDEFS.values()):  # the prims' Python kernels, one per device type
        for function in list(getattr(opdef, "_backend_fns", {}).values()):
            _resolve(function)


def _resolve(value: object) -> None:
    """Cache the guarded function as its own disabled form, where ``value`` is a guard (or a wrapper of one)."""
    while isinstance(value, types.FunctionType):
        if value.__code__ is _GUARD_CODE and value.__closure__:
            try:
                guarded = value.__closure__[value.__code__.co_freevars.index("fn")].cell_contents
                if getattr(guarded, _CACHE_ATTRIBUTE, None) is None:
                    setattr(guarded, _CACHE_ATTRIBUTE, guarded)
            except (ValueError, AttributeError, TypeError):  # another torch's guard: it imports dynamo, as before
                pass
            return
        value = getattr(value, "__wrapped__", None)


class EagerDispatchMode(TorchDispatchMode):
    """A dispatch mode of our analysis, whose ``__torch_dispatch__`` PyTorch leaves unguarded.

    ``TorchDispatchMode.__init_subclass__`` wraps a mode's ``__torch_dispatch__`` in the guard above unless
    ``_should_skip_dynamo`` says not to; its first call would import torch._dynamo (module docstring). Our modes
    run Models eagerly, op by op, so there is no compiled frame to protect.
    """

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False
