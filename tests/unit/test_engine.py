"""The whole-Model engine on the team's own suite: every conv kind with every op family after it, every candidate.

Each problem of tests/model_suite.py is written as a KernelBench file and imported; each applicable candidate
of tests/suite_candidates.py (same arithmetic, another order, TF32/bf16 operands, an approximated activation,
located bugs) must get its verdict from ``analyse_model``, and bugs their location. The reference side too:
an emulated TF32 reference, and both sides TF32 (equal only because both are inexact). All in this process;
process/test_engine.py takes a few pairs through ``fpa explain`` end to end.
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
import torch
from torch import nn

from fp_analysis.errors import OutOfScopeError
from fp_analysis.explain.kernelbench import emulated_reference
from fp_analysis.explain.parameters import match_parameters
from fp_analysis.model.engine import Effort, analyse_model
from fp_analysis.model.floor import floor_of
from fp_analysis.model.graph import OpKind
from fp_analysis.model.interpose import Arithmetic, evaluate
from fp_analysis.numerics.formats import FORMATS
from fp_analysis.ops.conv import spec_of_module
from fp_analysis.ops.reference import abs_dot_at
from fp_analysis.ops.terms import gather_terms, sample_output_indices

from ..model_suite import PROBLEMS, load
from ..suite_candidates import CANDIDATES

_FOLDER = pathlib.Path(__file__).parent.parent / "model_cases"  # written once per session, ignored by git


@pytest.fixture(scope="module")
def built():
    """name → (problem, model, input, reference output, ops)."""
    _FOLDER.mkdir(exist_ok=True)
    out = {}
    for problem in PROBLEMS:
        module = load(problem, _FOLDER)
        torch.manual_seed(0)
        model = module.Model(*module.get_init_inputs())
        torch.manual_seed(1)
        x = module.get_inputs()[0]
        with torch.no_grad():
            reference = model(x)
        ops = evaluate(model, [x], Arithmetic(dtype=torch.float32)).ops
        out[problem.name] = (problem, model, x, reference, ops)
    return out


def test_the_suite_covers_every_family(built):
    assert len(PROBLEMS) == 44  # docs/engine.md's count
    seen = {o.label for (_, _, _, _, ops) in built.values() for o in ops}
    modules = {o.module_type for (_, _, _, _, ops) in built.values() for o in ops}
    assert {"Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Linear"} <= modules
    assert {"GroupNorm", "BatchNorm2d", "LayerNorm", "MaxPool2d", "MaxPool3d", "AvgPool2d", "AvgPool3d"} <= modules
    assert {
        "mish", "tanh", "gelu", "leaky_relu", "hardswish", "hardtanh", "clamp", "relu", "sigmoid", "mul", "add",
        "mean", "sum", "logsumexp", "softmax", "adaptive_avg_pool3d", "batched matrix product",
    } <= seen  # fmt: skip
    gelu_forms = {o.detail for (_, _, _, _, ops) in built.values() for o in ops if o.name == "gelu"}
    assert {"approximate='none'", "approximate='tanh'"} <= gelu_forms


# Every candidate on every problem is 480 analyses that apply; CI's two cores run a third of them (162), the diagonals
# (problem + candidate) % 3 == 0, which keep every candidate on at least two problems it applies to (the rarest, a
# group's offset, applies to 3) and every problem with at least two candidates (checked below); the slow tests run
# them all (experiments/device_run.sh slowtests, or FPA_RUN_SLOW=1).
CASES = [
    pytest.param(p.name, c.name, marks=() if (i + j) % 3 == 0 else (pytest.mark.slow,))
    for i, p in enumerate(PROBLEMS)
    for j, c in enumerate(CANDIDATES)
]


def test_the_grid_ci_runs_keeps_every_candidate_on_two_problems_and_every_problem_with_two_candidates(built):
    by_name = {c.name: c for c in CANDIDATES}
    applying = set()
    for problem, name in (case.values for case in CASES if not case.marks):
        spec, _, _, reference, ops = built[problem]
        if by_name[name].applies(spec, ops, reference):
            applying.add((problem, name))
    assert len(applying) == 162
    assert all(sum(name == c.name for _, name in applying) >= 2 for c in CANDIDATES)
    assert all(sum(problem == p.name for problem, _ in applying) >= 2 for p in PROBLEMS)


@pytest.mark.parametrize(("problem", "candidate"), CASES)
def test_every_candidate_gets_its_verdict(built, problem, candidate):
    spec, model, x, reference, ops = built[problem]
    case = next(c for c in CANDIDATES if c.name == candidate)
    if not case.applies(spec, ops, reference):
        pytest.skip(f"{candidate} does not apply to {problem}")
    analysis = analyse_model(model, [x], reference, case.make(model, x, reference), effort=Effort(runs=4))
    assert analysis.verdict in case.verdicts, (analysis.verdict, [c.evidence for c in analysis.causes])
    assert analysis.explained is (case.verdicts[0] not in ("bug", "nonfinite"))
    if case.where is not None:
        assert case.where(analysis.location, reference), analysis.location["summary"]
    if analysis.explained:  # the principled tolerance passes the pair it explains
        assert analysis.recommended_tolerance["atol"] >= float(
            (reference.double() - case.make(model, x, reference)).abs().max()
        )


@pytest.mark.parametrize("problem", [p.name for p in PROBLEMS[::3]])
def test_a_tf32_reference_is_named_on_the_reference_side_and_a_shared_one_as_shared(built, problem):
    _, model, x, _, ops = built[problem]
    if not any(o.name == "convolution" for o in ops):
        pytest.skip("cuDNN's TF32 acts on convolutions")
    with torch.no_grad(), emulated_reference("tf32"):
        tf32 = model(x.clone())
    exact = evaluate(model, [x], Arithmetic()).output.float()
    analysis = analyse_model(model, [x], tf32, exact, effort=Effort(runs=6))
    assert analysis.verdict == "reference_tf32" and analysis.causes[0].op.startswith("the Conv")
    shared = analyse_model(model, [x], tf32, tf32.clone(), effort=Effort(runs=6))
    assert shared.verdict == "identical" and [c.name for c in shared.causes] == ["shared_tf32"]
    assert "an fp32-exact kernel would need atol" in shared.causes[0].evidence


def _with_many_ties(shape) -> torch.Tensor:
    """Values on a 2^-14 grid in [0, 1): one in eight of those in [0.5, 1) lies half-way between TF32 values."""
    return torch.randint(0, 2**14, shape) / 2.0**14


def test_a_reference_rounding_ties_away_as_cvt_rna_is_re_created_by_that_rule():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(16, 24, 3), nn.GELU())
    x = _with_many_ties((2, 16, 20, 20))
    rna = Arithmetic(dtype=torch.float32, linear_format="tf32", linear_rounding="rna", accumulate="fp32")
    reference = evaluate(model, [x], rna).output
    exact = evaluate(model, [x], Arithmetic()).output.float()
    analysis = analyse_model(model, [x], reference, exact, effort=Effort(runs=4))
    fits = {(r["side"], r["hypothesis"]): r["fits"] for r in analysis.hypotheses}
    assert analysis.verdict == "reference_tf32", analysis.hypotheses
    assert fits[("reference", "tf32~rna[all]")] and not fits[("reference", "tf32[all]")]
    assert "ties away from zero" in analysis.causes[0].evidence


def test_a_candidate_truncating_its_operands_to_tf32_is_re_created_by_that_rule():
    """A tensor core given fp32 bits reads their top 19 (a kernel without cvt.rna): TF32 toward zero, one way at
    every operand, which neither rounding to nearest re-creates on a product of K = 256 (a held-out set's TF32
    rewrites were `bug` before)."""
    torch.manual_seed(0)
    model = nn.Linear(256, 64)
    x = torch.randn(32, 256)
    truncated = Arithmetic(dtype=torch.float32, linear_format="tf32", linear_rounding="rz", accumulate="fp32")
    candidate = evaluate(model, [x], truncated).output
    with torch.no_grad():
        reference = model(x)
    analysis = analyse_model(model, [x], reference, candidate, effort=Effort(runs=4))
    fits = {(r["side"], r["hypothesis"]): r["fits"] for r in analysis.hypotheses}
    assert analysis.verdict == "candidate_tf32", analysis.hypotheses
    assert fits[("candidate", "tf32~rz[all]")] and not fits[("candidate", "tf32[all]")]
    assert "toward zero" in analysis.causes[0].evidence


@pytest.mark.parametrize("candidate", ["shared", "plain"])
def test_the_ties_away_rewrite_is_skipped_where_other_rewrites_re_create_both_sides(built, candidate):
    _, model, x, _, _ = built["conv2d_mish"]
    with torch.no_grad(), emulated_reference("tf32"):
        tf32 = model(x.clone())
    other = tf32.clone() if candidate == "shared" else evaluate(model, [x], Arithmetic()).output.float()
    analysis = analyse_model(model, [x], tf32, other, effort=Effort(runs=4))
    tried = {r["hypothesis"] for r in analysis.hypotheses}
    assert "tf32[all]" in tried and not any("~rna" in h for h in tried)


def test_on_a_single_convolution_sigma_is_the_seed_unit(built):
    """σ is u·Σ|w·x| there: the Monte-Carlo floor has the seed analysis's exact unit."""
    model = nn.Conv2d(6, 5, 3, padding=1)
    x = torch.rand(2, 6, 7, 9)
    _, sigma = floor_of(model, [x])
    index = sample_output_indices(tuple(sigma.shape), 300, 0)
    terms = gather_terms(spec_of_module(model), x, model.weight.detach(), model.bias.detach(), index)
    unit = FORMATS["fp32"].unit_roundoff * abs_dot_at(terms)
    np.testing.assert_allclose(sigma.numpy()[tuple(index.T)], unit, rtol=1e-9)  # two fp64 sums of |w·x|


