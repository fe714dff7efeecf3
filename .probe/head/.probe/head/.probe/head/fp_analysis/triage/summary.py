"""What a triage's rows add up to: verdict counts (overall and per problem), the false passes of KernelBench's
check, the tolerance each problem's pairs need, how many expected labels matched, and how the run spent its time.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..model.verdict import FALSE_PASS_VERDICTS

if TYPE_CHECKING:
    from .pool import Placement

__all__ = ["matches_expected", "summarize", "timing"]


def matches_expected(row: dict) -> bool:
    """Whether a row's verdict is its expected label, or one of the ``|``-separated verdicts it names."""
    return row["verdict"] in str(row["expected"]).split("|")


def summarize(rows: list[dict], atol: float, rtol: float) -> dict:
    """Verdict counts, verdicts per problem, the false passes (the check passed at atol/rtol, the verdict says the
    candidate is wrong: ``FALSE_PASS_VERDICTS``), the atol each problem's explained pairs need, and how many
    expected labels matched."""
    by_problem: dict[str, Counter] = {}
    needed: dict[str, float] = {}
    for row in rows:
        by_problem.setdefault(row["problem"], Counter())[row["verdict"]] += 1
        if row.get("explained") and row.get("needed_atol") is not None:
            needed[row["problem"]] = max(needed.get(row["problem"], 0.0), float(row["needed_atol"]))
    labelled = [row for row in rows if row.get("expected")]
    return {
        "pairs": len(rows),
        "verdicts": dict(Counter(row["verdict"] for row in rows)),
        "by_problem": {problem: dict(counts) for problem, counts in by_problem.items()},
        "false_passes": [
            row["pair_id"] for row in rows if row.get("check_passed") and row["verdict"] in FALSE_PASS_VERDICTS
        ],
        "needed_atol_by_problem": needed,
        "tolerance_used": {"atol": atol, "rtol": rtol},
        "expected_matched": [sum(matches_expected(row) for row in labelled), len(labelled)],
    }


def timing(rows: list[dict], wall: float, placement: Placement, device: str) -> dict:
    """How the run spent its time: the pairs run per hour of wall time, the seconds of building ahead and of
    explaining (summed over jobs), and the share of the slots' wall time no explain job held them."""
    explaining = sum(row["seconds"] for row in rows)
    building = sum(row["build_seconds"] or 0.0 for row in rows)
    workers = placement.workers
    return {
        "device": device,
        "wall_s": wall,
        "pairs": len(rows),
        "pairs_per_hour": 3600.0 * len(rows) / wall if rows and wall > 0 else None,
        "slots": workers,
        "builders": placement.builders if device == "cuda" else 0,
        "built_ahead": sum(row["build_seconds"] is not None for row in rows),
        "build_s": building,
        "explain_s": explaining,
        "slot_idle_share": max(0.0, 1.0 - explaining / (wall * workers)) if rows and wall > 0 else None,
    }
