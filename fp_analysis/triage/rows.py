"""One pair's row in a triage: what ``explain_files`` said of it (its verdict and numbers) or how its job ended
without a verdict, and the fields that say which pair it is; every row has the same fields (the store's columns).

The rows of pairs that got no verdict from the engine are the ``Outcome`` verdicts: the user's code failed (exit
3), the Model is beyond what the engine models (exit 2, naming what), the files are not a KernelBench pair (exit 2:
no ModelNew, say), a failure of ours (exit 4).
"""

from __future__ import annotations

import time

from ..errors import ExitCode, Fate, FpaError, InternalError, OutOfScopeError, UserCodeError
from ..explain.jobs import explain_files
from ..model.verdict import Outcome
from ..options import ExplainOptions
from ..records import safe_text
from ..run.extension_store import ANSWERS
from ..run.snapshot import Given
from .discovery import Pair

__all__ = ["explain_row", "identity", "internal_error_row"]


def explain_row(
    pair: Pair, options: ExplainOptions, env: dict[str, str], built: dict | None, given: Given | None = None
) -> dict:
    """The pair's row (a local slot's or a Ray task's work): its verdict and numbers, or how its job ended without
    one. ``built``: what building the solution ahead gave (``pool``), None where it was not built ahead.
    A solution whose import raised there (a compile error, say) has that as its row: the job would import the
    same file the same way (``builds._stands`` says which failures ``built`` carries). Any other failure of the
    build (a timeout under parallel builds, a compiler or the import killed by the OOM killer, a usage error) is
    left to the job, which meets it again or not, the problem's errors first as on a CPU. ``given``: the pair's
    snapshot (``keys.snapshots``); a job whose files changed is that pair's failure (``Fate.MODIFIED_FILES``, which
    the triage does not store)."""
    start = time.perf_counter()
    row = {**_blank_row(), "build_seconds": None if built is None else built["seconds"], **_extensions(built)}
    try:
        if built is not None and getattr(built.get("error"), "fate", None) in (Fate.RAISED, Fate.MODIFIED_FILES):
            raise built["error"]
        explanation = explain_files(pair.problem, pair.solution, options, env=env, given=given)
        mismatch = explanation.mismatch
        # unknown where the check did not run to its end at the problem's size (analysed on a smaller instance): then
        # so is the atol it passes at (the smaller instance's says nothing of the grader's check)
        full_size = explanation.context.get("full_size_check_ran") is not False
        row.update(
            verdict=explanation.verdict,
            explained=explanation.explained,
            exit_code=int(ExitCode.OK if explanation.explained else ExitCode.NOT_EXPLAINED),
            check_passed=mismatch.get("failed_trials") == 0 if full_size else None,
            max_abs=mismatch.get("max_abs"),
            candidate_vs_fp64=explanation.candidate_vs_fp64.get("max_abs"),
            reference_vs_fp64=explanation.reference_vs_fp64.get("max_abs"),
            # the atol the pair's explained arithmetic needs; a bug's says nothing about the pair (it would be the
            # reference's alone, and read as the atol the bug passes at)
            needed_atol=explanation.recommended_tolerance.get("atol") if explanation.explained else None,
            # the check at any other atol (``keys.stored_rows`` judges a stored row again with them)
            atol_to_pass=mismatch.get("atol_to_pass") if full_size else None,
            atol_to_pass_known=mismatch.get("atol_to_pass_known") if full_size else False,
            notes=" | ".join(explanation.notes) or None,
        )
    except UserCodeError as error:
        row.update(verdict=Outcome.USER_CODE_FAILED.value, exit_code=int(error.exit_code),
                   error=str(error).splitlines()[0], fate=error.fate.value)  # fmt: skip
    except OutOfScopeError as error:
        row.update(verdict=Outcome.OUT_OF_SCOPE.value, exit_code=int(error.exit_code), error=str(error).splitlines()[0])
    except InternalError as error:
        row.update(verdict=Outcome.INTERNAL_ERROR.value, exit_code=int(error.exit_code),
                   error=str(error).splitlines()[0])  # fmt: skip
    except FpaError as error:
        row.update(verdict=Outcome.USAGE_ERROR.value, exit_code=int(error.exit_code), error=str(error).splitlines()[0])
    except Exception as error:  # one pair's internal failure is its row, never the end of the run
        row.update(verdict=Outcome.INTERNAL_ERROR.value, exit_code=int(ExitCode.INTERNAL),
                   error=f"{type(error).__name__}: {error}")  # fmt: skip
    row["seconds"] = time.perf_counter() - start
    return row


def _blank_row() -> dict:
    """Every field of a pair's row, unset: a row has them all, however its job ended (they are the store's columns)."""
    return {"verdict": None, "explained": None, "exit_code": None, "check_passed": None, "max_abs": None,
            "candidate_vs_fp64": None, "reference_vs_fp64": None, "needed_atol": None, "atol_to_pass": None,
            "atol_to_pass_known": None, "error": None, "fate": None, "notes": None, "build_seconds": None,
            **dict.fromkeys(f"extensions_{kind}" for kind in ANSWERS), "seconds": 0.0}  # fmt: skip


def _extensions(built: dict | None) -> dict:
    """How the build ahead's ``load_inline`` calls were answered (``run.extension_store``), counted: compiled in fpa's
    store, found there (built for another sample, or an earlier run), failed to compile there (the sources' error,
    raised in the solution's process), compiled by the solution in its own folder."""
    if built is None:
        return {}
    counts = built.get("extensions") or {}
    return {f"extensions_{kind}": int(counts.get(kind, 0)) for kind in ANSWERS}


def internal_error_row(message: str) -> dict:
    """The row of a pair whose job failed on our side (not the user's code's): ``internal_error``, exit 4."""
    return {**_blank_row(), "verdict": Outcome.INTERNAL_ERROR.value, "exit_code": int(ExitCode.INTERNAL),
            "error": message}  # fmt: skip


def identity(pair: Pair, key: str, analysis: str | None = None) -> dict:
    """The fields of a row that say which pair it is: always the current pair's (a stored result may have been
    another pair's with the same contents, or this pair's under another id, folder or label). ``key``: the pair's
    under all its options; ``analysis``: under all but the check's atol (``keys.analysis_key``)."""
    return {"pair_id": safe_text(pair.id), "problem": safe_text(str(pair.problem)),
            "solution": safe_text(str(pair.solution)), "expected": pair.expected, "pair_key": key,
            "analysis_key": analysis}  # fmt: skip
