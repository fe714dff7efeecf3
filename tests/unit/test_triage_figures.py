"""The figures of ``fpa triage --report`` agree with each other: one colour per verdict (arithmetic in greys, blues
and greens, the candidate wrong or no verdict in reds and oranges) in every figure and legend, whole numbers on
the axis that counts pairs, the problems in one order in every figure and table, and the tolerance a problem needs
given per precision (a bf16 candidate never raises what its fp32 kernels need). Built from rows made by hand in
the shape ``triage`` returns: no worker runs.
"""

from __future__ import annotations

import colorsys
import html

import pytest

from fp_analysis.model.verdict import CAUSES, FALSE_PASS_VERDICTS, Outcome
from fp_analysis.triage.summary import arithmetic_precision, problem_order, summarize

pytest.importorskip("seaborn")
from matplotlib.colors import to_hex, to_rgb  # after the skip: seaborn brings matplotlib

from fp_analysis.triage.report import (
    VERDICT_COLOURS,
    report_figures,
    verdict_colour,
    verdict_order,
    write_report,
)

FAILURES = {*FALSE_PASS_VERDICTS, *(o.value for o in Outcome if o is not Outcome.IDENTICAL)}
ARITHMETIC = {Outcome.IDENTICAL.value, *CAUSES} - FAILURES

# (problem folder, verdict, check passed, needed atol, candidate vs fp64); the folders sort otherwise as text than
# as numbers (2 before 10), and two share a name in two levels
SPEC = [
    ("level1/10_conv", "accumulation_order", True, 1e-6, 2e-6),
    ("level1/10_conv", "candidate_bf16", False, 4e-3, 3e-3),
    ("level1/10_conv", "bug", False, None, 0.5),
    ("level1/2_relu", "identical", True, 1e-7, 1e-7),
    ("level1/2_relu", "nondeterministic + accumulation_order", True, 3e-6, 4e-6),
    ("level1/2_relu", "user_code_failed", None, None, None),
    ("level2/2_relu", "reference_tf32 + candidate_bf16", False, 6e-3, 5e-3),
    ("level2/2_relu", "gelu_approximation", True, 2e-4, 1e-4),
    ("level2/2_relu", "candidate_tf32", False, 8e-4, 5e-4),
    ("level2/2_relu", "bug", False, None, 0.2),
    ("level2/2_relu", "bug", False, None, 0.3),
    ("level2/3_<b>odd", "nonfinite", False, None, None),
    ("level2/3_<b>odd", "parameter_mismatch", True, None, 1e-5),
]


def _result(spec=SPEC) -> dict:
    rows = []
    for i, (folder, verdict, passed, needed, error) in enumerate(spec):
        explained = needed is not None
        rows.append({"pair_id": f"{folder}/s{i}", "problem": f"/runs/{folder}/problem.py", "verdict": verdict,
                     "check_passed": passed, "explained": explained, "max_abs": error, "candidate_vs_fp64": error,
                     "needed_atol": needed, "seconds": 1.0, "error": None, "expected": None})  # fmt: skip
    return {"pairs": rows, "summary": summarize(rows, 1e-4, 1e-4), "ran": len(rows), "reused": 0, "timing": {}}


@pytest.fixture
def figures():
    import matplotlib.pyplot as plt

    drawn = report_figures(_result())
    yield [figure for _, figure in drawn]
    for _, figure in drawn:
        plt.close(figure)


def _hex(colour) -> str:
    import numpy as np

    colours = np.asarray(colour, dtype=float)
    return to_hex(colours.reshape(-1, colours.shape[-1])[0] if colours.ndim else colour, keep_alpha=False)


def _coloured_artists(figure) -> list[tuple[str, str]]:
    """(label, colour) of every labelled bar, dot and legend entry of ``figure``."""
    found = []
    for axes in figure.axes:
        for bars in axes.containers:
            found += [(bars.get_label(), _hex(patch.get_facecolor())) for patch in bars.patches]
        found += [(dots.get_label(), _hex(dots.get_facecolor())) for dots in axes.collections]
        legend = axes.get_legend()
        if legend is not None:
            for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
                if hasattr(handle, "get_facecolor"):  # not the check's atol, a dashed line
                    found.append((text.get_text(), _hex(handle.get_facecolor())))
    return found


