"""``fpa triage --report FILE.html``: one self-contained HTML page of a triage, its figures drawn with seaborn.

The page needs nothing beside it (the figures are PNGs inside it, the style is inline), so it can be mailed,
attached to a CI run or opened from an artifact store. It holds what a person grading many kernels asks first:

* the counts by verdict, per problem (which problems fail, and why: arithmetic or bugs);
* each candidate's error against the Model in fp64, per problem, coloured by verdict (where the bugs sit above
  the arithmetic);
* the tolerance each problem's explained pairs need against the one the check used (the problems whose check
  is too tight, and by how much);
* the false passes (the check passed, the verdict says the candidate is wrong), the table of pairs, with each
  failed pair's error, and the time the run took.

Every string from the user's files (ids, paths, error messages) is escaped. Needs seaborn, matplotlib and pandas
(the ``notebooks`` extra): without them ``write_report`` raises a ``ParameterError`` naming the install.
"""

from __future__ import annotations

import base64
import html
import io
import math
import pathlib

from ..errors import ParameterError

__all__ = ["check_report_path", "write_report"]

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 1200px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; }
table { border-collapse: collapse; font-size: 0.85em; }
td, th { border: 1px solid #ccc; padding: 3px 7px; text-align: right; }
td.l, th.l { text-align: left; }
.bad { color: #b00020; font-weight: bold; } .muted { color: #666; }
img { max-width: 100%; margin: 0.5em 0; }
"""


def write_report(result: dict, path: str | pathlib.Path, *, title: str) -> pathlib.Path:
    """Write ``result`` (what ``fp_analysis.triage.pairs.triage`` returned) as one HTML page at ``path``; its path."""
    plt, pd, sns = _plotting()
    path = check_report_path(path)
    rows = pd.DataFrame(result["pairs"])
    rows["problem_name"] = [_problem_name(p) for p in rows["problem"]]
    summary = result["summary"]
    figures = [
        _verdict_counts(rows, plt, sns),
        _errors_vs_fp64(rows, plt, sns),
        _needed_tolerance(summary, rows, plt),
    ]
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        _overview(result),
        *(f"<h2>{html.escape(caption)}</h2>{_png(figure, plt)}" for caption, figure in figures if figure is not None),
        _false_passes(summary),
        _pairs_table(result["pairs"]),
        "</body></html>",
    ]
    try:
        path.write_text("\n".join(parts), encoding="utf-8")
    except OSError as error:
        raise ParameterError(f"Cannot write --report {str(path)!r}: {error.strerror or error}.") from None
    return path


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
    """pyplot (drawing off screen), pandas and seaborn; a ParameterError naming the install without them."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import pandas as pd
        import seaborn as sns
    except ImportError as error:
        raise ParameterError(
            f"--report draws its figures with seaborn, matplotlib and pandas ({error.name} is missing): "
            "pip install 'fp_analysis[notebooks]'"
        ) from None
    return plt, pd, sns


def _problem_name(problem: str) -> str:
    """A problem's short name: its folder (problem files are all called problem.py in KernelBench runs)."""
    p = pathlib.PurePath(problem)
    name = p.parent.name if p.name == "problem.py" and p.parent.name else p.stem
    return name.replace("$", r"\$")  # matplotlib reads text between dollars as mathematics


def _png(figure, plt) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return f"<img alt='figure' src='data:image/png;base64,{base64.b64encode(buffer.getvalue()).decode()}'>"


def _verdict_counts(rows, plt, sns):
    import pandas as pd

    table = pd.crosstab(rows["problem_name"], rows["verdict"])
    figure, axes = plt.subplots(figsize=(9, 0.5 + 0.45 * max(3, len(table))))
    table.plot.barh(stacked=True, ax=axes, color=sns.color_palette("tab10", len(table.columns)), width=0.7)
    axes.invert_yaxis()  # problems top to bottom in name order
    axes.set(ylabel="problem", xlabel="pairs", title="verdicts per problem")
    axes.legend(title="verdict", bbox_to_anchor=(1.01, 1), loc="upper left", fontsize=8)
    return "Verdicts per problem", figure


def _errors_vs_fp64(rows, plt, sns):
    errors = rows[[isinstance(v, float) and math.isfinite(v) and v > 0 for v in rows["candidate_vs_fp64"]]]
    if errors.empty:
        return "Candidate error against fp64", None
    figure, axes = plt.subplots(figsize=(9, 0.5 + 0.45 * max(3, errors["problem_name"].nunique())))
    sns.stripplot(data=errors, y="problem_name", x="candidate_vs_fp64", hue="verdict", orient="h", size=7,
                  jitter=0.15, ax=axes)  # fmt: skip
    axes.set_xscale("log")
    axes.set(ylabel="problem", xlabel="max |candidate − Model in fp64|", title="each candidate's error against fp64")
    axes.legend(title="verdict", bbox_to_anchor=(1.01, 1), loc="upper left", fontsize=8)
    return "Candidate error against the Model in fp64", figure


def _needed_tolerance(summary, rows, plt):
    needed = summary["needed_atol_by_problem"]
    if not needed:
        return "Tolerance needed", None
    names = [_problem_name(p) for p in needed]
    figure, axes = plt.subplots(figsize=(9, 0.5 + 0.45 * max(3, len(names))))
    axes.barh(names, list(needed.values()), color="#4c72b0", label="atol the explained pairs need")
    used = summary["tolerance_used"]["atol"]
    axes.axvline(used, color="#b00020", linestyle="--", label=f"atol the check used ({used:g})")
    axes.set_xscale("log")
    axes.set(xlabel="atol", ylabel="problem", title="the tolerance each problem needs against the one used")
    axes.legend(fontsize=8)
    return "Tolerance needed against the one used", figure


def _overview(result: dict) -> str:
    summary, timing = result["summary"], result.get("timing") or {}
    ordered = sorted(summary["verdicts"].items(), key=lambda kv: -kv[1])
    verdicts = ", ".join(f"{html.escape(str(v))} {n}" for v, n in ordered)
    used = summary["tolerance_used"]
    lines = [
        f"<p>{summary['pairs']} pairs ({result.get('ran', 0)} run, {result.get('reused', 0)} reused from the store); "
        f"check at atol={used['atol']:g}, rtol={used['rtol']:g}.</p>",
        f"<p>Verdicts: {verdicts}.</p>",
    ]
    matched, labelled = summary.get("expected_matched", [0, 0])
    if labelled:
        lines.append(f"<p>Expected labels: {matched} of {labelled} matched.</p>")
    if timing.get("pairs"):
        lines.append(
            f"<p class='muted'>{timing['pairs']} pairs in {timing['wall_s']:.0f} s "
            f"({timing['pairs_per_hour']:.0f} pairs/hour) on {timing['slots']} {html.escape(timing['device'])} "
            "slot(s); "
            f"{timing['explain_s']:.0f} s explaining, {timing['build_s']:.0f} s building "
            f"{timing['built_ahead']} solutions ahead; slots idle {100 * timing['slot_idle_share']:.0f} %.</p>"
        )
    return "\n".join(lines)


def _false_passes(summary: dict) -> str:
    if not summary["false_passes"]:
        return "<h2>False passes</h2><p>None: no pair passed the check with a verdict that says it is wrong.</p>"
    items = "".join(f"<li>{html.escape(p)}</li>" for p in summary["false_passes"])
    heading = "False passes: the check passed, the verdict says the candidate is wrong"
    return f"<h2 class='bad'>{heading}</h2><ul>{items}</ul>"


def _pairs_table(pairs: list[dict]) -> str:
    def num(value) -> str:
        return "-" if value is None else f"{value:.3g}"

    head = "".join(
        f"<th class='{'l' if c in ('pair', 'verdict', 'expected', 'error') else ''}'>{c}</th>"
        for c in ("pair", "verdict", "expected", "check", "max |diff|", "candidate vs fp64", "needed atol", "s",
                  "error")
    )  # fmt: skip
    body = []
    for row in pairs:
        check = "-" if row.get("check_passed") is None else ("pass" if row["check_passed"] else "fail")
        expected = row.get("expected")
        wrong = expected and row["verdict"] not in str(expected).split("|")
        body.append(
            "<tr>"
            f"<td class='l'>{html.escape(str(row['pair_id']))}</td>"
            f"<td class='l{' bad' if wrong else ''}'>{html.escape(str(row['verdict']))}</td>"
            f"<td class='l'>{html.escape(str(expected or ''))}</td><td>{check}</td>"
            f"<td>{num(row.get('max_abs'))}</td><td>{num(row.get('candidate_vs_fp64'))}</td>"
            f"<td>{num(row.get('needed_atol') if row.get('explained') else None)}</td>"
            f"<td>{row.get('seconds') or 0:.1f}</td>"
            f"<td class='l'>{html.escape(str(row.get('error') or ''))}</td></tr>"
        )
    return f"<h2>Pairs</h2><table><tr>{head}</tr>{''.join(body)}</table>"
