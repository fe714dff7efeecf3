"""How fpa runs Hypothesis: the settings of every search, an example database per fuzzed target, and Hypothesis's
own files, all under the cache directory (``$FPA_HYPOTHESIS_DB``, default ``~/.cache/fp_analysis/hypothesis``)."""

from __future__ import annotations

import contextlib
import hashlib

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase

from ..run.places import HYPOTHESIS_OVERRIDE, cache_dir

__all__ = ["example_database", "files_in_cache", "search_settings"]


def example_database(*key: str) -> DirectoryBasedExampleDatabase:
    """Return the persistent example database of the target ``key`` names: one folder per fuzzed target, so targets
    never replay each other's."""
    root = cache_dir("hypothesis", override=HYPOTHESIS_OVERRIDE)
    digest = hashlib.sha256("\0".join(key).encode()).hexdigest()[:16]
    return DirectoryBasedExampleDatabase(str(root / digest))


@contextlib.contextmanager
def files_in_cache():
    """Keep Hypothesis's own files (character tables, constants) under the cache directory, not in
    ``./.hypothesis``, while the context lasts."""
    set_hypothesis_home_dir(cache_dir("hypothesis", override=HYPOTHESIS_OVERRIDE) / "home")
    try:
        yield
    finally:
        set_hypothesis_home_dir(None)


def search_settings(max_examples: int, database) -> settings:
    """Return the settings of every fpa search: ``max_examples`` examples, ``database``, quiet, no deadline."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        database=database,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,  # Hypothesis's report goes to stdout, which is ours (or the user's, in a worker)
        # No explain phase: it re-runs a shrunk failure hundreds of times to say which parts of it may vary,
        # which fpa does not print, and which took most of the time spent on a failure.
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    )