def test_parameters_drawn_in_another_order_are_found(built):
    _, model, _, _, _ = built["conv2d_params_leaky_gelu"]
    module = load(next(p for p in PROBLEMS if p.name == "conv2d_params_leaky_gelu"), _FOLDER)
    torch.manual_seed(5)  # another seed: every parameter drawn differently
    other = module.Model(*module.get_init_inputs())
    reference = dict(model.named_parameters())
    drawn_again = match_parameters(reference, dict(other.named_parameters()))
    assert [m.status for m in drawn_again] == ["differs"] * len(reference)
    assert [m.candidate for m in drawn_again] == list(reference)  # matched by name where shapes repeat
    same = match_parameters(reference, {k: v.clone() for k, v in model.named_parameters()})
    assert {m.status for m in same} == {"same"}


class _Dropout(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.dropout = nn.Conv2d(3, 4, 3), nn.Dropout(0.3)

    def forward(self, x):
        return self.dropout(self.conv(x))


class _Float32Only(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)

    def forward(self, x):
        assert x.dtype == torch.float32, "this kernel takes float32 only"
        return self.conv(x)


class _BranchOnRounding(nn.Module):
    """Takes one path when the conv's sum rounds one way, the other otherwise: fp32 and fp64 part ways."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.threshold = 0.0

    def forward(self, x):
        y = self.conv(x)
        return torch.relu(y) if float(y.sum()) > self.threshold else torch.tanh(y)


class _DropoutBeforeASoftmaxOfOne(nn.Module):
    """KernelBench's Matmul → Dropout → mean → softmax shape: the softmax is over one element, so the output is 1
    whatever dropout drew."""

    def __init__(self):
        super().__init__()
        self.linear, self.dropout = nn.Linear(20, 12), nn.Dropout(0.2)

    def forward(self, x):
        return torch.softmax(self.dropout(self.linear(x)).mean(dim=1, keepdim=True), dim=1)


def test_random_draws_that_do_not_reach_the_output_leave_it_analysed():
    """Dropout in training mode whose draws the output does not depend on (evaluated under other seeds: the same
    bits) is analysed: a candidate that returns the ones is identical, one 1e-3 off a bug; where the draws reach
    the output (``_Dropout``) it is refused, below."""
    model = _DropoutBeforeASoftmaxOfOne()
    torch.manual_seed(0)
    x = torch.randn(16, 20)
    with torch.no_grad():
        reference = model(x)
    assert torch.equal(reference, torch.ones(16, 1))
    assert analyse_model(model, [x], reference, torch.ones(16, 1)).verdict == "identical"
    assert analyse_model(model, [x], reference, torch.full((16, 1), 0.999)).verdict == "bug"


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (_Dropout(), "draws random numbers in forward (the Dropout `dropout`: bernoulli_) and its output changes"),
        (_Float32Only(), "cannot be evaluated in fp64: AssertionError: this kernel takes float32 only"),
        (_BranchOnRounding(), "takes another path in fp64 than in fp32"),
    ],
)
def test_what_the_engine_cannot_model_is_refused_naming_why(model, message):
    torch.manual_seed(0)
    x = torch.rand(1, 3, 6, 6)
    if isinstance(model, _BranchOnRounding):
        with torch.no_grad():
            in_fp32 = float(model.conv(x).sum())
        in_fp64 = float(evaluate(model.conv, [x], Arithmetic()).output.sum())
        assert in_fp32 != in_fp64
        model.threshold = (in_fp32 + in_fp64) / 2
    with torch.no_grad():
        out = model(x)
    with pytest.raises(OutOfScopeError, match=re.escape(message)):
        analyse_model(model, [x], out, out.clone())


def test_op_names_say_which_op_a_cause_acts_on(built):
    _, model, x, reference, ops = built["convtranspose3d_gelu"]
    gelu = next(o.index for o in ops if o.name == "gelu")
    tanh_form = evaluate(model, [x], Arithmetic(dtype=torch.float32, forms={gelu: "other_gelu"})).output
    analysis = analyse_model(model, [x], reference, tanh_form, effort=Effort(runs=4))
    assert analysis.causes[0].op == "the gelu after the ConvTranspose3d `conv`"
    assert [o["kind"] for o in analysis.ops if o["kind"] == OpKind.LINEAR.value] == ["linear"]


class _Scaled(nn.Module):
    """conv(x) · m, m a per-channel input."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 6, 3)

    def forward(self, x, m):
        return self.conv(x) * m


def test_a_multiplier_folded_into_the_weights_near_underflow_is_arithmetic():
    """(w·m)·x rounds K subnormal products where (w·x)·m rounds one: a few subnormal ulps, not a bug."""
    from fp_analysis.strategies import make_tensor

    torch.manual_seed(0)
    model = _Scaled()
    x = make_tensor((2, 4, 3, 12), "subnormal_rich", 0)
    m = torch.tensor([2.2e-37, 2.1e-38, -0.29, -0.78, 1.3e-41, 8.4e-42]).reshape(1, 6, 1, 1)
    with torch.no_grad():
        reference = model(x, m)
        c = model.conv
        folded = torch.nn.functional.conv2d(x, c.weight * m.reshape(-1, 1, 1, 1), c.bias * m.reshape(-1))
    assert not torch.equal(folded, reference)
    analysis = analyse_model(model, [x, m], reference, folded, effort=Effort(runs=4))
    assert analysis.verdict == "accumulation_order", [c.evidence for c in analysis.causes]


@pytest.mark.parametrize("compiled", [False, True], ids=["emulated chain", "numba's chain"])
def test_twin_evidence_finds_each_side_that_is_a_twin_with_either_chain(compiled, monkeypatch):
    """A side equal to the fmaf chain (bias first, or added last) at every sampled output is named, whether the chain
    is the numpy emulation (small term counts) or numba's compiled twin (large ones); a side one ulp off is not."""
    import fp_analysis.model.twins as twins
    from fp_analysis.numerics.arith import add32
    from fp_analysis.numerics.fma_emulation import fma_chain

    monkeypatch.setattr(twins, "_numba_loaded", lambda: compiled)  # (this process may have loaded it or not)
    unused = twins._fmaf_chain if compiled else twins._compiled_fmaf_chain
    monkeypatch.setattr(twins, unused.__name__, lambda *args: pytest.fail("the other chain was used"))
    torch.manual_seed(3)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1))
    x = torch.randn(2, 3, 6, 6)
    conv = model[0]
    out = model(x).detach()
    index = sample_output_indices(tuple(out.shape), out.numel(), 0)  # every output
    terms = gather_terms(spec_of_module(conv), x, conv.weight.detach(), conv.bias.detach(), index)
    first, last = out.clone(), out.clone()
    first[tuple(torch.from_numpy(index).T)] = torch.from_numpy(fma_chain(terms.w, terms.x, terms.bias))
    last[tuple(torch.from_numpy(index).T)] = torch.from_numpy(add32(fma_chain(terms.w, terms.x), terms.bias))
    off = first.clone()
    off.view(-1)[5] = torch.nextafter(off.view(-1)[5], torch.tensor(float("inf")))
    ops = evaluate(model, [x], Arithmetic(dtype=torch.float32)).ops
    sides = {"reference": first, "candidate": last, "other": off}
    found = twins.twin_evidence(model, ops, [x], sides, samples=out.numel(), seed=0)
    assert found == {
        "reference": "the fp32 fmaf chain, input channel outermost (cuDNN's fp32 order)",
        "candidate": "the same chain with the bias added last",
    }