def test_every_verdict_has_one_colour_arithmetic_apart_from_failures():
    assert {Outcome.IDENTICAL.value, *CAUSES, *FAILURES} <= set(VERDICT_COLOURS)  # every verdict name is in the table
    assert len(set(VERDICT_COLOURS.values())) == len(VERDICT_COLOURS)

    def family(verdict: str) -> str:
        hue, _, saturation = colorsys.rgb_to_hls(*to_rgb(verdict_colour(verdict)))
        if saturation < 0.15:
            return "grey"
        if hue <= 0.11 or hue >= 0.95:
            return "red"
        return "blue-green" if 0.2 <= hue <= 0.7 else f"other hue {hue:.2f}"

    def group(verdict: str) -> str:
        return {"grey": "arithmetic", "blue-green": "arithmetic", "red": "failure"}.get(family(verdict), "other")

    assert {v: family(v) for v in FAILURES} == dict.fromkeys(FAILURES, "red")
    assert all(family(v) in ("grey", "blue-green") for v in ARITHMETIC), {v: family(v) for v in ARITHMETIC}
    # A verdict of several causes: its worst cause's group, not that cause's own colour; the same every call.
    for combined, worst in (("nondeterministic + accumulation_order", "nondeterministic"),
                            ("nondeterministic + bug", "bug"), ("candidate_bf16 + parameter_mismatch",
                                                                "parameter_mismatch"),
                            ("reference_tf32 + candidate_bf16", "candidate_bf16")):  # fmt: skip
        assert group(combined) == group(worst)
        assert verdict_colour(combined) == verdict_colour(combined) != verdict_colour(worst)
        assert verdict_order([combined, worst, "identical"]) == ["identical", worst, combined]
    unknown = verdict_colour("a_verdict_of_tomorrow")
    assert unknown == verdict_colour("a_verdict_of_tomorrow") and unknown not in VERDICT_COLOURS.values()
    assert verdict_order(["a_verdict_of_tomorrow", "bug", "identical"])[-1] == "a_verdict_of_tomorrow"


def test_each_verdict_has_the_same_colour_in_every_figure_and_legend(figures):
    pairs = _result()["pairs"]
    seen: dict[str, set[str]] = {}
    for figure in figures:
        for label, colour in _coloured_artists(figure):
            seen.setdefault(label, set()).add(colour)
    verdicts = {row["verdict"] for row in pairs}
    assert verdicts <= set(seen)  # every verdict is drawn somewhere
    assert {v: seen[v] for v in verdicts} == {v: {verdict_colour(v)} for v in verdicts}
    for figure in figures[:2]:  # the verdicts' legends list them in one order
        texts = [t.get_text() for t in figure.axes[0].get_legend().get_texts()]
        assert texts == verdict_order(texts)
    counts_legend = [t.get_text() for t in figures[0].axes[0].get_legend().get_texts()]
    assert counts_legend == verdict_order(verdicts)


def test_pair_counts_are_whole_numbers_on_their_axis(figures):
    import matplotlib.pyplot as plt

    (axes,) = figures[0].axes  # verdicts per problem: at most 5 pairs a problem, where matplotlib would put halves
    low, high = axes.get_xlim()
    ticks = [t for t in axes.get_xticks() if low <= t <= high]
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks), ticks
    single = report_figures(_result(SPEC[:1]))  # one pair: still 0 and 1, no 0.5
    try:
        (axes,) = single[0][1].axes
        low, high = axes.get_xlim()
        assert all(float(t).is_integer() for t in axes.get_xticks() if low <= t <= high)
    finally:
        for _, figure in single:
            plt.close(figure)


def _top_to_bottom(axes) -> list[str]:
    """The problems' tick labels of ``axes`` as drawn, from the top of the figure down (whatever the axis's
    direction)."""
    ticks = [(axes.transData.transform((0, y))[1], text.get_text())
             for y, text in zip(axes.get_yticks(), axes.get_yticklabels(), strict=True)]  # fmt: skip
    return [text for _, text in sorted(ticks, reverse=True)]


