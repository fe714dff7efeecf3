"""The words of ``fpa triage --report``'s page (``report`` draws its figures): the run's settings, the counts, what
each verdict family and each column means, a caption and an alt text for each figure, the tables, the manual.

A page that is mailed or opened from an artifact store months later must say what it shows without its run: the
options the pairs ran under, the version and the date; one line under each table for each of its terms; under each
figure, what it shows and how to read it. Columns empty for every pair are left out (and named). The verdict counts
are in the order ``fpa triage`` prints them (``verdict_counts``). Every string from the user's files is escaped.

``layout`` below is ``report._Layout``: the rows in problem order, the problems with their labels, the verdicts in
their one order with their colours.
"""

from __future__ import annotations

import datetime
import html
import math
from collections.abc import Callable

from ..model.verdict import CAUSES, FALSE_PASS_VERDICTS, Outcome
from ..run.extension_store import ANSWERS
from .keys import tool_version
from .summary import PRECISIONS, arithmetic_precision

__all__ = [
    "MANUAL",
    "PRECISION_TITLES",
    "false_passes",
    "figure_text",
    "header",
    "manual_footer",
    "no_explained_pair",
    "pairs_table",
    "tolerance_table",
    "verdict_counts",
    "verdict_family",
    "verdict_glossary",
]

MANUAL = "docs/triage.md"  # in fp_analysis's repository: what triage reads, runs and gives
PRECISION_TITLES = {"fp32": "fp32 arithmetic", "tf32": "TF32 linear ops", "fp16": "fp16 linear ops",
                    "bf16": "bf16 linear ops"}  # fmt: skip

# The verdict families, each with the colours its verdicts take and what it means; ``verdict_family`` sorts a
# verdict into one.
_WRONG = frozenset(FALSE_PASS_VERDICTS)
_NONE = frozenset(o.value for o in Outcome if o is not Outcome.IDENTICAL)
_ARITHMETIC = frozenset({Outcome.IDENTICAL.value, *CAUSES}) - _WRONG
_FAMILIES = {
    "arithmetic": "Arithmetic explains the difference (greys, blues, greens): the candidate computes what the Model "
    "does and only rounds otherwise (another order of its sums, another formula or approximation, a side's linear "
    "ops in TF32, fp16 or bf16); it is right, and its needed atol is the tolerance that admits it.",
    "wrong": "The candidate is wrong (oranges, reds): bug (no modelled arithmetic re-creates it; where it departs is "
    "located), parameter_mismatch (its weights are not the reference's), nonfinite (NaN or ±inf where the arithmetic "
    "gives numbers); no tolerance makes it right, and one whose check passed is a false pass.",
    "none": "No verdict (reds, oranges): user_code_failed (the solution raised, crashed, hung or returned no tensor: "
    "see its error), out_of_scope (the Model is beyond what fpa models), usage_error (the files are not a KernelBench "
    "pair), internal_error (a failure of fpa's own).",
    "unknown": "Not known to this version of fpa (purples).",
}


def verdict_family(verdict) -> str:
    """``arithmetic``, ``wrong`` (the candidate is), ``none`` (no verdict: the code failed, out of scope…) or
    ``unknown``; a verdict of several causes is in its worst cause's family."""
    parts = str(verdict).split(" + ")
    if any(part in _NONE for part in parts):
        return "none"
    if any(part in _WRONG for part in parts):
        return "wrong"
    return "arithmetic" if all(part in _ARITHMETIC for part in parts) else "unknown"


def verdict_counts(summary: dict) -> list[tuple[str, int]]:
    """(verdict, pairs) in the order ``fpa triage`` prints its ``verdicts:`` line (``cli.triage._print_triage``)."""
    return sorted(summary["verdicts"].items())


def _swatch(colour: str) -> str:
    return f"<span class='swatch' style='background:{colour}'></span>"


def _number(value) -> str:
    return "-" if value is None else f"{value:.3g}"


