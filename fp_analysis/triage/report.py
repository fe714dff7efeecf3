"""``fpa triage --report FILE.html``: one self-contained HTML page of a triage, its figures drawn with matplotlib
in seaborn's style.

The page needs nothing beside it (the figures are PNGs inside it, the style is inline), so it can be mailed,
attached to a CI run or opened from an artifact store, and it explains itself (its words are ``report_text``'s): the
settings the pairs ran under (device, reference mode, trials, seed, atol/rtol, timeout, fpa's version, the date),
what each verdict family and each column means, a caption and an alt text under each figure, the manual's name. It
holds what a person grading many kernels asks first:

* the counts by verdict, per problem (which problems fail, and why: arithmetic or bugs);
* each candidate's error against the Model in fp64, per problem, coloured by verdict (where the bugs sit above
  the arithmetic);
* the tolerance each problem's explained pairs need, per precision of their arithmetic (fp32, TF32, fp16, bf16:
  a bf16 candidate's need is its own, never the fp32 kernels'), against the one the check used;
* the false passes (the check passed, the verdict says the candidate is wrong), the table of pairs, with each
  failed pair's error (a column empty for every pair left out), and the time the run took.

Every figure and the page's legend give a verdict the same colour (``VERDICT_COLOURS``, ``verdict_colour``), list
the verdicts in one order (``verdict_order``) and the problems in one order (``summary.problem_order``), top to
bottom; counts of pairs are whole numbers on their axes. A problem with no explained pair keeps its row in the
tolerance figure, labelled "no explained pair", and is named under it.

Every string from the user's files (ids, paths, error messages) is escaped. Needs seaborn and matplotlib (the
``notebooks`` extra): without them ``write_report`` raises a ``ParameterError`` naming the install.
"""

from __future__ import annotations

import base64
import dataclasses
import html
import io
import math
import pathlib
import zlib
from collections import Counter
from collections.abc import Iterable

from ..errors import ParameterError, install_hint
from ..model.verdict import CauseKind, Outcome
from . import report_text as text
from .report_text import PRECISION_TITLES
from .summary import PRECISIONS, arithmetic_precision, problem_order

__all__ = [
    "VERDICT_COLOURS",
    "check_report_path",
    "report_figures",
    "verdict_colour",
    "verdict_order",
    "write_report",
]