def test_both_sides_equal_to_one_twin_on_the_sample_is_not_called_two_orders():
    """Found by a bad-input hunt: sides that differ only outside the sampled outputs both equal the same twin there;
    the evidence says so (and how many outputs differ) instead of naming each side's order."""
    from fp_analysis.model.twins import twin_words

    reference = torch.zeros(10)
    candidate = reference.clone()
    candidate[7] = 1e-30
    chain = "the fp32 fmaf chain"
    words = twin_words({"reference": chain, "candidate": chain}, {"reference": reference, "candidate": candidate})
    assert "both sides equal the fp32 fmaf chain" in words and "1 differing outputs lie outside the sample" in words
    one = twin_words({"candidate": chain}, {"reference": reference, "candidate": candidate})
    assert one == "; the candidate equals the fp32 fmaf chain bit for bit at every sampled output"


def test_a_recheck_against_known_recreations_needs_no_twin_evidence():
    """Found when the README's examples were run: judging another trial against the worst's re-creations
    (``Effort.recheck``) samples no outputs for the twins, and asking the twins for 0 samples ended the explanation
    with a usage error (exit 2) on every pair of fp32 sides in another order."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3))
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        reference = model(x)
        other_order = model.double()(x.double()).float()  # summed in fp64, rounded once
    model.float()
    analysis = analyse_model(model, [x], reference, other_order, effort=Effort.recheck({"plain"}))
    assert analysis.explained and analysis.verdict == "accumulation_order", analysis.causes
    assert not any("twin" in record for record in analysis.hypotheses)  # no sample, so no twin evidence claimed


class _TanhRecurrence(nn.Module):
    """h ← tanh(x_t·W + h·U) over ``steps`` steps: a tanh op per step, as an RNN's cell loop records them."""

    def __init__(self, steps: int):
        super().__init__()
        self.steps = steps
        self.w, self.u = nn.Linear(8, 16, bias=False), nn.Linear(16, 16, bias=False)

    def forward(self, x, tanh=torch.tanh):
        h = torch.zeros(x.shape[0], 16)
        for t in range(self.steps):
            h = tanh(self.w(x[:, t]) + self.u(h))
        return h