def header(result: dict, now: datetime.datetime | None = None) -> str:
    """The run's settings (a table), then its counts, expected labels, false passes and time. ``result`` without
    ``settings`` (made by hand, or by an older fpa): what ``summary`` and ``timing`` hold, the rest "not recorded",
    the version and date this page's."""
    summary, timing = result["summary"], result.get("timing") or {}
    settings = result.get("settings") or {}
    written = (now or datetime.datetime.now().astimezone()).isoformat(sep=" ", timespec="seconds")
    used = summary["tolerance_used"]

    def given(key: str, shown: Callable = str) -> str:
        return shown(settings[key]) if key in settings else "not recorded"

    device = settings.get("device") or timing.get("device") or "not recorded"
    slots = f", {timing['slots']} slot(s) at once" if timing.get("slots") else ""
    mode = settings.get("reference_mode") if "reference_mode" in settings else "not recorded"
    started = settings.get("started")
    rows = [
        (
            "pairs",
            f"{summary['pairs']} ({result.get('ran', 0)} run, {result.get('reused', 0)} reused from the store"
            + (f", {result['rejudged']} stored at another atol" if result.get("rejudged") else "")
            + ")",
        ),
        ("device", f"{device}{slots}"),
        ("reference mode", "as given (no precision emulated)" if mode is None else mode),
        (
            "check",
            f"KernelBench's: {given('trials')} trials, seed {given('seed')}, allclose at atol={used['atol']:g}, "
            f"rtol={used['rtol']:g}",
        ),
        ("timeout", given("timeout", lambda s: f"{s:g} s for each call into the user's code")),
        ("fpa version", settings.get("version") or f"{tool_version()} (this page's; the run's not recorded)"),
        (
            "date",
            f"run started {started.replace('T', ' ')}; page written {written}"
            if started
            else f"page written {written} (the run's start not recorded)",
        ),
    ]
    table = "".join(f"<tr><th class='l'>{name}</th><td class='l'>{html.escape(str(value))}</td></tr>"
                    for name, value in rows)  # fmt: skip
    counts = ", ".join(f"{html.escape(str(v))} {n}" for v, n in verdict_counts(summary))
    lines = [
        "<p>fpa triage ran KernelBench's check on each problem/solution pair and explained each pair's difference "
        "from the reference: rounding a named arithmetic re-creates, or the candidate wrong.</p>",
        f"<h2>Run settings</h2><table class='settings'>{table}</table>",
        f"<p>Verdicts (pairs each): {counts}.</p>",
    ]
    matched, labelled = summary.get("expected_matched", [0, 0])
    if labelled:
        lines.append(f"<p>Expected labels: {matched} of {labelled} matched.</p>")
    passes = len(summary.get("false_passes") or ())
    lines.append(f"<p>False passes (the check passed a candidate the verdict says is wrong): {passes}.</p>")
    if timing.get("pairs"):
        built = (
            f", {timing['build_s']:.0f} s building {timing['built_ahead']} ahead" if timing.get("built_ahead") else ""
        )
        if any(timing.get(f"extensions_{kind}") for kind in ANSWERS):  # ``run.extension_store``
            built += (f" ({timing['extensions_found']} extension(s) found built, {timing.get('extensions_built', 0)} "
                      f"compiled in fpa's store, {timing.get('extensions_failed', 0)} failed to compile there, "
                      f"{timing.get('extensions_own', 0)} by the solution)")  # fmt: skip
        lines.append(
            f"<p class='muted'>Time: {timing['pairs']} pairs run in {timing['wall_s']:.0f} s "
            f"({timing['pairs_per_hour']:.0f} pairs/hour) on {timing['slots']} {html.escape(str(timing['device']))} "
            f"slot(s); {timing['explain_s']:.0f} s explaining{built}; slots idle "
            f"{100 * timing['slot_idle_share']:.0f} %.</p>"
        )
    return "\n".join(lines)


def verdict_glossary(layout) -> str:
    """The colour of each verdict of the page, then one line per verdict family: what it means, and this run's
    verdicts in it."""
    items = "".join(f"{_swatch(layout.colours[v])}{html.escape(v)}" for v in layout.verdicts)
    lines = []
    for family, meaning in _FAMILIES.items():
        mine = [v for v in layout.verdicts if verdict_family(v) == family]
        if family == "unknown" and not mine:
            continue
        here = ", ".join(f"{_swatch(layout.colours[v])}{html.escape(v)}" for v in mine) or "none"
        lines.append(f"<li>{meaning} In this run: {here}.</li>")
    return (f"<p class='muted'>Verdict colours, in every figure:{items}</p>"
            f"<ul class='glossary'>{''.join(lines)}</ul>")  # fmt: skip


