"""What a triage's rows add up to: verdict counts (overall and per problem), the false passes of KernelBench's
check, the tolerance each problem's pairs need (per precision: a bf16 candidate's need is not an fp32 kernel's),
how many expected labels matched, and how the run spent its time.

Problems are listed in one order everywhere (``problem_order``: by path, the numbers in it compared as numbers,
so ``level1/2_relu`` comes before ``level1/10_conv``); the summary's per-problem tables are in that order.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..model.verdict import FALSE_PASS_VERDICTS, CauseKind
from ..numerics.formats import FORMATS
from ..run.extension_store import ANSWERS

if TYPE_CHECKING:
    from .pool import Placement

__all__ = ["PRECISIONS", "arithmetic_precision", "matches_expected", "problem_order", "summarize", "timing"]

# The format each precision cause names ("candidate_bf16": bf16), and the formats from the finest to the coarsest
# (fp16 after TF32: the same 11 bits, a narrower range).
_FORMAT_OF_CAUSE = {kind.value: fmt for kind in CauseKind for fmt in FORMATS if kind.value.endswith(f"_{fmt}")}
_FINE_TO_COARSE = sorted(FORMATS, key=lambda fmt: (FORMATS[fmt].unit_roundoff, -FORMATS[fmt].emax))
# The precisions a needed tolerance is given for, finest first: fp32 arithmetic, then each reduced format a cause names.
PRECISIONS = tuple(fmt for fmt in _FINE_TO_COARSE if fmt == "fp32" or fmt in _FORMAT_OF_CAUSE.values())


def matches_expected(row: dict) -> bool:
    """Whether a row's verdict is its expected label, or one of the ``|``-separated verdicts it names."""
    return row["verdict"] in str(row["expected"]).split("|")


def problem_order(problems: Iterable[str]) -> list[str]:
    """The problems, each once, in the order every table and figure of a triage lists them: by path, the runs of
    digits in it compared as numbers (KernelBench's ``2_ReLU`` before ``10_Conv``)."""

    def key(problem: str) -> tuple:
        parts = re.split(r"(\d+)", problem)  # text at even indexes, digits at odd ones: always comparable
        return [int(p) if i % 2 else p.casefold() for i, p in enumerate(parts)], problem

    return sorted(set(problems), key=key)


def arithmetic_precision(verdict: str) -> str:
    """The precision a pair's needed tolerance is for: the coarsest format its verdict's causes name (``tf32``,
    ``fp16``, ``bf16``: either side's linear ops in it), ``fp32`` where none does (an order, a formula, an
    approximation: fp32 arithmetic). ``reference_tf32 + candidate_bf16`` is bf16."""
    formats = [_FORMAT_OF_CAUSE[part] for part in str(verdict).split(" + ") if part in _FORMAT_OF_CAUSE]
    return max(formats, key=PRECISIONS.index, default="fp32")


def summarize(rows: list[dict], atol: float, rtol: float) -> dict:
    """Verdict counts, verdicts per problem, the false passes (the check passed at atol/rtol, the verdict says the
    candidate is wrong: ``FALSE_PASS_VERDICTS``), the atol each problem's explained pairs need and how many
    expected labels matched.

    ``needed_atol_by_problem``: problem → precision (``arithmetic_precision``: ``fp32``, ``tf32``, ``fp16``,
    ``bf16``, finest first) → the largest atol its explained pairs of that precision need; a bf16 candidate's need
    never raises the one given for fp32 arithmetic. Problems in ``problem_order``."""
    by_problem: dict[str, Counter] = {}
    needed: dict[str, dict[str, float]] = {}
    for row in rows:
        by_problem.setdefault(row["problem"], Counter())[row["verdict"]] += 1
        if row.get("explained") and row.get("needed_atol") is not None:
            per_precision = needed.setdefault(row["problem"], {})
            precision = arithmetic_precision(row["verdict"])
            per_precision[precision] = max(per_precision.get(precision, 0.0), float(row["needed_atol"]))
    labelled = [row for row in rows if row.get("expected")]
    return {
        "pairs": len(rows),
        "verdicts": dict(Counter(row["verdict"] for row in rows)),
        "by_problem": {problem: dict(by_problem[problem]) for problem in problem_order(by_problem)},
        "false_passes": [
            row["pair_id"] for row in rows if row.get("check_passed") and row["verdict"] in FALSE_PASS_VERDICTS
        ],
        "needed_atol_by_problem": {
            problem: {fmt: needed[problem][fmt] for fmt in PRECISIONS if fmt in needed[problem]}
            for problem in problem_order(needed)
        },
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
        # the build ahead's load_inline calls (``run.extension_store``): compiled in fpa's store, found there (another
        # sample's or an earlier run's), compiled by the solution in its own folder
        **{f"extensions_{kind}": sum(row.get(f"extensions_{kind}") or 0 for row in rows) for kind in ANSWERS},
        "explain_s": explaining,
        "slot_idle_share": max(0.0, 1.0 - explaining / (wall * workers)) if rows and wall > 0 else None,
        # whether the builders had torch/extension.h precompiled (``headers``): "ready", or why not
        "precompiled_header": placement.header.state if placement.header is not None else None,
    }
