"""Which pairs a triage explains: the problem/solution pairs under a folder laid out as KernelBench runs are, or
those a CSV/JSON manifest lists (``discover``), each a ``Pair``, with the expected verdicts a manifest may give.
"""

from __future__ import annotations

import csv
import dataclasses
import json
import os
import pathlib
from collections import Counter

from ..errors import ParameterError
from ..records import safe_text
from ..run.snapshot import PROBLEM_FILE

__all__ = ["Pair", "discover", "problem_by_problem", "solution_folders"]

_NOT_SOLUTIONS = ("setup.py", "conftest.py")


@dataclasses.dataclass(frozen=True)
class Pair:
    """One problem file and one solution file to explain; ``expected`` an optional label to compare: a verdict, or
    several any of which is right, separated by ``|`` (``identical|accumulation_order``)."""

    id: str
    problem: pathlib.Path
    solution: pathlib.Path
    expected: str | None = None


def discover(path: str | os.PathLike) -> list[Pair]:
    """The pairs under ``path``: a folder, or a manifest (.csv or .json).

    Folder: every folder below ``path`` holding a ``problem.py`` is a problem; its solutions are the other .py
    files in it and every .py file in the folders below it (KernelBench runs keep one sample per folder), except
    names starting with ``_`` (helper modules) or ``.``, ``setup.py``, what hidden folders hold, and anything that
    is not a regular file. A ``problem.py`` below another problem's folder is refused (ParameterError): it would be
    a sample's own reference. A pair's id is its solution's path relative to ``path``, without ``.py``.
    Manifest: rows (a CSV with a header, or a JSON list of objects) with ``problem`` and ``solution``,
    optional ``id`` and ``expected``; relative paths are relative to the manifest's folder.
    """
    root = pathlib.Path(path)
    if root.is_file():
        return _from_manifest(root)
    if not root.is_dir():
        raise ParameterError(f"Got PATH={str(path)!r}, which is neither a folder nor a manifest file (.csv, .json).")
    pairs = []
    problems = [p for p in sorted(root.rglob(PROBLEM_FILE)) if p.is_file()]  # not a folder or dangling link so named
    for problem in problems:
        # a sample cannot bring its own reference: a problem.py among another problem's samples would be the one its
        # neighbours are judged against
        outer = next((p for p in problems if p != problem and p.parent in problem.parents), None)
        if outer is not None:
            raise ParameterError(
                f"Got PATH={safe_text(str(path))!r}, but {safe_text(str(problem))!r} lies among the samples of "
                f"{safe_text(str(outer))!r}: a sample cannot bring its own reference. Move the problem to a folder of "
                "its own, or remove the file from the sample."
            )
    for problem in problems:
        folder = problem.parent
        for solution in sorted(folder.rglob("*.py")):
            parts = solution.relative_to(folder).parts
            if (
                solution == problem
                or not solution.is_file()  # a folder named x.py, a FIFO, a dangling link
                or any(part.startswith((".", "_")) for part in parts)  # helpers, .ipynb_checkpoints
                or solution.name in _NOT_SOLUTIONS
            ):
                continue
            pairs.append(Pair(str(solution.relative_to(root).with_suffix("")), problem, solution))
    if not pairs:
        raise ParameterError(f"Got PATH={str(path)!r}, but no folder below it holds a {PROBLEM_FILE} and a solution.")
    return pairs


def _from_manifest(path: pathlib.Path) -> list[Pair]:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".json"):
        raise ParameterError(f"Got manifest {str(path)!r}, but a manifest must end in .csv or .json.")
    try:
        # utf-8-sig: spreadsheets write a byte-order mark; newline="": quoted newlines stay in their field
        with open(path, encoding="utf-8-sig", newline="") as handle:
            if suffix == ".json":
                rows = json.load(handle)
                rows = rows.get("pairs") if isinstance(rows, dict) else rows
            else:
                rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, csv.Error, RecursionError) as error:
        reason = "it is nested too deep" if isinstance(error, RecursionError) else error
        raise ParameterError(f"Got manifest {str(path)!r}, which cannot be read: {reason}") from None
    if not isinstance(rows, list) or not rows:
        raise ParameterError(f"Got manifest {str(path)!r}, but it lists no pairs (rows of problem, solution).")
    pairs = []
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict) or not row.get("problem") or not row.get("solution"):
            raise ParameterError(f"Manifest {str(path)!r}, row {number}: give problem and solution, got {row!r}.")
        problem, solution = (path.parent / str(row[k]) for k in ("problem", "solution"))
        for key, file in (("problem", problem), ("solution", solution)):
            if not file.is_file():
                what = "does not exist" if not file.exists() else "is not a regular file"
                raise ParameterError(f"Manifest {str(path)!r}, row {number}: {key} {str(file)!r} {what}.")
        given = row.get("id")
        pair_id = str(given) if given not in (None, "") else _default_id(solution, path.parent)
        expected = row.get("expected")
        if isinstance(expected, list):  # JSON: several right verdicts
            expected = "|".join(map(str, expected))
        pairs.append(Pair(pair_id, problem, solution, None if expected in (None, "") else str(expected)))
    ids = Counter(p.id for p in pairs)
    if twice := [i for i, n in ids.items() if n > 1]:
        raise ParameterError(f"Manifest {str(path)!r} names these ids more than once: {twice[:5]}.")
    return pairs


def _default_id(solution: pathlib.Path, folder: pathlib.Path) -> str:
    """A manifest row's id when it gives none: the solution's path from the manifest's folder, without .py (the
    same wherever triage runs from)."""
    try:
        return str(solution.relative_to(folder).with_suffix(""))
    except ValueError:  # an absolute path elsewhere
        return str(solution.with_suffix(""))


def solution_folders(pairs: list[Pair]) -> frozenset:
    """The folders holding the pairs' solutions: not helpers of a problem whose folder holds them."""
    return frozenset(pair.solution.resolve().parent for pair in pairs)


def problem_by_problem(pairs: list[Pair]) -> list[Pair]:
    """``pairs`` dealt one problem's at a time in turn (each problem's in their order): samples of one problem are
    the likeliest to share a kernel, which fpa's store builds once (``run.extension_store``), and a sample whose twin
    is still building waits for it holding a builder; spread apart, the twin has landed by the time the sample's
    turn comes."""
    by_problem: dict = {}
    for pair in pairs:
        by_problem.setdefault(pair.problem, []).append(pair)
    turns = list(by_problem.values())
    return [turn[depth] for depth in range(max(map(len, turns), default=0)) for turn in turns if depth < len(turn)]