def no_explained_pair(layout, summary: dict) -> list[str]:
    """The problems none of whose pairs is explained (every pair a bug, or failed): they need no tolerance."""
    needed = summary["needed_atol_by_problem"]
    return [problem for problem in layout.problems if problem not in needed]


def _problem_verdicts(layout, summary: dict, problem: str) -> str:
    counts = summary["by_problem"].get(problem, {})
    return ", ".join(f"{v} {counts[v]}" for v in layout.verdicts if v in counts)


def figure_text(kind: str, layout, summary: dict) -> tuple[str, str]:
    """The caption (HTML) and alt text (plain: escape it) of the figure ``kind`` ("counts", "errors",
    "tolerance"): what it shows and how to read it; the alt text says what it draws, problem by problem."""
    label = layout.labels
    if kind == "counts":
        alt = "; ".join(f"{label[p]}: {_problem_verdicts(layout, summary, p)}" for p in layout.problems)
        return (
            "One bar per problem, its length the number of pairs, split by verdict in the colours above: greys, "
            "blues and greens are arithmetic (the candidate right up to rounding), oranges and reds a candidate "
            "wrong or no verdict. A problem whose bar is mostly red has few right candidates.",
            f"Stacked bars of the pairs of each problem by verdict. {alt}.",
        )
    if kind == "errors":
        parts = []
        for problem in layout.problems:
            mine = [
                row for row in layout.rows if str(row["problem"]) == problem and _positive(row.get("candidate_vs_fp64"))
            ]
            spans = []
            for verdict in (v for v in layout.verdicts if any(str(r["verdict"]) == v for r in mine)):
                errors = [r["candidate_vs_fp64"] for r in mine if str(r["verdict"]) == verdict]
                span = f"{min(errors):.2g}" if len(errors) == 1 else f"{min(errors):.2g} to {max(errors):.2g}"
                spans.append(f"{verdict} {span}")
            parts.append(f"{label[problem]}: {', '.join(spans) or 'none drawn'}")
        return (
            "One dot per pair, in its problem's row and its verdict's colour, at the largest |candidate − the Model "
            "evaluated in fp64| (log scale): the candidate's own error, apart from the reference's rounding. Bugs "
            "far right of their problem's arithmetic dots are larger than any rounding; a bug among them is as small "
            "as rounding, and only its verdict tells it apart. Pairs with no output (their code failed) or no error "
            "are not drawn.",
            f"Dots, one per pair, of each candidate's error against fp64 on a log axis. {'; '.join(parts)}.",
        )
    return _tolerance_text(layout, summary)


def _tolerance_text(layout, summary: dict) -> tuple[str, str]:
    needed, used = summary["needed_atol_by_problem"], summary["tolerance_used"]["atol"]
    missing = no_explained_pair(layout, summary)
    parts = [
        f"{layout.labels[p]}: "
        + (", ".join(f"{a:.2g} in {f}" for f, a in needed[p].items()) if p in needed else "no explained pair")
        for p in layout.problems
    ]
    named = "; ".join(f"{html.escape(layout.labels[p])} ({html.escape(_problem_verdicts(layout, summary, p))})"
                      for p in missing)  # fmt: skip
    note = (f" <strong>No explained pair</strong>, so no tolerance to show (labelled so in the figure): {named}."
            if missing else "")  # fmt: skip
    caption = (
        "One panel per precision of the arithmetic that explains the pairs (fp32; TF32, fp16, bf16: a side's "
        "convolutions and matrix products in that format). Each problem's outlined bar is the largest atol its "
        "explained pairs of that precision need, each dot one pair's need in its verdict's colour, and the dashed "
        f"line the atol the check used ({used:g}). A bar past the line: the check fails that problem's right "
        "candidates on rounding alone. Raising the check's atol to a bf16 panel's need would let fp32 kernels with "
        f"bugs that size pass: each precision needs its own. Bugs and failed pairs need no tolerance and are not "
        f"drawn.{note}"
    )
    return caption, f"Needed atol per problem and precision against the check's atol {used:g}: {'; '.join(parts)}."


