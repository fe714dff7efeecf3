"""The candidate's tensors matched to the reference's parameters (``fp_analysis.explain.parameters``): found in any
layout, held rounded to a format, held with other values, held in parts, or not held; and the reference Model
evaluated with the candidate's values."""

from __future__ import annotations

import torch
from torch import nn

from fp_analysis.explain.parameters import describe, match_parameters, with_values
from fp_analysis.numerics.rounding import round_to

torch.manual_seed(0)
CONV = nn.Conv2d(3, 8, 3)
REFERENCE = {name: p.detach().clone() for name, p in CONV.named_parameters()}


def statuses(candidate: dict) -> dict[str, tuple[str, str | None, str | None]]:
    return {m.name: (m.status, m.candidate, m.fmt) for m in match_parameters(REFERENCE, candidate)}


def test_a_weight_held_in_another_layout_is_the_same_parameter():
    nhwc = {"w": REFERENCE["weight"].permute(0, 2, 3, 1).contiguous(), "b": REFERENCE["bias"].clone()}
    assert statuses(nhwc) == {"weight": ("same", "w", None), "bias": ("same", "b", None)}
    assert describe(match_parameters(REFERENCE, nhwc)) == []


def test_a_weight_held_rounded_to_bf16_is_found_with_its_format_and_values():
    held = {"w_bf16": REFERENCE["weight"].to(torch.bfloat16), "bias": REFERENCE["bias"].clone()}
    matches = match_parameters(REFERENCE, held)
    assert statuses(held)["weight"] == ("rounded", "w_bf16", "bf16")
    weight = next(m for m in matches if m.name == "weight")
    assert torch.equal(weight.values, round_to(REFERENCE["weight"], "bf16"))


def test_other_values_are_matched_by_name_first_with_their_relative_difference():
    drawn_again = {"weight": REFERENCE["weight"] * (1 + 2.5e-5), "other": REFERENCE["weight"].clone() * 3}
    drawn_again["bias"] = REFERENCE["bias"].clone()
    weight = next(m for m in match_parameters(REFERENCE, drawn_again) if m.name == "weight")
    # "other" holds the weight's values ×3: exact matches claim their tensor first, so it is not the same either
    assert weight.status == "differs" and weight.candidate == "weight"
    assert abs(weight.relative - 2.5e-5) < 1e-6


def test_a_parameter_not_held_is_missing_and_a_fused_one_held_in_parts_is_found():
    assert statuses({"weight": REFERENCE["weight"].clone()})["bias"] == ("missing", None, None)
    qkv = {"qkv.weight": torch.randn(12, 4)}
    parts = {"q.weight": qkv["qkv.weight"][:4], "q.bias": torch.randn(4), "k.weight": qkv["qkv.weight"][4:8] * 2,
             "v.weight": qkv["qkv.weight"][8:]}  # fmt: skip
    (match,) = match_parameters(qkv, parts)
    assert (match.status, match.candidate) == ("differs", "q.weight+k.weight+v.weight")
    assert torch.equal(match.values[4:8], parts["k.weight"])


def test_the_reference_evaluated_with_the_candidates_values_changes_only_those():
    scaled = {"weight": REFERENCE["weight"] * 2, "bias": REFERENCE["bias"].clone()}
    model = with_values(CONV, match_parameters(REFERENCE, scaled))
    assert torch.equal(model.weight, scaled["weight"]) and torch.equal(model.bias, REFERENCE["bias"])
    assert torch.equal(CONV.weight.detach(), REFERENCE["weight"])  # the reference Model itself is untouched
