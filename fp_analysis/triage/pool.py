"""Where a triage's pairs run: the ``Pool`` asked for (the local pool's size, or a Ray cluster's address), resolved
into a ``Placement`` (``placed``), and the local pool itself.

On this machine the jobs run ``workers`` at a time in daemon threads, each on its own slot: on a GPU host one slot
per visible GPU (``CUDA_VISIBLE_DEVICES``), and the solutions that build extensions are imported ahead by
``builders`` threads on the CPU cores into the ``TORCH_EXTENSIONS_DIR`` the solution's files name, so that a GPU's
job finds the extension built (and a later triage or explain of the same files does too). The jobs' processes
share the cores: each gets its share of OpenMP threads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import pathlib
import queue
import threading
from collections.abc import Callable, Iterator

from ..errors import ParameterError
from ..numerics.memory import available_bytes
from ..options import ExplainOptions, check_count, check_device
from ..run.extension_store import arch_list
from ..run.places import EXTENSIONS_OVERRIDE, extensions_folder
from ..run.snapshot import Given
from .builds import BUILD_CORES_WITH_HEADER, BUILD_JOBS, BUILDER_BYTES, build_ahead, needs_build
from .discovery import Pair, problem_by_problem
from .headers import PrecompiledHeader
from .rows import explain_row, internal_error_row

__all__ = ["Placement", "Pool", "local_rows", "pair_extensions", "placed", "threads_per_job"]


@dataclasses.dataclass(frozen=True)
class Pool:
    """Where a triage's pairs run, as asked: the local pool, ``workers`` jobs at once (None: a CPU job per two
    cores, or one per GPU) and ``builders`` building extensions ahead on a GPU host (None: as the cores and memory
    allow, ``_default_builders``); or each pair a task on the Ray cluster at ``ray`` (``fp_analysis.triage.ray``),
    whose resources size it.
    ``build_cache``: the folder the solutions' extensions build in (``run.places.EXTENSIONS_OVERRIDE``; None: this
    machine's cache, or each node's own): on a cluster, one every node mounts, so that each solution builds once
    for all of them. Checked when made: a bad count, a size given with ``ray``, or a build cache that is not an
    absolute path (a folder here that cannot be made) is a ``ParameterError`` (exit 2)."""

    workers: int | None = None
    builders: int | None = None
    ray: str | None = None
    build_cache: str | None = None

    def __post_init__(self):
        if self.ray is not None and (self.workers is not None or self.builders is not None):
            raise ParameterError(
                "--workers and --builders size the local pool: with --ray the cluster's resources decide."
            )
        for name in ("workers", "builders"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, check_count(name, getattr(self, name)))
        if self.build_cache is not None:
            object.__setattr__(self, "build_cache", _checked_build_cache(self.build_cache, self.ray))


def _checked_build_cache(folder: str, ray: str | None) -> str:
    """``--build-cache`` as an absolute path: every node reads it as it is (a relative one would name another folder
    on each); made here where the pairs run on this machine (a remote cluster's may be mounted on its nodes only)."""
    path = pathlib.Path(folder).expanduser() if isinstance(folder, str) and folder.strip() else None
    if path is None or not path.is_absolute():
        raise ParameterError(
            f"Got --build-cache {folder!r}: give an absolute path (on a cluster, a folder every node mounts)."
        )
    if ray in (None, "local"):
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise ParameterError(f"Got --build-cache {folder!r}, but it cannot be made: {error.strerror}.") from None
        if not os.access(path, os.W_OK | os.X_OK):
            raise ParameterError(f"Got --build-cache {folder!r}, but this user cannot write there.")
    return str(path)


@dataclasses.dataclass(frozen=True)
class Placement:
    """A ``Pool`` resolved: ``workers`` jobs at once and ``builders`` building ahead; ``environments``, each local
    slot's variables (one slot per GPU); ``cluster``: the connected ``ray`` module where the pairs are Ray tasks."""

    workers: int
    builders: int
    environments: tuple[dict[str, str], ...] = ({},)
    cluster: object | None = None
    build_cache: str | None = None  # ``Pool.build_cache``
    header: PrecompiledHeader | None = None  # the builders' precompiled torch/extension.h, on a GPU host


@contextlib.contextmanager
def placed(pool: Pool, options: ExplainOptions) -> Iterator[tuple[ExplainOptions, Placement]]:
    """(``options`` with their device resolved, the ``Placement``) for the block: auto resolved here (so a CPU result
    is never reused on a GPU host), against this machine's GPUs or, with ``pool.ray``, the cluster's resources;
    connected to that cluster for the block."""
    if pool.ray is None:
        device = _resolved_device(options.device)
        environments = _slot_environments(device)
        workers = pool.workers if pool.workers is not None else _default_workers(device, len(environments))
        builders = pool.builders if pool.builders is not None else _default_builders(device)
        header = PrecompiledHeader() if device == "cuda" else None
        try:
            with _extensions_in(pool.build_cache):
                yield (
                    dataclasses.replace(options, device=device),
                    Placement(workers, builders, tuple(environments), build_cache=pool.build_cache, header=header),
                )
        finally:  # a compiler still making the header is stopped with the triage
            if header is not None:
                header.close()
        return
    from . import ray as triage_ray

    with triage_ray.cluster(pool.ray) as cluster:
        device = triage_ray.cluster_device(cluster, options.device)
        placement = Placement(triage_ray.cluster_slots(cluster, device), 0, cluster=cluster,
                              build_cache=pool.build_cache)  # fmt: skip
        yield dataclasses.replace(options, device=device), placement


@contextlib.contextmanager
def _extensions_in(folder: str | None) -> Iterator[None]:
    """This process's extension builds in ``folder`` for the block (None: as they are): its builders, jobs and
    ``pair_extensions`` read ``EXTENSIONS_OVERRIDE``, and the processes it starts inherit it."""
    if folder is None:
        yield
        return
    before = os.environ.get(EXTENSIONS_OVERRIDE)
    os.environ[EXTENSIONS_OVERRIDE] = folder
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(EXTENSIONS_OVERRIDE, None)
        else:
            os.environ[EXTENSIONS_OVERRIDE] = before


def local_rows(
    placement: Placement, todo: list[Pair], options: ExplainOptions, given: dict[str, Given]
) -> Iterator[tuple[Pair, dict]]:
    """(pair, row) for each pair of ``todo`` as it finishes on the local pool (``_as_finished``), each explained in
    its slot's environment (``explain_row``), on a GPU host those that build extensions built ahead first.
    ``given``: each pair's snapshot, by id. Each solution builds in the folder its own files name
    (``pair_extensions``): a builder and the GPU's job find the same build, and so do a later triage with other
    options and a sample whose files are these byte for byte; two solutions may name their extension alike."""
    slots = placement.environments

    def environment(pair: Pair, slot: int) -> dict[str, str]:
        # --workers above the GPUs share them round the slots
        return {"TORCH_EXTENSIONS_DIR": pair_extensions(given[pair.id]), **slots[slot % len(slots)]}

    def build(pair: Pair) -> dict:
        # no GPU: a builder runs beside the slots' jobs, whose GPUs a solution's import must not touch (its process is
        # not let open a GPU's device files: ``places.solution_writable``); built for the slots' architectures
        # (``_slot_environments``). ninja's parallelism bounded: the builders together fill the cores
        # (``_default_builders``), not each alone
        env = {
            **environment(pair, 0),
            "CUDA_VISIBLE_DEVICES": "",
            "MAX_JOBS": os.environ.get("MAX_JOBS", str(BUILD_JOBS)),
            **placement.header.environment(),
        }
        return build_ahead(pair, options.timeout, env, given[pair.id], gpu_seen=False)

    def run(pair: Pair, built: dict | None, slot: int) -> dict:
        return explain_row(pair, options, environment(pair, slot), built, given[pair.id])

    builds = build if options.device == "cuda" else None
    return _as_finished(todo, placement.workers, run, builds, placement.builders)


def pair_extensions(given: Given) -> str:
    """The folder a pair's solution builds its extensions in: the one its files name in fpa's cache
    (``run.places.extensions_folder``), as an explain of the same files uses."""
    return extensions_folder(given.solution.encoded(), given.solution.name)


def _as_finished(
    todo: list[Pair],
    workers: int,
    run: Callable[[Pair, dict | None, int], dict],
    build: Callable[[Pair], dict] | None = None,
    builders: int = 0,
):
    """(pair, ``run(pair, built, slot)``) for each pair of ``todo`` as it finishes, ``workers`` at a time, each
    worker on its own ``slot`` (0 … workers-1: its GPU). With ``build``, ``builders`` threads first run
    ``build(pair)`` on the pairs whose solution builds an extension (``needs_build``), one problem's in turn
    (``problem_by_problem``), and such a pair
    is run once built (``built`` is what ``build`` gave; None for the others); the other pairs are run at once,
    so the slots work while the builders do.

    Daemon threads, not a ThreadPoolExecutor: an interrupted triage (Ctrl-C, SIGTERM) must end at once, not wait
    for the jobs under way (an executor's threads are joined at exit); the jobs' processes end with this one
    (each watches its parent, ``fp_analysis.run``), and what was stored stays stored."""
    ready, finished, to_build = queue.SimpleQueue(), queue.SimpleQueue(), queue.SimpleQueue()
    lock, taken = threading.Lock(), [0]

    def start(target, count: int):
        for index in range(count):
            threading.Thread(target=target, args=(index,), name="fpa-triage", daemon=True).start()

    builds = []
    for pair in todo:
        if build is not None and needs_build(pair.solution):
            builds.append(pair)
        else:
            ready.put((pair, None))
    for pair in problem_by_problem(builds):
        to_build.put(pair)
    building = len(builds)

    def builder(_index):
        while True:
            try:
                pair = to_build.get_nowait()
            except queue.Empty:
                return
            built = None  # a build that failed on our side: the job builds for itself
            try:
                built = build(pair)
            except Exception:
                pass
            finally:  # every pair reaches a worker, or the triage would wait for it for ever
                ready.put((pair, built))

    start(builder, min(builders, building))

    def worker(slot):
        while True:
            with lock:
                if taken[0] == len(todo):
                    return
                taken[0] += 1
            pair, built = ready.get()
            try:
                row = run(pair, built, slot)
            except Exception as error:  # ours (a full disk under the job's folder): that pair's row, not a hang
                row = internal_error_row(f"{type(error).__name__}: {error}")
            finished.put((pair, row))

    start(worker, min(workers, len(todo)))
    for _ in todo:
        yield finished.get()


def _resolved_device(device: str) -> str:
    """ "cpu" or "cuda": auto resolved here (so a CPU result is never reused on a GPU host), and cuda refused at once
    where torch sees no GPU rather than in every pair's row."""
    device = check_device(device).value
    if device == "cpu":
        return device
    import torch  # only to ask for a GPU: the jobs run in their own processes

    if torch.cuda.is_available():
        return "cuda"
    if device == "cuda":
        raise ParameterError("Got --device cuda, but torch sees no CUDA device on this machine: use --device cpu.")
    return "cpu"


def _slot_environments(device: str) -> list[dict[str, str]]:
    """The variables of each job slot: on a GPU host one slot per visible GPU, ``CUDA_VISIBLE_DEVICES`` naming it
    (the ids the user made visible, where they did), and ``TORCH_CUDA_ARCH_LIST`` set to the GPUs' architectures
    unless the user set it to a list (so that a builder, which sees no GPU, builds what the job will load: "native"
    or "" would build for no GPU there and for this one in the job, two keys)."""
    if device == "cpu":
        return [{}]
    import torch

    count = torch.cuda.device_count()
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = [v.strip() for v in visible.split(",") if v.strip()][:count] if visible else [str(i) for i in range(count)]
    extra = {}
    if os.environ.get("TORCH_CUDA_ARCH_LIST", "").strip() in ("", "native"):
        capabilities = [torch.cuda.get_device_capability(i) for i in range(count)]
        extra["TORCH_CUDA_ARCH_LIST"] = arch_list(capabilities, torch.cuda.get_arch_list())
    return [{"CUDA_VISIBLE_DEVICES": gpu, **extra} for gpu in ids]


def _default_workers(device: str, gpus: int) -> int:
    """On a CPU a job per two cores (each job runs two processes); on a GPU host one job per GPU."""
    if device == "cpu":
        return max(1, (os.cpu_count() or 2) // 2)
    return max(1, gpus)


def _default_builders(device: str) -> int:
    """Jobs building extensions ahead on a GPU host: as many as the cores run at ``BUILD_CORES_WITH_HEADER`` each (the
    builders are given the precompiled header), and the memory holds at ``BUILDER_BYTES`` a builder (one where neither
    can be told); on a CPU one."""
    if device != "cuda":
        return 1
    by_cores = max(1, int((os.cpu_count() or 2) / BUILD_CORES_WITH_HEADER))
    free = available_bytes("cpu")
    by_memory = max(1, free // BUILDER_BYTES) if free else by_cores
    return min(by_cores, by_memory)


@contextlib.contextmanager
def threads_per_job(workers: int):
    """The jobs' processes share the cores: each gets its share of OpenMP threads, unless the user chose."""
    if "OMP_NUM_THREADS" in os.environ:
        yield
        return
    os.environ["OMP_NUM_THREADS"] = str(max(1, (os.cpu_count() or 1) // workers))
    try:
        yield
    finally:
        os.environ.pop("OMP_NUM_THREADS", None)