def _positive(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value) and value > 0


def tolerance_table(layout, summary: dict) -> str:
    """Each problem's largest need per precision (above the check's atol in bold), a problem with no explained pair
    named in its row; then what the columns mean."""
    needed = summary["needed_atol_by_problem"]
    precisions = [p for p in PRECISIONS if any(p in per for per in needed.values())]
    if not precisions:
        return ""
    used = summary["tolerance_used"]["atol"]
    head = "".join(f"<th>{html.escape(PRECISION_TITLES.get(p, p))}</th>" for p in precisions)
    body = []
    for problem in layout.problems:
        label = f"<td class='l' title='{html.escape(problem)}'>{html.escape(layout.labels[problem])}</td>"
        if problem not in needed:
            verdicts = html.escape(_problem_verdicts(layout, summary, problem))
            body.append(f"<tr>{label}<td class='l muted' colspan='{len(precisions)}'>no explained pair ({verdicts})"
                        "</td></tr>")  # fmt: skip
            continue
        cells = []
        for precision in precisions:
            atol = needed[problem].get(precision)
            bad = " class='bad'" if atol is not None and atol > used else ""
            cells.append(f"<td{bad}>{'-' if atol is None else f'{atol:.3g}'}</td>")
        body.append(f"<tr>{label}{''.join(cells)}</tr>")
    glossary = (
        "fp32 arithmetic: pairs explained by an order, a formula or an approximation in fp32, or identical; "
        "TF32/fp16/bf16 linear ops: pairs whose verdict names a side's convolutions or matrix products in that format "
        "(the coarsest it names); -: none of its explained pairs in that precision"
    )
    if any(problem not in needed for problem in layout.problems):
        glossary += "; no explained pair: every pair of the problem a bug or failed, so no tolerance makes them pass"
    return (
        "<h2>Tolerance needed per precision</h2><p>The largest atol each problem's explained pairs need, apart for "
        f"each precision of their arithmetic (the check used atol={used:g}; above it in bold): a reduced-precision "
        "candidate's need is its own column, never the fp32 kernels'.</p>"
        f"<table><tr><th class='l'>problem</th>{head}</tr>{''.join(body)}</table>"
        f"<p class='glossary'>{glossary}.</p>"
    )


def _check(row: dict) -> str | None:
    return None if row.get("check_passed") is None else ("pass" if row["check_passed"] else "fail")


def _needed(row: dict) -> str | None:
    needed = row.get("needed_atol") if row.get("explained") else None
    return None if needed is None else f"{_number(needed)} ({arithmetic_precision(row['verdict'])})"


def _seconds(row: dict) -> str | None:
    return None if row.get("seconds") is None else f"{row['seconds']:.1f}"


# The pairs table's optional columns: (header, left-aligned, the cell's text or None where empty, what it means
# (given the check's settings)). A column None for every pair is left out.
_COLUMNS = (
    ("expected", True, lambda row: row.get("expected") or None,
     lambda s: "the verdict the manifest labels the pair with (several right ones separated by |); in red where the "
               "verdict is none of them"),
    ("check", False, _check,
     lambda s: f"KernelBench's check: pass where all {s['trials']} seeded trials are allclose to the reference at "
               f"atol={s['atol']:g}, rtol={s['rtol']:g}; fail otherwise; - where the code gave no output"),
    ("max |diff|", False, lambda row: None if row.get("max_abs") is None else _number(row["max_abs"]),
     lambda s: "the largest |candidate − reference| over the check's trials, where both are finite"),
    ("candidate vs fp64", False,
     lambda row: None if row.get("candidate_vs_fp64") is None else _number(row["candidate_vs_fp64"]),
     lambda s: "the largest |candidate − the Model evaluated in fp64|: the candidate's own error, apart from the "
               "reference's rounding"),
    ("needed atol", False, _needed,
     lambda s: "for an explained pair, the atol (with rtol 0) that admits its arithmetic: 1.5 × the largest "
               "difference of the two sides' re-creations plus both sides' rounding floors, with the precision of "
               "that arithmetic in brackets; - for a pair not explained (no tolerance makes it right)"),
    ("seconds", False, _seconds, lambda s: "wall seconds spent explaining the pair, its check included"),
    ("error", True, lambda row: row.get("error") or None,
     lambda s: "why the pair got no verdict: the first line of the failure"),
    ("notes", True, lambda row: row.get("notes") or None,
     lambda s: "what the explanation adds (e.g. parameters the candidate holds otherwise)"),
)  # fmt: skip