def test_a_form_rewritten_at_every_step_of_a_recurrence_is_one_rewrite_named_formula():
    """A kernel writes tanh once and calls it at every step: one rewrite acts on every tanh (not one per op, whose
    count, each a whole evaluation, made an LSTM's analysis quadratic in its steps), and it re-creates that."""
    from fp_analysis.model.rewrites import rewrites_of

    counts = []
    for steps in (4, 40):
        torch.manual_seed(0)
        # small pre-activations: there 2/(1 + exp(−2z)) − 1 loses tanh's low bits to cancellation, past the floor
        model, x = _TanhRecurrence(steps), torch.randn(4, steps, 8) * 1e-3
        ops = evaluate(model, [x], Arithmetic(dtype=torch.float32)).ops
        assert sum(o.name == "tanh" for o in ops) == steps
        counts.append(len(rewrites_of(ops)))
    assert counts[0] == counts[1], counts
    with torch.no_grad():
        reference = model(x)
        candidate = model(x, tanh=lambda z: 2 / (1 + torch.exp(-2 * z)) - 1)
    assert not torch.equal(candidate, reference)
    analysis = analyse_model(model, [x], reference, candidate, effort=Effort(runs=4))
    assert analysis.verdict == "formula", [c.evidence for c in analysis.causes]
    assert "every tanh (40 ops)" in analysis.causes[0].evidence, analysis.causes[0].evidence


