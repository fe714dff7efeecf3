"""fpa's caches (``run.caches``, ``fpa cache``): what each holds, and pruning the builds unused for a while without
touching what running work holds (a store key being built, a solution's folder torch is building in) or what is
not a build (the fuzz examples, the error reports)."""

from __future__ import annotations

import fcntl
import os
import time

import pytest

from fp_analysis.run import caches, extension_store
from fp_analysis.run.extension_checks import BUILD_ENVIRONMENT, not_shared

from ..cli_runs import fpa

DAY = 86400.0


@pytest.fixture()
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("FPA_KERNEL_CACHE", str(tmp_path / "cache" / "fp_analysis" / "kernels"))
    for name in ("FPA_EXTENSIONS_CACHE", "FPA_HYPOTHESIS_DB"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / "cache" / "fp_analysis"


def _made(path, days_ago: float, size: int = 100, folder: bool = False):
    """A file of ``size`` bytes (in a folder, where ``folder``) last modified ``days_ago`` days ago."""
    target = path / "lib.so" if folder else path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"x" * size)
    when = time.time() - days_ago * DAY
    os.utime(target, (when, when))
    if folder:
        os.utime(path, (when, when))
    return path


def test_prune_removes_the_builds_unused_for_longer_and_leaves_what_is_in_use_or_not_a_build(cache_root):
    store = cache_root / "extensions" / "by-arguments"
    old_build = _made(store / ("a" * 32), 40, folder=True)
    new_build = _made(store / ("b" * 32), 2, folder=True)
    old_failure = _made(store / ("c" * 32 + ".failed"), 40)
    building = _made(store / ("d" * 32), 40, folder=True)  # its key locked: a build of it is under way
    half_made = _made(store / ".building-x1", 40, folder=True)
    own_old = _made(cache_root / "extensions" / ("0" * 24), 40, folder=True)
    own_building = cache_root / "extensions" / ("1" * 24)
    _made(own_building / "ext", 40, folder=True)
    (own_building / "ext" / "lock").write_text("")  # torch's, in the extension's folder, while it builds
    os.utime(own_building, (time.time() - 40 * DAY,) * 2)
    cubin = _made(cache_root / "kernels" / "conv_rows-abc.cubin", 40)
    header = _made(cache_root / "headers" / ("2" * 24), 40, folder=True)
    example = _made(cache_root / "hypothesis" / "examples" / "e1", 400)
    report = _made(cache_root / "errors" / "internal-1.txt", 400)

    before = {summary.name: summary for summary in caches.summaries()}
    assert (before["store"].entries, before["own"].entries, before["kernels"].entries) == (4, 2, 1)
    assert before["store"].bytes == 400 and before["hypothesis"].entries == before["errors"].entries == 1

    with open(store / f".{'d' * 32}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        removed = caches.prune(30 * DAY)
    assert removed.entries == {"store": 3, "own": 1, "kernels": 1, "headers": 1}
    assert removed.bytes["store"] == 300 and removed.busy == 2
    gone = (old_build, old_failure, half_made, own_old, cubin, header)
    assert not any(path.exists() for path in gone)
    assert all(path.exists() for path in (new_build, building, own_building, example, report))
    assert not [path for path in store.iterdir() if path.name.startswith(".pruned-")]  # nothing half removed

    assert caches.prune(0).entries["store"] == 2  # every build not in use: the new one and the one built meanwhile
    assert example.exists() and report.exists()


def test_a_store_entry_found_is_marked_used(cache_root):
    """The store touches what it answers with, so that pruning by last use spares what runs still use."""
    request = {"arguments": {"name": "twice", "cpp_sources": "int twice(int a) { return 2 * a; }\n",
                             "functions": ["twice"]}, "arch_list": None,
               "environment": {name: os.environ.get(name) for name in BUILD_ENVIRONMENT}}  # fmt: skip
    if not_shared(request):
        pytest.skip(f"the store takes no request here: {not_shared(request)}")
    key = extension_store._key(request["arguments"], "")
    built = _made(extension_store.store_folder() / key, 40, folder=True)
    (built / "twice.so").write_bytes(b"")
    os.utime(built, (time.time() - 40 * DAY,) * 2)
    answered = extension_store.answer(request, deadline=time.monotonic() + 5)
    assert answered["folder"] == str(built) and not answered["built"], answered
    assert time.time() - built.stat().st_mtime < 60
    assert caches.prune(30 * DAY).entries["store"] == 0


def test_fpa_cache_lists_the_caches_and_prunes_with_a_checked_age(cache_root):
    _made(cache_root / "kernels" / "conv_rows-abc.cubin", 40, size=2048)
    listed = fpa("cache", "--json")
    assert listed.code == 0, listed.stderr
    kernels = next(cache for cache in listed.data["caches"] if cache["name"] == "kernels")
    assert (kernels["entries"], kernels["bytes"]) == (1, 2048)
    pruned = fpa("cache", "--prune", "30", "--json")
    assert pruned.code == 0 and pruned.data["removed"]["entries"]["kernels"] == 1, pruned.stdout
    text = fpa("cache")
    kernels_line = next(line for line in text.stdout.splitlines() if line.startswith("kernels"))
    assert kernels_line.split()[1:3] == ["0", "entries"], text.stdout
    for bad in ("-1", "nan", "inf"):
        refused = fpa("cache", "--prune", bad)
        assert refused.code == 2 and "--prune" in refused.stderr, (bad, refused.stderr)


def test_a_cache_folder_that_cannot_be_made_is_a_clear_error(tmp_path, monkeypatch):
    (tmp_path / "a_file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a_file"))
    refused = fpa("cache")
    assert refused.code == 2 and "fpa's caches cannot be read: Not a directory" in refused.stderr, refused.stderr
