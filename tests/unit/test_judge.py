"""The verdict rules on tables of fits written by hand: no Model is evaluated and no process started.

Each test builds the fits a measurement would give (how far each side is from each re-creation, in units of σ) and
checks the rule in ``fp_analysis.model.judge`` that turns them into causes.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from fp_analysis.model.graph import OpKind, OpRecord
from fp_analysis.model.judge import (
    TOLERANCE_MARGIN,
    Fit,
    FitTable,
    closest_to_candidate,
    judge_explained,
    judge_unexplained,
    parameter_analysis,
    parameters_first,
    simplest,
    unlike_size,
)
from fp_analysis.model.rewrites import Rewrite, rewrites_of
from fp_analysis.model.verdict import Analysis, Cause, CauseKind, Outcome, verdict_name

# A Conv2d module followed by a GELU the Model's forward calls: the graph of many KernelBench level-2 problems.
OPS = [
    OpRecord(0, "convolution", OpKind.LINEAR, "conv", "Conv2d", (2, 4, 6, 6), terms=27),
    OpRecord(1, "gelu", OpKind.TRANSCENDENTAL, "", "Model", (2, 4, 6, 6)),
]
LIMIT = 8.0
PLAIN, TF32, TF32_RNA, BF16, FP16 = (
    Rewrite(),
    Rewrite(precision="tf32"),
    Rewrite(precision="tf32", ties="rna"),
    Rewrite(precision="bf16"),
    Rewrite(precision="fp16"),
)
OTHER_GELU, FAST = Rewrite(form=((1,), "other_gelu")), Rewrite(fast_math=True)
INSIDE, OUTSIDE = Fit(2.0, 0, LIMIT), Fit(500.0, 37, LIMIT)


def table(fits: dict[tuple[str, Rewrite], Fit]) -> FitTable:
    """A table over every rewrite of ``OPS``, holding ``fits``; each rewrite measured on one side is measured on
    the other too (far outside), as the engine measures both sides of every rewrite it tries."""
    out = FitTable(rewrites_of(OPS))
    for rewrite in {h for _, h in fits}:
        for side in ("reference", "candidate"):
            out.record(side, rewrite, fits.get((side, rewrite), OUTSIDE))
    return out


def test_plain_fp32_is_named_before_any_rewrite_that_also_fits():
    fits = table({("reference", PLAIN): INSIDE, ("reference", TF32): Fit(0.5, 0, LIMIT)})
    assert simplest(fits, "reference") == PLAIN


@pytest.mark.parametrize(
    ("fitting", "named"),
    [
        ([BF16, TF32, FP16], TF32),  # TF32 before bf16 before fp16: operands in fp16's range round alike in TF32
        ([BF16, FP16], BF16),
        ([TF32_RNA, TF32], TF32),  # ties to even before ties away
        ([FAST, OTHER_GELU], OTHER_GELU),  # an exact re-creation before fast-math's allowance
        ([Rewrite(precision="tf32", form=((1,), "other_gelu")), TF32], TF32),  # the fewest changes
    ],
)
def test_the_simplest_fitting_rewrite_is_named(fitting, named):
    fits = table({("reference", PLAIN): OUTSIDE, **{("reference", h): INSIDE for h in fitting}})
    assert simplest(fits, "reference") == named


def test_among_equally_simple_rewrites_the_closest_is_named():
    fits = table({("candidate", TF32): Fit(5.0, 0, LIMIT), ("candidate", OTHER_GELU): Fit(1.0, 0, LIMIT)})
    assert simplest(fits, "candidate") == OTHER_GELU


def test_a_rewrite_fits_only_when_no_output_is_beyond_its_limit():
    fits = table({("candidate", TF32): Fit(8.5, 1, LIMIT), ("candidate", BF16): Fit(7.9, 0, LIMIT)})
    assert fits.recreating("candidate") == [BF16]


def test_a_side_no_rewrite_recreates_is_left():
    both = table({("reference", PLAIN): INSIDE, ("candidate", TF32): INSIDE})
    assert not both.side_left()
    assert table({("reference", PLAIN): INSIDE}).side_left()


def test_a_candidate_none_recreates_is_judged_against_the_rewrite_leaving_fewest_outputs_out():
    fits = table({
        ("candidate", PLAIN): Fit(900.0, 12, LIMIT),
        ("candidate", TF32): Fit(90.0, 40, LIMIT),
        ("candidate", BF16): Fit(9000.0, 12, LIMIT),
    })  # fmt: skip
    assert closest_to_candidate(fits) == PLAIN  # 12 outputs out, as bf16, but plain is the simpler


def test_two_plain_sides_that_differ_are_another_accumulation_order():
    judgement = judge_explained(PLAIN, PLAIN, identical=False, ops=OPS)
    assert judgement.kinds == [CauseKind.ACCUMULATION_ORDER]
    assert judgement.verdict == "accumulation_order" and judgement.causes[0][1] == "pair"


def test_two_plain_sides_that_differ_where_the_model_sums_nothing_are_another_formula():
    elementwise = [OpRecord(0, "sigmoid", OpKind.TRANSCENDENTAL, "", "Model", (4, 16))]
    judgement = judge_explained(PLAIN, PLAIN, identical=False, ops=elementwise)
    assert judgement.kinds == [CauseKind.FORMULA] and judgement.causes[0][1] == "pair"
    summed = [*elementwise, OpRecord(1, "sum", OpKind.REDUCTION, "", "Model", (4,))]
    assert judge_explained(PLAIN, PLAIN, identical=False, ops=summed).kinds == [CauseKind.ACCUMULATION_ORDER]


def test_two_plain_sides_equal_bit_for_bit_are_identical_with_no_cause():
    judgement = judge_explained(PLAIN, PLAIN, identical=True, ops=OPS)
    assert judgement.kinds == [] and judgement.verdict == Outcome.IDENTICAL.value


def test_equal_sides_both_in_tf32_are_identical_only_because_both_are_inexact_alike():
    judgement = judge_explained(TF32, TF32, identical=True, ops=OPS)
    assert judgement.kinds == [CauseKind.SHARED_TF32] and judgement.shared
    assert judgement.verdict == "identical" and judgement.causes[0][1] == "both"


def test_each_sides_rewrite_is_a_cause_on_that_side():
    judgement = judge_explained(TF32, OTHER_GELU, identical=False, ops=OPS)
    assert judgement.kinds == [CauseKind.REFERENCE_TF32, CauseKind.GELU_APPROXIMATION]
    assert [side for _, side, _ in judgement.causes] == ["reference", "candidate"]
    assert judgement.verdict == "reference_tf32 + gelu_approximation"


def test_equal_sides_recreated_by_different_rewrites_name_both():
    judgement = judge_explained(TF32, TF32_RNA, identical=True, ops=OPS)
    assert not judgement.shared and judgement.verdict == "reference_tf32 + candidate_tf32"


def test_fast_math_is_an_approximation_and_a_gelu_form_a_gelu_approximation():
    assert FAST.kinds("candidate", OPS) == [CauseKind.APPROXIMATION]
    assert OTHER_GELU.kinds("candidate", OPS) == [CauseKind.GELU_APPROXIMATION]
    assert Rewrite(precision="bf16", form=((1,), "other_gelu")).kinds("candidate", OPS) == [
        CauseKind.CANDIDATE_BF16,
        CauseKind.GELU_APPROXIMATION,
    ]


@pytest.mark.parametrize(("outside", "nonfinite", "kind"), [(5, 5, CauseKind.NONFINITE), (5, 4, CauseKind.BUG)])
def test_an_unrecreated_candidate_is_nonfinite_only_where_every_departure_is_nan_or_inf(outside, nonfinite, kind):
    assert judge_unexplained(outside, nonfinite) is kind


def _analysis(explained: bool, *causes: tuple[str, str]) -> Analysis:
    """An analysis naming ``causes`` ((name, side) pairs), as the engine would return it."""
    named = [Cause(name, f"{name} evidence", 1e-6, side) for name, side in causes]
    verdict = verdict_name([CauseKind(c.name) for c in named], False)
    return Analysis(explained=explained, verdict=verdict, causes=named, recommended_tolerance={"atol": 1e-5})


SHARES = {"parameters": 3e-4, "arithmetic": 5e-4}
BUG = _analysis(False, ("bug", "candidate"))


def test_different_parameters_are_named_beside_the_arithmetic_that_explains_the_rest():
    second = _analysis(True, ("reference_tf32", "reference"))
    analysis = parameter_analysis(BUG, second, ["conv.weight differs"], {}, SHARES)
    assert analysis.verdict == "parameter_mismatch + reference_tf32" and not analysis.explained
    assert "conv.weight differs" in analysis.causes[0].evidence and analysis.causes[0].residual_max == 3e-4
    assert analysis.recommended_tolerance["atol"] is None  # no tolerance makes other parameters right


def test_two_plain_sides_with_other_parameters_name_the_parameters_alone():
    second = _analysis(True, ("accumulation_order", "pair"))
    assert parameter_analysis(BUG, second, ["w differs"], {}, SHARES).verdict == "parameter_mismatch"


def test_parameters_stored_rounded_are_an_arithmetic_and_explained():
    second = _analysis(True, ("accumulation_order", "pair"))
    analysis = parameter_analysis(BUG, second, [], {"bf16": ["linear.weight"]}, SHARES)
    assert analysis.explained and analysis.verdict == "candidate_bf16"
    # the tolerance the pair needs: the arithmetic's, and the rounded parameters' share (3e-4) with its margin
    assert analysis.recommended_tolerance["atol"] == pytest.approx(1e-5 + TOLERANCE_MARGIN * SHARES["parameters"])


def test_other_parameters_beside_a_bug_name_both_and_rounded_ones_alone_change_nothing():
    second = _analysis(False, ("bug", "candidate"))
    assert parameter_analysis(BUG, second, ["w differs"], {}, SHARES).verdict == "parameter_mismatch + bug"
    assert parameter_analysis(BUG, second, [], {"bf16": ["w"]}, SHARES) is BUG
    assert parameter_analysis(BUG, None, ["w differs"], {}, SHARES) is BUG


def test_a_verdict_name_joins_its_causes_and_only_causes_are_names():
    assert (
        verdict_name([CauseKind.REFERENCE_TF32, CauseKind.CANDIDATE_BF16], False) == "reference_tf32 + candidate_bf16"
    )
    with pytest.raises(ValueError):
        verdict_name(["reference_tf33"], False)


def test_an_infinite_departure_never_fits():
    fits = table({("candidate", PLAIN): Fit(math.inf, 1, LIMIT)})
    assert fits.recreating("candidate") == []


def test_a_fit_concentrated_in_a_slice_recreates_nothing_and_counts_its_departing_outputs():
    concentrated = Fit(3.0, 0, LIMIT, concentrated="channel 3 (of 0…7)", departing=40)
    fits = table(
        {("reference", PLAIN): INSIDE, ("candidate", FAST): concentrated, ("candidate", PLAIN): Fit(90, 50, LIMIT)}
    )
    assert not concentrated.fits and concentrated.within
    assert FAST not in fits.recreating("candidate") and fits.side_left()
    assert closest_to_candidate(fits) == FAST  # within its floor but for one slice: the bug is where it says
    fits.record("candidate", FAST, Fit(90, 60, LIMIT))
    assert closest_to_candidate(fits) == PLAIN  # both beyond their floors: the fewer outputs left out


def test_a_difference_of_parameters_is_preferred_to_an_approximation_that_only_hides_it():
    approximated = dataclasses.replace(_analysis(True, ("approximation", "candidate")), recreations={
        "reference": "plain", "candidate": "fast_math"})  # fmt: skip
    plain = dataclasses.replace(_analysis(True, ("accumulation_order", "pair")), recreations={
        "reference": "plain", "candidate": "plain"})  # fmt: skip
    assert parameters_first(approximated, plain)
    assert not parameters_first(plain, plain)  # plain with the reference's own values: nothing simpler
    assert not parameters_first(approximated, approximated)
    assert not parameters_first(approximated, BUG)


def test_a_side_that_varies_far_less_than_a_reduced_precision_is_not_that_precision():
    assert unlike_size(1e-6, 2e-2, 16) is not None  # a constant shift: its departures hardly vary
    assert "not that precision's" in unlike_size(1e-6, 2e-2, 16)
    assert unlike_size(0.5e-2, 2e-2, 16) is None  # a quarter: a kernel that rounds fewer of its ops
    assert unlike_size(1e-6, 2e-2, 15) is None  # too few outputs to measure a spread
    assert unlike_size(0.0, 0.0, 100) is None  # the precision changes nothing there
