"""What a Model keeps between calls: its buffers, its tensors held as attributes (alone or in a list, tuple or dict),
its numbers, and its parameters where a call writes them (KernelBench's vanilla RNNs keep their hidden state as
``self.hidden`` and reassign it in ``forward``; a BatchNorm in training mode updates its running statistics on every
call; a Model may count its calls, or keep its state in a Parameter that does not require grad).

The analysis evaluates the Model many times on one trial's inputs — in fp64, under rewrites, in Monte-Carlo runs —
and each evaluation must start where the trial did. One that left a float64 hidden state (an fp64 evaluation
reassigning ``self.hidden``) made the next fp32 evaluation fail or take another path. So every evaluation keeps the
state as it found it (``kept``), and a Model whose output depends on what its previous call left (the state carried
from call to call, ``carried``) is named out of scope: the trials' outputs then depend on the order of the calls,
which the analysis's evaluations do not repeat.

A tensor of the state larger than ``_COPIED_BYTES`` (a precomputed table) is not copied on every evaluation: one that
a call replaces is put back, one a call writes in place is not (its in-place writes bump its version: ``carried``
names it where the output depends on them). Parameters are the weights, which a call reads and does not write: an
evaluation copies only those that do not require grad (state kept as a Parameter), and holds the others by identity
and version; ``carried``, once per Model, copies them all, so that one a call writes is named where the next call
reads it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence

import torch

__all__ = ["attribute_tensors", "carried", "kept", "named", "same_bits", "state_storages"]

# The largest tensor of a Model's state copied before each evaluation (bytes): above, identity and version only.
_COPIED_BYTES = 1 << 24
_NUMBERS = (bool, int, float)


class _Slot:
    """Where a value of the state is held: a module's buffer or attribute, or an item of a list, tuple or dict held as
    an attribute; ``where`` names it (``self.hidden``, ``self.h[0]``)."""

    def __init__(self, get: Callable[[], object], put: Callable[[object], None], where: str):
        self.get, self.put, self.where = get, put, where


class _HeldTensor:
    """A tensor of the state: the one held when the state was taken, its version then, and (up to ``_COPIED_BYTES``)
    a copy of its values. Changed where another is held now, or it was written (other bits; or, uncopied, another
    version: a BatchNorm's kernel writes its running statistics without bumping it, so bits are compared where
    they can be)."""

    def __init__(self, slot: _Slot, copied: bool = True):
        self.slot = slot
        self.tensor = slot.get()
        self.version = self.tensor._version
        small = self.tensor.numel() * self.tensor.element_size() <= _COPIED_BYTES
        self.values = self.tensor.detach().clone() if copied and small else None

    def changed(self) -> bool:
        now = self.slot.get()
        if now is not self.tensor or not isinstance(now, torch.Tensor):
            return True
        return now._version != self.version if self.values is None else not same_bits(now, self.values)

    def restore(self) -> None:
        """Hold the tensor held before, with the values it had (written back in place, so that whatever else holds it
        sees them too; a copy of them where it was resized or retyped in place)."""
        tensor, values = self.tensor, self.values
        if values is not None:
            if (tensor.shape, tensor.dtype, tensor.device) == (values.shape, values.dtype, values.device):
                with torch.no_grad():
                    tensor.copy_(values)
            else:
                self.tensor = tensor = values.clone()
        self.slot.put(tensor)
        self.version = tensor._version


class _HeldValue:
    """A number of the state, or a list, tuple or dict held as an attribute (the object and its items; its tensors
    are held apart)."""

    def __init__(self, slot: _Slot):
        self.slot = slot
        self.value = slot.get()
        self.items = _items(self.value)

    def changed(self) -> bool:
        now = self.slot.get()
        if isinstance(self.value, _NUMBERS):
            return type(now) is not type(self.value) or now != self.value
        return now is not self.value or _items(now) != self.items

    def restore(self) -> None:
        if isinstance(self.value, list):
            self.value[:] = [same.item for _, same in self.items]
        elif isinstance(self.value, dict):
            self.value.clear()
            self.value.update({key: same.item for key, same in self.items})
        self.slot.put(self.value)


def _items(value) -> list | None:
    """A container's items as (key, object) pairs, compared by identity; None for a number."""
    if isinstance(value, dict):
        return [(key, _Same(item)) for key, item in value.items()]
    if isinstance(value, (list, tuple)):
        return [(index, _Same(item)) for index, item in enumerate(value)]
    return None


class _Same:
    """An object compared by identity (a tensor's ``==`` is elementwise)."""

    def __init__(self, item):
        self.item = item

    def __eq__(self, other) -> bool:
        return isinstance(other, _Same) and other.item is self.item

    __hash__ = None