def test_the_problems_are_in_one_order_in_every_figure_and_table(figures, tmp_path):
    result = _result()
    order = problem_order(row["problem"] for row in result["pairs"])
    assert [p.split("/")[2:4] for p in order] == [["level1", "2_relu"], ["level1", "10_conv"], ["level2", "2_relu"],
                                                  ["level2", "3_<b>odd"]]  # fmt: skip
    assert list(result["summary"]["by_problem"]) == order
    assert list(result["summary"]["needed_atol_by_problem"]) == [p for p in order if "odd" not in p]
    labels = ["level1/2_relu", "10_conv", "level2/2_relu", "3_<b>odd"]  # a shared name: with its level
    assert [_top_to_bottom(figure.axes[0]) for figure in figures] == [labels] * len(figures)
    page = write_report(result, tmp_path / "t.html", title="t").read_text()
    assert "<b>" not in page and "3_&lt;b&gt;odd" in page
    tolerance_table = page[page.index("<h2>Tolerance needed per precision") :]
    tolerance_table = tolerance_table[: tolerance_table.index("</table>")]
    positions = [tolerance_table.index(f">{label}<") for label in labels[:3]]
    assert positions == sorted(positions)
    pairs_table = page[page.index("<h2>Pairs</h2>") :]
    drawn = sorted(result["pairs"], key=lambda row: pairs_table.index(f">{html.escape(row['pair_id'])}<"))
    assert [order.index(row["problem"]) for row in drawn] == sorted(order.index(row["problem"]) for row in drawn)


def test_a_bf16_candidate_does_not_raise_what_the_fp32_pairs_need(figures, tmp_path):
    from fp_analysis.cli.console import out
    from fp_analysis.cli.triage import _print_triage

    assert arithmetic_precision("accumulation_order") == arithmetic_precision("identical") == "fp32"
    assert arithmetic_precision("nondeterministic + accumulation_order") == "fp32"
    assert arithmetic_precision("reference_tf32 + candidate_bf16") == "bf16"  # the coarser of the two
    assert arithmetic_precision("candidate_tf32") == "tf32"
    result = _result()
    needed = result["summary"]["needed_atol_by_problem"]
    conv, relu1, relu2 = (f"/runs/{name}/problem.py" for name in ("level1/10_conv", "level1/2_relu", "level2/2_relu"))
    assert needed[conv] == {"fp32": 1e-6, "bf16": 4e-3}  # the fp32 kernel's 1e-6 stands beside the bf16's 4e-3
    assert needed[relu1] == {"fp32": 3e-6}
    assert needed[relu2] == {"fp32": 2e-4, "tf32": 8e-4, "bf16": 6e-3}
    # The figure: one panel per precision, each problem's bar its need in that precision alone.
    panels = figures[2].axes
    assert [axes.get_title() for axes in panels] == ["fp32 arithmetic", "TF32 linear ops", "bf16 linear ops"]
    widths = {axes.get_title(): [bar.get_width() for bar in axes.containers[0]] for axes in panels}
    assert widths["fp32 arithmetic"][:3] == [3e-6, 1e-6, 2e-4]  # 10_conv's: 1e-6, not its bf16 candidate's 4e-3
    assert widths["bf16 linear ops"][:3] == [0.0, 4e-3, 6e-3]
    page = write_report(result, tmp_path / "t.html", title="t").read_text()
    row = page[page.index(f"title='{conv}'") :]
    row = row[: row.index("</tr>")]
    assert "<td>1e-06</td>" in row and "<td class='bad'>0.004</td>" in row
    # The text output: one line a problem, each precision's need apart.
    with out.capture() as captured:
        _print_triage({**result, "timing": {"pairs": 0}}, "runs", 1e-4, 1e-4)
    lines = [line for line in captured.get().splitlines() if "need atol" in line]
    assert lines[1] == f"{conv}: its explained pairs need atol ≈ 1e-06 in fp32, 0.004 in bf16"
    assert len(lines) == 3