# The one colour of each verdict (and of each cause a verdict of several names), in every figure and legend, from
# the mildest to the worst: arithmetic in greys, blues (fp32 orders, formulas, approximations; slate: the candidate
# not deterministic) and greens (TF32, fp16, bf16: the reference's light, the candidate's dark); the candidate
# wrong, or no verdict, in oranges and reds. A verdict of several causes takes its worst cause's colour, tinted
# (``verdict_colour``).
VERDICT_COLOURS: dict[str, str] = {
    Outcome.IDENTICAL.value: "#cccccc",
    CauseKind.SHARED_TF32.value: "#b0b0b0",
    CauseKind.SHARED_FP16.value: "#969696",
    CauseKind.SHARED_BF16.value: "#7a7a7a",
    CauseKind.ACCUMULATION_ORDER.value: "#9ecae1",
    CauseKind.FORMULA.value: "#6baed6",
    CauseKind.GELU_APPROXIMATION.value: "#3182bd",
    CauseKind.APPROXIMATION.value: "#08519c",
    CauseKind.REFERENCE_TF32.value: "#c7e9c0",
    CauseKind.REFERENCE_FP16.value: "#a1d99b",
    CauseKind.REFERENCE_BF16.value: "#74c476",
    CauseKind.CANDIDATE_TF32.value: "#41ab5d",
    CauseKind.CANDIDATE_FP16.value: "#238b45",
    CauseKind.CANDIDATE_BF16.value: "#00582a",
    CauseKind.NONDETERMINISTIC.value: "#4a5a78",
    CauseKind.PARAMETER_MISMATCH.value: "#fdae6b",
    CauseKind.NONFINITE.value: "#f16913",
    CauseKind.BUG.value: "#d7191c",
    Outcome.REFERENCE_NONFINITE.value: "#fdd0a2",
    Outcome.OUT_OF_SCOPE.value: "#fc9272",
    Outcome.USAGE_ERROR.value: "#d94801",
    Outcome.USER_CODE_FAILED.value: "#a50f15",
    Outcome.INTERNAL_ERROR.value: "#67000d",
}
_RANK = {name: rank for rank, name in enumerate(VERDICT_COLOURS)}
_UNKNOWN = ("#8c6bb1", "#6a51a3", "#9e9ac8", "#54278f")  # purples: a verdict none of whose names is in the table

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1200px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; }
td, th { border: 1px solid #ccc; padding: 3px 7px; text-align: right; }
td.l, th.l { text-align: left; }
.bad { color: #b00020; font-weight: bold; } .muted { color: #666; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; margin: 0 0.3em 0 0.9em; vertical-align: middle; }
td .swatch, li .swatch { margin-left: 0.2em; }
img { max-width: 100%; margin: 0.5em 0; }
figure { margin: 0; } figcaption { font-size: 0.9em; color: #444; max-width: 60em; }
.glossary { font-size: 0.85em; color: #444; max-width: 70em; } ul.glossary { padding-left: 1.2em; }
table.settings th { background: #f4f4f4; font-weight: normal; }
"""


def verdict_colour(verdict) -> str:
    """The colour of ``verdict`` in every figure: ``VERDICT_COLOURS``'s; a verdict of several causes
    ("nondeterministic + accumulation_order") takes its worst known cause's, tinted by its name (the same every
    run); a verdict none of whose names is known, a purple chosen by its name."""
    name = str(verdict)
    if name in VERDICT_COLOURS:
        return VERDICT_COLOURS[name]
    digest = zlib.crc32(name.encode("utf-8", "replace"))
    worst = _worst_part(name)
    if worst is None:
        return _UNKNOWN[digest % len(_UNKNOWN)]
    red, green, blue = (int(VERDICT_COLOURS[worst][i : i + 2], 16) for i in (1, 3, 5))
    share = 0.25 + 0.1 * (digest % 4)  # towards white
    return "#" + "".join(f"{round(c + (255 - c) * share):02x}" for c in (red, green, blue))


def verdict_order(verdicts: Iterable) -> list[str]:
    """The verdicts, each once, in the order every figure and legend lists them: by their worst cause, mildest
    first (``VERDICT_COLOURS``' order), a verdict of several causes after its worst cause alone, unknown ones last."""

    def key(name: str) -> tuple:
        worst = _worst_part(name)
        return worst is None, _RANK.get(worst, 0), name not in VERDICT_COLOURS, name

    return sorted({str(v) for v in verdicts}, key=key)


def _worst_part(verdict: str) -> str | None:
    known = [part for part in verdict.split(" + ") if part in _RANK]
    return max(known, key=_RANK.__getitem__, default=None)


def write_report(result: dict, path: str | pathlib.Path, *, title: str) -> pathlib.Path:
    """Write ``result`` (what ``fp_analysis.triage.pairs.triage`` returned) as one HTML page at ``path``; its path."""
    plt, _ = _plotting()
    path = check_report_path(path)
    layout = _Layout.of(result["pairs"])
    summary = result["summary"]
    parts = [
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        text.header(result),
        text.verdict_glossary(layout),
        *(
            _figure_html(kind, heading, figure, layout, summary, plt)
            for kind, (heading, figure) in zip(_KINDS, _figures(layout, summary), strict=True)
        ),
        text.tolerance_table(layout, summary),
        text.false_passes(summary),
        text.pairs_table(layout, result),
        text.manual_footer(),
        "</body></html>",
    ]
    try:
        path.write_text("\n".join(parts), encoding="utf-8")
    except OSError as error:
        raise ParameterError(f"Cannot write --report {str(path)!r}: {error.strerror or error}.") from None
    return path


def report_figures(result: dict) -> list[tuple[str, object]]:
    """The report's figures, (heading, matplotlib figure or None where there is nothing to draw), before they are
    encoded: the verdicts per problem, each candidate's error against fp64, the tolerance needed per precision."""
    return _figures(_Layout.of(result["pairs"]), result["summary"])


def check_report_path(path: str | pathlib.Path) -> pathlib.Path:
    """The report's path, refused at once (before any pair runs) unless it ends in .html in a folder that exists
    and the libraries that draw the figures are installed."""
    _plotting()
    if not str(path).strip():
        raise ParameterError("Got an empty --report: give a path ending in .html.")
    path = pathlib.Path(path)
    if path.suffix.lower() not in (".html", ".htm"):
        raise ParameterError(f"Got --report {str(path)!r}, but the report is an HTML page: give a path ending in .html")
    if path.is_dir():
        raise ParameterError(f"Got --report {str(path)!r}, which is a folder: give a file path ending in .html.")
    if not path.parent.is_dir():
        raise ParameterError(f"Got --report {str(path)!r}, but its folder {str(path.parent)!r} does not exist.")
    existed = path.exists()
    try:  # the run may take hours: learn now that the page could not be written
        with open(path, "a"):
            pass
    except OSError as error:
        reason = error.strerror or error
        raise ParameterError(f"Got --report {str(path)!r}, which cannot be written: {reason}.") from None
    if not existed:
        path.unlink()
    return path


def _plotting():
    """pyplot (drawing off screen) and seaborn; a ParameterError naming the install without them."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import seaborn as sns
    except ImportError as error:
        raise ParameterError(
            f"--report draws its figures with seaborn and matplotlib ({error.name} is missing): "
            f"{install_hint('report')}"
        ) from None
    return plt, sns


@dataclasses.dataclass(frozen=True)
class _Layout:
    """What every figure and table of a page shares: the pairs (in problem order), the problems in their one order
    with their labels, the verdicts in their one order with their colours."""

    rows: list[dict]
    problems: list[str]
    labels: dict[str, str]
    verdicts: list[str]
    colours: dict[str, str]
    rows_of: dict[str, int]  # problem → its row in the figures, from the top

    @classmethod
    def of(cls, pairs: list[dict]) -> _Layout:
        problems = problem_order(str(row["problem"]) for row in pairs)
        place = {problem: i for i, problem in enumerate(problems)}
        rows = sorted(pairs, key=lambda row: place[str(row["problem"])])  # stable: a problem's pairs as they came
        verdicts = verdict_order(row["verdict"] for row in rows)
        colours = {v: verdict_colour(v) for v in verdicts}
        return cls(rows, problems, _problem_labels(problems), verdicts, colours, place)

    def place(self, row: dict) -> int:
        return self.rows_of[str(row["problem"])]


def _problem_labels(problems: list[str]) -> dict[str, str]:
    """Each problem's short name: its folder (problem files are all called problem.py in KernelBench runs) or its
    file's stem, with as many folders above it as tell it from the others; its path where none do."""
    parts = {}
    for problem in problems:
        path = pathlib.PurePath(problem)
        folder = [part for part in path.parent.parts if part != path.anchor]
        named = folder if path.name == "problem.py" and folder else [*folder, path.stem]
        parts[problem] = [part for part in named if part] or [problem]
    depth = dict.fromkeys(problems, 1)
    while True:
        labels = {p: "/".join(parts[p][-depth[p] :]) for p in problems}
        counts = Counter(labels.values())
        clashing = [p for p in problems if counts[labels[p]] > 1 and depth[p] < len(parts[p])]
        if not clashing:
            return {p: labels[p] if counts[labels[p]] == 1 else p for p in problems}
        for problem in clashing:
            depth[problem] += 1


_KINDS = ("counts", "errors", "tolerance")  # the figures, in ``_figures``' order (``report_text.figure_text``)


def _figures(layout: _Layout, summary: dict) -> list[tuple[str, object]]:
    plt, sns = _plotting()
    with sns.axes_style("whitegrid"):
        return [_verdict_counts(layout, plt), _errors_vs_fp64(layout, plt), _needed_tolerance(layout, summary, plt)]


def _figure_html(kind: str, heading: str, figure, layout: _Layout, summary: dict, plt) -> str:
    """A figure as its heading, its PNG (its alt text saying what it draws) and its caption; a line saying why it
    is not drawn where there was nothing to draw."""
    if figure is None:
        why = {"errors": "no pair has an error against fp64 above 0 (none gave an output, or all are exact)",
               "tolerance": "no pair is explained, so none needs a tolerance"}.get(kind, "nothing to draw")  # fmt: skip
        return f"<h2>{html.escape(heading)}</h2><p class='muted'>Not drawn: {why}.</p>"
    caption, alt = text.figure_text(kind, layout, summary)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    image = base64.b64encode(buffer.getvalue()).decode()
    return (f"<h2>{html.escape(heading)}</h2><figure><img alt='{html.escape(alt)}' src='data:image/png;base64,"
            f"{image}'><figcaption>{caption}</figcaption></figure>")  # fmt: skip


def _problem_axis(axes, layout: _Layout) -> None:
    """The problems on the y axis, one row each, in their order from the top."""
    axes.set_yticks(range(len(layout.problems)), [_mathtext_safe(layout.labels[p]) for p in layout.problems])
    axes.set_ylim(len(layout.problems) - 0.5, -0.5)
    axes.set_ylabel("problem")


def _mathtext_safe(text: str) -> str:
    return text.replace("$", r"\$")  # matplotlib reads text between dollars as mathematics


def _figure_size(layout: _Layout, width: float = 9.0) -> tuple[float, float]:
    return width, 0.5 + 0.45 * max(3, len(layout.problems))


def _verdict_counts(layout: _Layout, plt):
    from matplotlib.ticker import MaxNLocator

    counts = Counter((str(row["problem"]), str(row["verdict"])) for row in layout.rows)
    figure, axes = plt.subplots(figsize=_figure_size(layout))
    left = [0] * len(layout.problems)
    for verdict in layout.verdicts:
        widths = [counts[problem, verdict] for problem in layout.problems]
        axes.barh(range(len(layout.problems)), widths, left=left, height=0.7, color=layout.colours[verdict],
                  label=verdict, edgecolor="white", linewidth=0.5)  # fmt: skip
        left = [a + b for a, b in zip(left, widths, strict=True)]
    _problem_axis(axes, layout)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))  # pairs are counted: no half pairs on the axis
    axes.set(xlabel="pairs", title="verdicts per problem")
    axes.legend(title="verdict", bbox_to_anchor=(1.01, 1), loc="upper left", fontsize=8)
    return "Verdicts per problem", figure


def _jitter(i: int) -> float:
    """A point's offset within its problem's row, the same every run (the golden ratio's sequence: spread evenly)."""
    return ((i * 0.6180339887) % 1.0 - 0.5) * 0.4


def _errors_vs_fp64(layout: _Layout, plt):
    points = [(i, row) for i, row in enumerate(layout.rows) if _positive(row.get("candidate_vs_fp64"))]
    if not points:
        return "Candidate error against the Model in fp64", None
    figure, axes = plt.subplots(figsize=_figure_size(layout))
    _dots(axes, layout, points, "candidate_vs_fp64")
    _problem_axis(axes, layout)
    axes.set_xscale("log")
    axes.set(xlabel="max |candidate − Model in fp64|", title="each candidate's error against fp64")
    axes.legend(title="verdict", bbox_to_anchor=(1.01, 1), loc="upper left", fontsize=8)
    return "Candidate error against the Model in fp64", figure


def _dots(axes, layout: _Layout, points: list[tuple[int, dict]], field: str) -> dict:
    """Each pair of ``points`` (its index among the layout's rows, its row) as a dot at its ``field``, in its
    problem's row and its verdict's colour: one labelled artist per verdict; verdict → that artist."""
    drawn = {}
    for verdict in layout.verdicts:
        mine = [(i, row) for i, row in points if str(row["verdict"]) == verdict]
        if mine:
            drawn[verdict] = axes.scatter(
                [row[field] for _, row in mine], [layout.place(row) + _jitter(i) for i, row in mine], s=40,
                color=layout.colours[verdict], label=verdict, edgecolor="white", linewidth=0.5, zorder=3,
            )  # fmt: skip
    return drawn


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def _needed_tolerance(layout: _Layout, summary: dict, plt):
    """One panel per precision of the pairs' arithmetic, on one atol axis: each problem's largest need (an outlined
    bar), each explained pair's (a dot in its verdict's colour), and the check's atol (dashed); a problem with no
    explained pair is labelled so in its row."""
    from matplotlib.ticker import NullFormatter

    caption = "Tolerance needed, per precision of the arithmetic, against the one used"
    needed = summary["needed_atol_by_problem"]
    precisions = [p for p in PRECISIONS if any(p in per for per in needed.values())]
    if not precisions:
        return caption, None
    width, height = _figure_size(layout, max(9.0, 3.4 * len(precisions)))
    figure, panels = plt.subplots(1, len(precisions), sharex=True, sharey=True, squeeze=False, figsize=(width, height))
    used = summary["tolerance_used"]["atol"]
    missing = text.no_explained_pair(layout, summary)
    fixed, dots = {}, {}
    for precision, axes in zip(precisions, panels[0], strict=True):
        bars = [needed.get(problem, {}).get(precision, 0.0) for problem in layout.problems]
        fixed["the largest need of its pairs"] = axes.barh(
            range(len(layout.problems)), bars, height=0.6, facecolor="none", edgecolor="#333333", linewidth=1.2
        )
        explained = [
            (i, row)
            for i, row in enumerate(layout.rows)
            if row.get("explained")
            and _positive(row.get("needed_atol"))
            and arithmetic_precision(row["verdict"]) == precision
        ]
        dots.update(_dots(axes, layout, explained, "needed_atol"))
        for problem in missing:  # every pair a bug or failed: said, never a silent blank row
            axes.text(0.02, layout.rows_of[problem], "no explained pair", transform=axes.get_yaxis_transform(),
                      va="center", fontsize=8, fontstyle="italic", color="#555555",
                      bbox={"facecolor": "white", "edgecolor": "none", "pad": 1})  # fmt: skip
        if _positive(used):
            fixed[f"atol the check used ({used:g})"] = axes.axvline(used, color="#000000", linestyle="--")
        axes.set(xlabel="atol", title=PRECISION_TITLES.get(precision, precision))
    shown = [
        atol
        for atol in (used, *(row.get("needed_atol") for row in layout.rows if row.get("explained")))
        if _positive(atol)
    ]
    if shown:  # one log axis for every panel, from the bars' floor (their zero) to a little beyond the largest
        panels[0][0].set_xscale("log")
        panels[0][0].set_xlim(min(shown) / 3, max(shown) * 3)
        panels[0][0].xaxis.set_minor_formatter(NullFormatter())
    _problem_axis(panels[0][0], layout)
    handles = {**fixed, **{v: dots[v] for v in layout.verdicts if v in dots}}
    panels[0][-1].legend(handles.values(), handles.keys(), bbox_to_anchor=(1.01, 1), loc="upper left", fontsize=8)
    return caption, figure
