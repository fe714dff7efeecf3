"""fpa's caches (``run.caches``, ``fpa cache``): what each holds, and pruning the builds unused for a while without
touching what running work holds (a store key being built, a solution's folder torch is building in) or what is
not a build (the fuzz examples, the error reports)."""

from __future__ import annotations

import fcntl
import os
import time

import pytest

from fp_analysis.run import caches, extension_store, places
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


def _made(path, size: int = 100, folder: bool = False):
    """A file of ``size`` bytes (in a folder, where ``folder``), used now."""
    target = path / "lib.so" if folder else path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(b"x" * size)
    return path


def _aged(*paths, days: float = 40):
    """Set the paths' modification time ``days`` back, as any process may (``utime``): no last use changes."""
    when = time.time() - days * DAY
    for path in paths:
        os.utime(path, (when, when))


def _between() -> float:
    """A moment after every file made so far and before any made next (a status-change time is coarser than
    ``time.time()``)."""
    time.sleep(0.05)
    moment = time.time()
    time.sleep(0.05)
    return moment


def test_prune_removes_the_builds_unused_for_longer_and_leaves_what_is_in_use_or_not_a_build(cache_root):
    store = cache_root / "extensions" / "by-arguments"
    old_build = _made(store / ("a" * 32), folder=True)
    old_failure = _made(store / ("c" * 32 + ".failed"))
    building = _made(store / ("d" * 32), folder=True)  # its key locked: a build of it is under way
    half_made = _made(store / f".building-{'e' * 32}-x1", folder=True)  # under way: younger than any build
    own_old = _made(cache_root / "extensions" / ("0" * 24), folder=True)
    own_running = _made(cache_root / "extensions" / ("1" * 24), folder=True)
    cubin = _made(cache_root / "kernels" / "conv_rows-abc.cubin")
    header = _made(cache_root / "headers" / ("2" * 24), folder=True)
    example = _made(cache_root / "hypothesis" / "examples" / "e1")
    report = _made(cache_root / "errors" / "internal-1.txt")
    moment = _between()
    new_build = _made(store / ("b" * 32), folder=True)
    _aged(new_build, new_build / "lib.so")  # an old modification time is no last use

    before = {summary.name: summary for summary in caches.summaries()}
    assert (before["store"].entries, before["own"].entries, before["kernels"].entries) == (4, 2, 1)
    assert before["store"].bytes == 400 and before["hypothesis"].entries == before["errors"].entries == 1

    job = places.hold_in_use(own_running)  # a job runs the solution
    assert job is not None
    with open(store / f".{'d' * 32}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        removed = caches.prune(30 * DAY, now=moment + 30 * DAY)
    assert removed.entries == {"store": 2, "own": 1, "kernels": 1, "headers": 1}
    assert removed.bytes["store"] == 200 and removed.busy == 2
    assert not any(path.exists() for path in (old_build, old_failure, own_old, cubin, header))
    assert all(path.exists() for path in (new_build, building, half_made, own_running, example, report))
    assert not [path for path in store.iterdir() if path.name.startswith(".pruned-")]  # nothing half removed
    assert not (cache_root / "extensions" / f".{'0' * 24}.in-use").exists()  # its lock of use went with it

    job.close()
    assert caches.prune(0).entries == {"store": 2, "own": 1, "kernels": 0, "headers": 0}  # all but the half-made
    assert half_made.exists() and example.exists() and report.exists()
    _aged(half_made, days=2)
    assert caches.prune(0).entries["store"] == 0  # its modification time says nothing either


def test_a_solutions_folder_is_pruned_whatever_it_holds(cache_root):
    """A solution writes its own folder: nothing it leaves there keeps the folder from a prune once no job runs it (a
    folder named like torch's build lock, folders nested deeper than a recursive walk goes), and a link out is not
    followed (an adversarial hunt, 2026-12-05)."""
    own = _made(cache_root / "extensions" / ("3" * 24), folder=True)
    (own / "junk" / "lock").mkdir(parents=True)
    outside = _made(cache_root.parent / "outside.txt", size=7)
    (own / "out").symlink_to(outside)
    (own / "out_folder").symlink_to(cache_root.parent)
    deep = own / "deep"
    deep.mkdir()
    descriptor = os.open(deep, os.O_RDONLY)
    for _ in range(1200):  # os.walk recursed once per level
        os.mkdir("d", dir_fd=descriptor)
        inner = os.open("d", os.O_RDONLY, dir_fd=descriptor)
        os.close(descriptor)
        descriptor = inner
    os.close(descriptor)
    listed = {summary.name: summary for summary in caches.summaries()}["own"]
    assert listed.entries == 1 and 100 <= listed.bytes < 10_000
    assert caches.prune(0).entries["own"] == 1
    assert not own.exists() and outside.read_bytes() == b"x" * 7


def test_key_lock_held_by_a_process_that_builds_nothing_is_not_waited_for(tmp_path, monkeypatch):
    """Any process that may open a key's lock file may lock it (an unsandboxed solution's too): a request waits for it
    only while a build of the key is under way (``extension_store.key_locked``'s ``building``)."""
    monkeypatch.setattr(extension_store, "_NO_BUILD_S", 0.4)
    with open(tmp_path / ".k.lock", "a") as other:
        fcntl.flock(other, fcntl.LOCK_EX)
        start = time.monotonic()
        with extension_store.key_locked(tmp_path, "k", start + 60, building=lambda: False) as held:
            assert not held
        waited = time.monotonic() - start
        assert extension_store._NO_BUILD_S <= waited < extension_store._NO_BUILD_S + 2
        start = time.monotonic()
        with extension_store.key_locked(tmp_path, "k", start + 0.6, building=lambda: True) as held:
            assert not held and time.monotonic() - start >= 0.6
    with extension_store.key_locked(tmp_path, "k", time.monotonic(), building=lambda: False) as held:
        assert held


def test_a_store_entry_found_is_marked_used(cache_root):
    """The store touches what it answers with, so that pruning by last use spares what runs still use."""
    request = {"arguments": {"name": "twice", "cpp_sources": "int twice(int a) { return 2 * a; }\n",
                             "functions": ["twice"]}, "arch_list": None,
               "environment": {name: os.environ.get(name) for name in BUILD_ENVIRONMENT}}  # fmt: skip
    if not_shared(request):
        pytest.skip(f"the store takes no request here: {not_shared(request)}")
    key = extension_store._key(request["arguments"], "")
    built = _made(extension_store.store_folder() / key, folder=True)
    (built / "twice.so").write_bytes(b"")
    moment = _between()
    answered = extension_store.answer(request, deadline=time.monotonic() + 5)
    assert answered["folder"] == str(built) and not answered["built"], answered
    assert built.stat().st_ctime > moment
    assert caches.prune(30 * DAY, now=moment + 30 * DAY).entries["store"] == 0


def test_fpa_cache_lists_the_caches_and_prunes_with_a_checked_age(cache_root):
    _made(cache_root / "kernels" / "conv_rows-abc.cubin", size=2048)
    listed = fpa("cache", "--json")
    assert listed.code == 0, listed.stderr
    kernels = next(cache for cache in listed.data["caches"] if cache["name"] == "kernels")
    assert (kernels["entries"], kernels["bytes"]) == (1, 2048)
    pruned = fpa("cache", "--prune", "0", "--json")
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


def test_fpa_builds_its_kernels_under_a_moved_cache_home(tmp_path, monkeypatch):
    """``fpa_kernels`` reads only ``FPA_KERNEL_CACHE``; fpa sets it from ``XDG_CACHE_HOME``, so that ``fpa cache``
    lists and prunes the kernels of the cache home it was given, not those of ``~/.cache``."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home"))
    for name in ("FPA_KERNEL_CACHE", "FPA_EXTENSIONS_CACHE", "FPA_HYPOTHESIS_DB"):
        monkeypatch.setenv(name, "")  # unset, as fpa reads them; and put back as they were after the test
    listed = fpa("cache", "--json")
    assert listed.code == 0, listed.stderr
    folders = {cache["name"]: cache["folder"] for cache in listed.data["caches"]}
    assert folders["kernels"] == str(tmp_path / "home" / "fp_analysis" / "kernels")
