"""The figures of ``fpa triage --report`` agree with each other: one colour per verdict (arithmetic in greys, blues
and greens, the candidate wrong or no verdict in reds and oranges) in every figure and legend, whole numbers on
the axis that counts pairs, the problems in one order in every figure and table, and the tolerance a problem needs
given per precision (a bf16 candidate never raises what its fp32 kernels need). Built from rows made by hand in
the shape ``triage`` returns: no worker runs.
"""

from __future__ import annotations

import colorsys
import datetime
import functools
import html
import pathlib
import re
import tempfile

import pytest

from fp_analysis.model.verdict import CAUSES, FALSE_PASS_VERDICTS, Outcome
from fp_analysis.triage.report import (
    VERDICT_COLOURS,
    report_figures,
    verdict_colour,
    verdict_order,
    write_report,
)
from fp_analysis.triage.summary import arithmetic_precision, problem_order, summarize


@pytest.fixture(autouse=True)
def _seaborn():
    """Each test skipped without seaborn; imported by the tests, not at collection (seaborn's import, scipy.stats's
    with it, takes ~2 s in each pytest-xdist worker, which all collect this module)."""
    pytest.importorskip("seaborn")


def to_hex(colour, keep_alpha: bool) -> str:
    from matplotlib.colors import to_hex as matplotlib_to_hex

    return matplotlib_to_hex(colour, keep_alpha=keep_alpha)


def to_rgb(colour) -> tuple[float, float, float]:
    from matplotlib.colors import to_rgb as matplotlib_to_rgb

    return matplotlib_to_rgb(colour)


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


# The page explains itself: the run's settings, what each verdict family and column means, a caption and an alt text
# per figure, no column empty for every pair, no problem left silently blank, the counts in the CLI's order, the manual.


def _page(tmp_path, result=None) -> str:
    """The page of ``result``; of ``_result()`` where None, drawn once for the tests that read it (seconds each)."""
    if result is None:
        return _default_page()
    return write_report(result, tmp_path / "t.html", title="t").read_text()


@functools.lru_cache(maxsize=1)
def _default_page() -> str:
    with tempfile.TemporaryDirectory() as folder:
        return write_report(_result(), pathlib.Path(folder) / "t.html", title="t").read_text()


def _settings(page: str) -> dict[str, str]:
    """The run's settings table of ``page``: name → value, as the page writes them (unescaped)."""
    table = page[page.index("<h2>Run settings</h2>") :]
    table = table[: table.index("</table>")]
    return {name: html.unescape(value) for name, value in re.findall(r"<th class='l'>(.*?)</th><td[^>]*>(.*?)</td>",
                                                                     table)}  # fmt: skip


def test_the_page_gives_the_settings_the_pairs_ran_under(tmp_path, monkeypatch):
    from fp_analysis.options import ExplainOptions
    from fp_analysis.triage import pairs as triage_pairs
    from fp_analysis.triage.discovery import discover
    from fp_analysis.triage.keys import tool_version
    from fp_analysis.triage.pool import Pool

    def no_worker(placement, todo, options, given):  # each pair's row, as a job would give it
        for pair in todo:
            yield pair, {"verdict": "identical", "explained": True, "exit_code": 0, "check_passed": True,
                         "max_abs": 0.0, "candidate_vs_fp64": 1e-6, "reference_vs_fp64": 1e-6, "needed_atol": 1e-5,
                         "error": None, "fate": None, "notes": None, "build_seconds": None, "seconds": 0.5}  # fmt: skip

    monkeypatch.setattr(triage_pairs, "local_rows", no_worker)
    pairs = discover(pathlib.Path(__file__).resolve().parents[2] / "examples" / "runs")[:3]
    options = ExplainOptions("cpu", "tf32", trials=3, seed=77, atol=2e-4, rtol=3e-5, timeout=60)
    before = datetime.datetime.now().astimezone().replace(microsecond=0)
    result = triage_pairs.triage(pairs, options, Pool(1), store=False)
    settings = result["settings"]
    assert {k: settings[k] for k in ("device", "reference_mode", "trials", "seed", "atol", "rtol", "timeout")} == {
        "device": "cpu", "reference_mode": "tf32", "trials": 3, "seed": 77, "atol": 2e-4, "rtol": 3e-5, "timeout": 60
    }  # fmt: skip
    assert settings["version"] == tool_version()
    started = datetime.datetime.fromisoformat(settings["started"])
    assert before <= started <= datetime.datetime.now().astimezone()
    shown = _settings(_page(tmp_path, result))
    assert shown["pairs"].startswith("3 (3 run, 0 reused")
    assert shown["device"].startswith("cpu")
    assert shown["reference mode"] == "tf32"
    assert "3 trials" in shown["check"] and "seed 77" in shown["check"]
    assert "atol=0.0002" in shown["check"] and "rtol=3e-05" in shown["check"]
    assert shown["timeout"].startswith("60 s")
    assert shown["fpa version"] == tool_version()
    assert settings["started"].replace("T", " ") in shown["date"]


