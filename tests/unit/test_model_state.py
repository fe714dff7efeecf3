"""What a Model keeps between calls (``model.state``): KernelBench's vanilla RNNs hold their hidden state as a tensor
attribute and reassign it in ``forward``. Each evaluation of the analysis starts where the trial did (an fp64 one
left a float64 hidden state, and the next fp32 one failed or took another path: exit 2 naming a dtype, or a KeyError),
a write in place into the state is seen in fp64 too (it went to a copy, and the fp64 truth read the state unwritten:
a floor millions of σ wide, a swapped concatenation explained), and a Model whose output depends on what its previous
call left is out of scope, named (a held-out set of level-3 networks, 2026-12-05)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fp_analysis.errors import OutOfScopeError
from fp_analysis.model.engine import Effort, analyse_model
from fp_analysis.model.state import carried, kept

BATCH, FEATURES, HIDDEN, OUT = 4, 6, 6, 3


class CarriedRNN(nn.Module):
    """The hidden state carried from call to call."""

    def __init__(self, swapped: bool = False):
        super().__init__()
        self.hidden = torch.randn(BATCH, HIDDEN)
        self.i2h = nn.Linear(FEATURES + HIDDEN, HIDDEN)
        self.h2o = nn.Linear(HIDDEN, OUT)
        self.swapped = swapped

    def forward(self, x, initial_hidden=None):
        if initial_hidden is not None:
            self.hidden.copy_(initial_hidden)  # then what the call reads is its input
        self.hidden = self.hidden.to(x.dtype)
        parts = (self.hidden, x) if self.swapped else (x, self.hidden)
        self.hidden = torch.tanh(self.i2h(torch.cat(parts, dim=1)))
        return self.h2o(self.hidden)


def _built(swapped: bool = False) -> CarriedRNN:
    torch.manual_seed(0)
    return CarriedRNN(swapped)


def _inputs(with_hidden: bool) -> list[torch.Tensor]:
    torch.manual_seed(1)
    return [torch.rand(BATCH, FEATURES), *([torch.rand(BATCH, HIDDEN)] if with_hidden else [])]


def test_a_state_each_call_overwrites_from_its_inputs_is_analysed_and_left_as_it_was():
    model, inputs = _built(), _inputs(with_hidden=True)
    with torch.no_grad():
        reference = model(*inputs)
        swapped = _built(swapped=True)(*inputs)
    hidden = model.hidden
    assert analyse_model(model, inputs, reference, reference.clone(), effort=Effort(runs=4)).verdict == "identical"
    bug = analyse_model(model, inputs, reference, swapped, effort=Effort(runs=4))
    assert bug.verdict == "bug", bug.causes[0].evidence
    assert model.hidden is hidden and model.hidden.dtype == torch.float32  # the analysis changed none of it


def test_a_state_carried_from_call_to_call_is_out_of_scope_and_named():
    model, inputs = _built(), _inputs(with_hidden=False)
    with torch.no_grad():
        reference = model(*inputs)
    with pytest.raises(OutOfScopeError, match=r"what its previous call left in it \(self\.hidden"):
        analyse_model(model, inputs, reference, reference.clone(), effort=Effort(runs=4))


def test_running_statistics_change_but_are_not_carried_and_every_change_is_put_back():
    norm = nn.BatchNorm1d(FEATURES)  # training mode: the running statistics change on every call, unread
    x = torch.randn(BATCH, FEATURES)
    with torch.no_grad():
        assert carried(norm, lambda: norm(x.clone())) == []
        before = norm.running_mean.clone()
        with kept(norm):
            norm(x)
            assert not torch.equal(norm.running_mean, before)
    assert torch.equal(norm.running_mean, before)
    model = _built()
    with torch.no_grad():
        assert carried(model, lambda: model(_inputs(with_hidden=False)[0])) == ["self.hidden"]


class ListState(nn.Module):
    """The hidden state in a list, replaced item by item."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(FEATURES, FEATURES)
        self.states = [torch.zeros(BATCH, FEATURES)]

    def forward(self, x):
        self.states[0] = torch.tanh(self.linear(x) + self.states[0])
        return self.states[0] * 2