class _State:
    """The state of a Model: every buffer, tensor attribute (alone or in a list, tuple or dict) and number attribute
    of its modules, and its parameters: copied where they do not require grad or ``every_parameter`` is set, else held
    by identity and version (module docstring)."""

    def __init__(self, model: torch.nn.Module, every_parameter: bool = False):
        self.held: list[_HeldTensor | _HeldValue] = []
        for prefix, module in model.named_modules():
            where = f"{prefix}." if prefix else "self."
            for name, buffer in module._buffers.items():
                if buffer is not None:
                    self.held.append(_HeldTensor(_buffer_slot(module, name, where + name)))
            for name, parameter in module._parameters.items():
                if parameter is not None:
                    slot = _Slot(_getter(module._parameters, name), _setter(module._parameters, name), where + name)
                    self.held.append(_HeldTensor(slot, copied=every_parameter or not parameter.requires_grad))
            for name, value in list(module.__dict__.items()):
                if name.startswith("_") or name == "training" or isinstance(value, torch.nn.Parameter):
                    continue
                slot = _attribute_slot(module, name, where + name)
                if isinstance(value, torch.Tensor):
                    self.held.append(_HeldTensor(slot))
                elif isinstance(value, _NUMBERS):
                    self.held.append(_HeldValue(slot))
                elif isinstance(value, (list, tuple, dict)) and any(isinstance(v, torch.Tensor) for v in
                                                                       _values(value)):  # fmt: skip
                    self.held.append(_HeldValue(slot))
                    self.held += [_HeldTensor(_item_slot(value, key, f"{where}{name}[{key!r}]"))
                                  for key, item in _keyed(value) if isinstance(item, torch.Tensor)]  # fmt: skip

    def changed(self) -> list:
        return [held for held in self.held if held.changed()]

    def restore(self) -> None:
        for held in self.changed():  # containers first (as listed): their tensors are then put back in them
            held.restore()


def _buffer_slot(module: torch.nn.Module, name: str, where: str) -> _Slot:
    return _Slot(_getter(module._buffers, name), _setter(module._buffers, name), where)


def _getter(table: dict, name: str) -> Callable[[], object]:
    return lambda: table.get(name)


def _setter(table: dict, name: str) -> Callable[[object], None]:
    return lambda value: table.__setitem__(name, value)


def _attribute_slot(module: torch.nn.Module, name: str, where: str) -> _Slot:
    return _Slot(_getter(module.__dict__, name), _setter(module.__dict__, name), where)


def _item_slot(container, key, where: str) -> _Slot:
    def put(value):
        if not isinstance(container, tuple):  # a tuple's items cannot be replaced: its tensors are written back
            container[key] = value

    return _Slot(lambda: _get(container, key), put, where)


def _get(container, key):
    try:
        return container[key]
    except (IndexError, KeyError):
        return None


def _keyed(value) -> list[tuple]:
    return list(value.items()) if isinstance(value, dict) else list(enumerate(value))


def _values(value) -> list:
    return list(value.values()) if isinstance(value, dict) else list(value)


def same_bits(a, b: torch.Tensor) -> bool:
    """Whether ``a`` is a tensor of ``b``'s dtype, shape and device with the same bits (0-d too; NaNs alike)."""
    if not isinstance(a, torch.Tensor) or (a.dtype, a.shape, a.device) != (b.dtype, b.shape, b.device):
        return False
    try:
        return torch.equal(a.detach().reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8))
    except RuntimeError:  # a layout without a byte view (sparse, quantized): told changed, and put back
        return False


def attribute_tensors(model: torch.nn.Module) -> list[torch.Tensor]:
    """The tensors the Model's modules hold as attributes (``self.hidden``; in a list, tuple or dict too), each once."""
    found = {}
    for module in model.modules():
        for name, value in module.__dict__.items():
            if name.startswith("_") or isinstance(value, torch.nn.Parameter):
                continue
            candidates = [value] if isinstance(value, torch.Tensor) else _values(value) if isinstance(
                value, (list, tuple, dict)) else []  # fmt: skip
            found |= {id(t): t for t in candidates if isinstance(t, torch.Tensor)}
    return list(found.values())


def state_storages(model: torch.nn.Module) -> set[int]:
    """The addresses of the storages the Model holds (parameters, buffers, tensor attributes): an output that is one
    of them changes when they are put back."""
    held = [*model.parameters(), *model.buffers(), *attribute_tensors(model)]
    return {t.untyped_storage().data_ptr() for t in held if t.untyped_storage().nbytes()}


@contextlib.contextmanager
def kept(model: torch.nn.Module) -> Iterator[None]:
    """Run the block, then put back whatever of the Model's state it changed (replaced or written in place)."""
    state = _State(model)
    try:
        yield
    finally:
        state.restore()


def carried(model: torch.nn.Module, call: Callable[[], torch.Tensor]) -> list[str]:
    """The Model's state that one ``call`` (the Model on a trial's inputs) changes and that changes the next call's
    output, by name (``self.hidden``); [] where a call changes none, or none that the next reads (a BatchNorm's running
    statistics in training mode; a hidden state each call overwrites from its inputs). Told apart from a Model that
    is not deterministic: the next call's output differs from the first, and a call from the first's state again
    gives the first's bits. The state is as it was afterwards."""
    state = _State(model, every_parameter=True)
    try:
        first = call()
        changed = state.changed()
        if not changed:
            return []
        second = call()
        if same_bits(second, first):
            return []
        state.restore()
        return [held.slot.where for held in changed] if same_bits(call(), first) else []
    finally:
        state.restore()


def named(found: Sequence[str]) -> str:
    """State's names as a sentence lists them: the first four, and how many more."""
    return ", ".join(found[:4]) + (f" and {len(found) - 4} more" if len(found) > 4 else "")
