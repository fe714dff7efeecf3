"""What a Model keeps between calls besides its parameters: its buffers and its tensors held as plain attributes
(KernelBench's vanilla RNNs keep their hidden state as ``self.hidden`` and reassign it in ``forward``; a BatchNorm in
training mode updates its running statistics on every call).

The analysis evaluates the Model many times on one trial's inputs — in fp64, under rewrites, in Monte-Carlo runs —
and each evaluation must start where the trial did. One that left a float64 hidden state (an fp64 evaluation
reassigning ``self.hidden``) made the next fp32 evaluation fail or take another path. So every evaluation keeps the
state as it found it (``kept``), and a Model whose output depends on what its previous call left (the state carried
from call to call, ``carried``) is named out of scope: the trials' outputs then depend on the order of the calls,
which the analysis's evaluations do not repeat.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

import torch

__all__ = ["attribute_tensors", "carried", "kept", "named"]


class _Held:
    """One tensor of a Model's state: where it is (a buffer or an attribute of a module), the tensor held when the
    state was taken, and a copy of its values. Changed where another tensor is held now, or other bits (compared, not
    told by the version counter: a BatchNorm's kernel writes its running statistics without bumping it)."""

    def __init__(self, module: torch.nn.Module, name: str, where: str, buffer: bool):
        self.module, self.name, self.where, self.buffer = module, name, where, buffer
        self.tensor = self._current()
        self.values = self.tensor.detach().clone()

    def _current(self):
        return self.module._buffers.get(self.name) if self.buffer else self.module.__dict__.get(self.name)

    def changed(self) -> bool:
        now = self._current()
        return now is not self.tensor or not _same_bits(now, self.values)

    def restore(self) -> None:
        """Hold the tensor held before, with the values it had (written back in place: whatever else holds it sees
        them too)."""
        try:
            with torch.no_grad():
                self.tensor.copy_(self.values)
        except RuntimeError:  # resized or made another dtype in place: a copy of the values instead
            self.tensor = self.values.clone()
        if self.buffer:
            self.module._buffers[self.name] = self.tensor
        else:
            self.module.__dict__[self.name] = self.tensor


def _same_bits(a, b: torch.Tensor) -> bool:
    if not isinstance(a, torch.Tensor) or a.dtype != b.dtype or a.shape != b.shape or a.device != b.device:
        return False
    try:
        return torch.equal(a.detach().reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8))
    except RuntimeError:  # a layout without a byte view (sparse, quantized): told changed, and put back
        return False


class _State:
    """The state of a Model: every buffer and tensor attribute of its modules (not its parameters)."""

    def __init__(self, model: torch.nn.Module):
        self.held: list[_Held] = []
        for prefix, module in model.named_modules():
            where = f"{prefix}." if prefix else "self."
            for name, buffer in module._buffers.items():
                if buffer is not None:
                    self.held.append(_Held(module, name, where + name, buffer=True))
            for name in _attributes(module):
                self.held.append(_Held(module, name, where + name, buffer=False))

    def changed(self) -> list[_Held]:
        return [held for held in self.held if held.changed()]

    def restore(self) -> None:
        for held in self.changed():
            held.restore()


def _attributes(module: torch.nn.Module) -> list[str]:
    """The names of a module's tensors held as plain attributes (not parameters, not buffers)."""
    return [name for name, value in module.__dict__.items()
            if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter)]  # fmt: skip


def attribute_tensors(model: torch.nn.Module) -> list[torch.Tensor]:
    """The tensors the Model's modules hold as plain attributes (``self.hidden``), each once."""
    found = {id(module.__dict__[name]): module.__dict__[name] for module in model.modules() for name in
             _attributes(module)}  # fmt: skip
    return list(found.values())


@contextlib.contextmanager
def kept(model: torch.nn.Module) -> Iterator[None]:
    """Run the block, then put back whatever of the Model's state it changed (reassigned or written in place)."""
    state = _State(model)
    try:
        yield
    finally:
        state.restore()


def carried(model: torch.nn.Module, call: Callable[[], torch.Tensor], same: Callable[[object, object], bool]) -> list[
        str]:  # fmt: skip
    """The Model's state that one ``call`` (the Model on a trial's inputs) changes and that changes the next call's
    output, by name (``self.hidden``); [] where a call changes none, or none that the next reads (a BatchNorm's running
    statistics in training mode; a hidden state each call overwrites from its inputs). Told apart from a Model that
    is not deterministic: the next call's output differs from the first, and a call from the first's state again
    gives the first's bits (``same``). The state is as it was afterwards."""
    state = _State(model)
    try:
        first = call()
        changed = state.changed()
        if not changed:
            return []
        second = call()
        if same(second, first):
            return []
        state.restore()
        return [held.where for held in changed] if same(call(), first) else []
    finally:
        state.restore()


def named(found: Sequence[str]) -> str:
    """State's names as a sentence lists them: the first four, and how many more."""
    return ", ".join(found[:4]) + (f" and {len(found) - 4} more" if len(found) > 4 else "")