def test_settings_not_recorded_are_said_so_and_user_strings_escaped(tmp_path):
    from fp_analysis.triage.keys import tool_version

    shown = _settings(_page(tmp_path))  # a result without settings: an older fpa's, or made by hand
    assert shown["pairs"].startswith(f"{len(SPEC)} ")
    assert "not recorded" in shown["check"] and "atol=0.0001" in shown["check"]
    assert tool_version() in shown["fpa version"] and "not recorded" in shown["fpa version"]
    assert "page written" in shown["date"] and shown["reference mode"] == "not recorded"
    settings = {"device": "cpu", "reference_mode": None, "trials": 5, "seed": 42, "timeout": 300.0,
                "version": "1.0<b>", "started": "2031-02-03T04:05:06+00:00"}  # fmt: skip
    page = _page(tmp_path, {**_result(), "settings": settings})
    assert "<b>" not in page and "1.0&lt;b&gt;" in page
    shown = _settings(page)
    assert shown["reference mode"].startswith("as given") and "2031-02-03 04:05:06" in shown["date"]


def test_the_tables_say_what_their_terms_mean(tmp_path):
    page = _page(tmp_path)
    pairs_table = page[page.index("<h2>Pairs</h2>") :]
    head = pairs_table[: pairs_table.index("</tr>")]
    assert "<th>seconds</th>" in head and "<th>s</th>" not in head
    glossary = pairs_table[pairs_table.index("</table>") :]
    glossary = glossary[: glossary.index("</ul>")]
    for term in ("check", "max |diff|", "candidate vs fp64", "needed atol", "seconds", "verdict"):
        assert f"<strong>{html.escape(term)}</strong>: " in glossary, term
    assert "5 seeded trials" not in glossary and "atol=0.0001" in glossary  # trials not recorded: not made up
    families = page[page.index("<ul class='glossary'>") :]
    families = families[: families.index("</ul>")]
    lines = families.split("<li>")[1:]
    assert [line.split(" (")[0] for line in lines] == ["Arithmetic explains the difference", "The candidate is wrong",
                                                     "No verdict"]  # fmt: skip
    assert "user_code_failed" in lines[2] and "bug" in lines[1] and "accumulation_order" in lines[0]
    tolerance = page[page.index("<h2>Tolerance needed per precision") :]
    tolerance = tolerance[tolerance.index("</table>") :]
    assert tolerance.startswith("</table><p class='glossary'>fp32 arithmetic: ")


def test_each_figure_has_a_caption_and_an_alt_text_of_its_own(tmp_path):
    page = _page(tmp_path)
    figures = re.findall(r"<figure><img alt='([^']*)' src='data:image/png;base64,[^']*'><figcaption>(.*?)"
                         r"</figcaption></figure>", page)  # fmt: skip
    assert len(figures) == 3 == page.count("data:image/png;base64,")
    alts = [html.unescape(alt) for alt, _ in figures]
    assert len(set(alts)) == 3 and all(len(alt) > 60 and alt.lower() != "figure" for alt in alts)
    for alt in alts:  # each says what it draws, problem by problem, by the names the figures give them
        assert all(label in alt for label in ("level1/2_relu", "10_conv", "level2/2_relu", "3_<b>odd")), alt
    assert "bug 0.2 to 0.3" in alts[1] and "0.0002 in fp32" in alts[2]
    captions = [caption for _, caption in figures]
    assert "number of pairs" in captions[0] and "fp64" in captions[1] and "dashed" in captions[2]
    assert all(len(caption) > 150 for caption in captions)