_LEFT, _LEFT_BAD = " class='l'", " class='l bad'"


def pairs_table(layout, result: dict) -> str:
    """Every pair in problem order; the columns empty for every pair left out and named; one line per column."""
    settings = {"trials": "the", **(result.get("settings") or {}), **result["summary"]["tolerance_used"]}
    shown = [c for c in _COLUMNS if any(c[2](row) is not None for row in layout.rows)]
    hidden = [c[0] for c in _COLUMNS if c not in shown]
    head = "<th class='l'>pair</th><th class='l'>verdict</th>" + "".join(
        f"<th{_LEFT if left else ''}>{html.escape(name)}</th>" for name, left, _, _ in shown
    )
    body = []
    for row in layout.rows:  # in problem order, as every figure lists them
        verdict = str(row["verdict"])
        wrong = row.get("expected") and verdict not in str(row["expected"]).split("|")
        cells = "".join(
            f"<td{_LEFT_BAD if wrong and name == 'expected' else _LEFT if left else ''}>"
            f"{html.escape(str(cell(row) or ('' if left else '-')))}</td>"  # an empty number: "-", as in the CLI
            for name, left, cell, _ in shown
        )
        body.append(
            f"<tr><td class='l'>{html.escape(str(row['pair_id']))}</td><td class='l{' bad' if wrong else ''}'>"
            f"{_swatch(layout.colours[verdict])}{html.escape(verdict)}</td>{cells}</tr>"
        )
    terms = [
        ("pair", "the solution's id: its path below the runs folder, or the manifest's id"),
        (
            "verdict",
            "what explains the difference; its family (arithmetic, the candidate wrong, no verdict) is "
            "under Verdict colours at the top",
        ),
        *((name, meaning(settings)) for name, _, _, meaning in shown),
    ]
    glossary = "".join(f"<li><strong>{html.escape(name)}</strong>: {html.escape(text)}.</li>" for name, text in terms)
    left_out = (f"<p class='muted'>Left out, empty for every pair: {html.escape(', '.join(hidden))}.</p>"
                if hidden else "")  # fmt: skip
    return (f"<h2>Pairs</h2><table><tr>{head}</tr>{''.join(body)}</table>"
            f"<ul class='glossary'>{glossary}</ul>{left_out}")  # fmt: skip


def manual_footer() -> str:
    return (
        f"<hr><p class='muted'>The manual: <code>{MANUAL}</code> in fp_analysis's repository (what triage reads, "
        "how it runs, what it gives); <code>docs/engine.md</code> there says how a verdict and a needed tolerance are "
        "found.</p>"
    )


def false_passes(summary: dict) -> str:
    """The pairs the check passed whose verdict says the candidate is wrong, or a line saying there are none."""
    if not summary["false_passes"]:
        return "<h2>False passes</h2><p>None: no pair passed the check with a verdict that says it is wrong.</p>"
    items = "".join(f"<li>{html.escape(str(p))}</li>" for p in summary["false_passes"])
    heading = "False passes: the check passed, the verdict says the candidate is wrong"
    return (f"<h2 class='bad'>{heading}</h2><ul>{items}</ul><p class='glossary'>The check's allclose admitted "
            "these candidates, yet no modelled arithmetic re-creates them (bug), their weights are not the "
            "reference's (parameter_mismatch) or they give NaN or ±inf where the arithmetic gives numbers "
            "(nonfinite): grade them as failures.</p>")  # fmt: skip