class Counter(nn.Module):
    """Its output scaled by how many times it was called."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(FEATURES, FEATURES)
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        return self.linear(x) * self.calls


class WritesItsBuffer(nn.Module):
    """Its output is a buffer it writes in place and returns."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(FEATURES, FEATURES)
        self.register_buffer("out", torch.zeros(BATCH, FEATURES))

    def forward(self, x):
        self.out.copy_(torch.tanh(self.linear(x)))
        return self.out


@pytest.mark.parametrize(("built", "named"), [(ListState, r"self\.states\[0\]"), (Counter, r"self\.calls")])
def test_state_in_a_list_or_a_number_is_named_too(built, named):
    torch.manual_seed(0)
    model, x = built(), torch.randn(BATCH, FEATURES)
    with torch.no_grad():
        reference = model(x)
    with pytest.raises(OutOfScopeError, match=named):
        analyse_model(model, [x], reference, reference.clone(), effort=Effort(runs=4))


def test_an_output_that_is_the_models_own_buffer_is_judged_as_computed():
    """The evaluation's output is copied before the state is put back (and, in fp64, the buffer its float32 self):
    otherwise the fp64 truth was the float32 reference, and a legitimate candidate a bug (a review, 2026-12-05)."""
    torch.manual_seed(0)
    model, x = WritesItsBuffer(), torch.randn(BATCH, FEATURES)
    with torch.no_grad():
        reference = model(x).clone()
        weight, bias = model.linear.weight.double(), model.linear.bias.double()
        exact = torch.tanh(x.double() @ weight.t() + bias).float()  # a candidate closer to fp64 than the reference
    assert not torch.equal(exact, reference)  # else the test shows nothing
    verdict = analyse_model(model, [x], reference, exact, effort=Effort(runs=4)).verdict
    assert verdict != "bug", verdict


class ParameterState(nn.Module):
    """The hidden state kept in a Parameter (requires_grad False) and written in place: a Parameter is not a buffer,
    but a call that writes one leaves state behind all the same."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(FEATURES + HIDDEN, HIDDEN)
        self.hidden = nn.Parameter(torch.randn(BATCH, HIDDEN), requires_grad=False)

    def forward(self, x):
        new = torch.tanh(self.linear(torch.cat((x, self.hidden.to(x.dtype)), dim=1)))
        with torch.no_grad():
            self.hidden.copy_(new)
        return new


class ParameterTally(nn.Module):
    """Counts its calls in a Parameter its output does not read."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(FEATURES, FEATURES)
        self.calls = nn.Parameter(torch.zeros(()), requires_grad=False)

    def forward(self, x):
        with torch.no_grad():
            self.calls.add_(1)
        return torch.tanh(self.linear(x))


def test_state_kept_in_a_parameter_is_named_where_the_next_call_reads_it():
    torch.manual_seed(0)
    model, x = ParameterState(), torch.randn(BATCH, FEATURES)
    with torch.no_grad():
        reference = model(x)
    with pytest.raises(OutOfScopeError, match=r"what its previous call left in it \(self\.hidden"):
        analyse_model(model, [x], reference, reference.clone(), effort=Effort(runs=4))


def test_a_parameter_written_but_not_read_is_analysed_and_put_back():
    torch.manual_seed(0)
    model, x = ParameterTally(), torch.randn(BATCH, FEATURES)
    with torch.no_grad():
        reference = model(x)
    calls = model.calls.clone()
    assert analyse_model(model, [x], reference, reference.clone(), effort=Effort(runs=4)).verdict == "identical"
    assert torch.equal(model.calls, calls)  # every evaluation's write put back