class _TinyViT(nn.Module):
    """A ViT of two encoder layers over 16 patches of 8 × 8 and a class token, 10 logits from that token."""

    def __init__(self, dim: int = 64):
        super().__init__()
        self.embed, self.token = nn.Linear(3 * 8 * 8, dim), nn.Parameter(torch.randn(1, 1, dim))
        self.position = nn.Parameter(torch.randn(1, 17, dim))
        layer = nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, 10))

    def forward(self, img):
        patches = img.unfold(2, 8, 8).unfold(3, 8, 8).reshape(img.shape[0], -1, 3 * 8 * 8)
        x = torch.cat((self.token.expand(img.shape[0], -1, -1), self.embed(patches)), dim=1) + self.position
        return self.head(self.encoder(x)[:, 0])


def test_a_deep_transformer_with_tf32_products_is_named_tf32():
    """A ViT whose products ran on TF32 operands in fp32 (as cuBLAS with TF32 allowed) is ``candidate_tf32``: its own
    fp32 roundings carry a few operands of later products across TF32's rounding boundaries (a TF32 ulp is 2^13 fp32
    ones), moving a batch item's outputs by a TF32 step where the fp64 re-creation rounds them the other way; the
    floor holds those flips (``model.operand_flips``), where the concentration test once called that item a bug."""
    torch.manual_seed(0)
    model = _TinyViT().eval()
    torch.manual_seed(1)
    x = torch.randn(2, 3, 32, 32)
    with torch.no_grad():
        reference = model(x)
        candidate = evaluate(model, [x], Arithmetic(dtype=torch.float32, linear_format="tf32")).output
    analysis = analyse_model(model, [x], reference, candidate, effort=Effort(runs=4))
    assert analysis.verdict == "candidate_tf32", [c.evidence for c in analysis.causes]