def test_a_column_empty_for_every_pair_is_left_out(tmp_path):
    def head(page: str) -> str:
        table = page[page.index("<h2>Pairs</h2>") :]
        return table[: table.index("</tr>")]

    result = _result()  # no expected label, no error, no note
    page = _page(tmp_path, result)
    assert ">expected<" not in head(page) and ">error<" not in head(page) and ">notes<" not in head(page)
    assert ">check<" in head(page) and ">candidate vs fp64<" in head(page)
    assert "Left out, empty for every pair: expected, error, notes." in page
    result["pairs"][3] = {**result["pairs"][3], "expected": "identical", "error": "boom <here>"}
    page = _page(tmp_path, result)
    assert ">expected<" in head(page) and ">error<" in head(page) and ">notes<" not in head(page)
    assert "boom &lt;here&gt;" in page and "Left out, empty for every pair: notes." in page


def test_a_problem_with_no_explained_pair_is_named_not_left_blank(tmp_path):
    import matplotlib.pyplot as plt

    drawn = report_figures(_result())
    try:
        panels = drawn[2][1].axes
        labels = _top_to_bottom(panels[0])
        for axes in panels:  # the row of 3_<b>odd (nonfinite, parameter_mismatch) says so in every panel
            notes = [t for t in axes.texts if t.get_text() == "no explained pair"]
            assert [round(t.get_position()[1]) for t in notes] == [labels.index("3_<b>odd")]
    finally:
        for _, figure in drawn:
            plt.close(figure)
    page = _page(tmp_path)
    caption = page[page.index("<h2>Tolerance needed, per precision") :]
    caption = caption[caption.index("<figcaption>") : caption.index("</figcaption>")]
    assert "No explained pair</strong>" in caption and "3_&lt;b&gt;odd (parameter_mismatch 1, nonfinite 1)" in caption
    table = page[page.index("<h2>Tolerance needed per precision") :]
    table = table[: table.index("</table>")]
    assert re.search(r">3_&lt;b&gt;odd</td><td [^>]*>no explained pair", table)
    explained = summarize([row for row in _result()["pairs"] if "odd" not in row["problem"]], 1e-4, 1e-4)
    page = _page(tmp_path, {**_result(), "pairs": [r for r in _result()["pairs"] if "odd" not in r["problem"]],
                            "summary": explained})  # fmt: skip
    assert "no explained pair" not in page.lower()  # every problem explained: no note, no row, no term


def test_the_verdict_counts_are_in_the_order_the_command_line_prints_them(tmp_path):
    from fp_analysis.cli.console import out
    from fp_analysis.cli.triage import _print_triage

    result = _result()
    page = _page(tmp_path, result)
    line = re.search(r"<p>Verdicts \(pairs each\): (.*?)\.</p>", page).group(1)
    on_page = [html.unescape(item).rsplit(" ", 1) for item in line.split(", ")]
    with out.capture() as captured:
        _print_triage({**result, "timing": {"pairs": 0}}, "runs", 1e-4, 1e-4)
    printed = captured.get()  # "verdicts: …" up to the next line's "false passes", wrapped to the console's width
    printed = " ".join(printed[printed.index("verdicts: ") : printed.index("\nfalse passes")].split())
    assert on_page == [item.rsplit(" ", 1) for item in printed.removeprefix("verdicts: ").split(", ")]
    assert {verdict: int(n) for verdict, n in on_page} == result["summary"]["verdicts"]
    assert on_page[0][0] != "bug"  # bug has the most pairs (3): the CLI's order is not the counts', nor is the page's


def test_the_page_names_its_manual(tmp_path):
    page = _page(tmp_path)
    footer = page[page.rindex("<hr>") :]
    assert "<code>docs/triage.md</code>" in footer
    assert (pathlib.Path(__file__).resolve().parents[2] / "docs" / "triage.md").is_file()
