"""``fpa triage --ray ADDRESS``: triage's jobs as Ray tasks, for more pairs than one machine explains in time.

Each pair is one task, and a task does what a local slot does (``triage.rows.explain_row``): the pair's job in its
own worker and candidate processes, on the node that runs the task, each call into the user's code under the
timeout, so a crash or hang is that pair's row there too. What travels is the pair's files' contents (the
problem, the solution and the other source files beside each: helper modules, extension sources), so the nodes need
fp_analysis installed (the same version: a task on a node with another version gives an ``internal_error`` row
saying so) but no shared filesystem; the files are written to a temporary folder on the node, and the row's
paths and messages name the original files.

Resources: a GPU triage's task asks for one GPU (Ray sets its ``CUDA_VISIBLE_DEVICES``, which the job's
processes inherit), a CPU triage's for two CPUs (a job runs two processes), so Ray runs as many at once as the
cluster holds. A pair whose solution builds an extension (``builds.needs_build``) is built first, as the local
pool's builders do on a GPU host, in a task of its own (``BUILD_CORES`` CPUs, no GPU) on a node dealt to it
(``_build_nodes``), then explained on that node, where the build is and what it was built for; each node runs as
many builds at once as the CPUs its explains leave and its memory hold, so that its GPU is not held through a
compiler and its explains find a CPU. A CPU triage builds ahead too: there it changes little (a build holds 1.25
CPUs instead of an explain's two), and the path is then the one a GPU cluster takes, which the tests run on CPUs.
``ADDRESS``: ``auto`` (the running cluster this machine belongs to), ``ray://host:port`` or ``host:port``, or
``local`` to start a Ray instance on this machine's cores (what the tests use).

Ray is optional (``pip install "fp_analysis[cluster]"``); without it ``--ray`` is a usage error naming the
install. This module imports Ray only when asked to.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import pathlib
import re
import tempfile
from typing import TYPE_CHECKING

from ..errors import ParameterError, install_hint
from ..run.places import EXTENSIONS_OVERRIDE
from .discovery import Pair, problem_by_problem

if TYPE_CHECKING:
    from ..options import ExplainOptions

__all__ = ["as_finished", "cluster", "cluster_device", "cluster_slots", "dealt", "remote_build", "remote_row"]


@contextlib.contextmanager
def cluster(address: str):
    """Connected to the Ray cluster at ``address`` (see the module docstring) for the block; yields ``ray``.
    A local instance started here ends with the block."""
    try:
        import ray
    except ImportError:
        raise ParameterError(
            f"Got --ray, but Ray is not installed: {install_hint('cluster')} (or leave --ray out: the local pool "
            "needs no Ray)."
        ) from None
    if not isinstance(address, str) or not address.strip():
        raise ParameterError("Got an empty --ray: give auto, local, ray://HOST:PORT or HOST:PORT.")
    _check_reachable(address)
    options = {"logging_level": logging.ERROR, "log_to_driver": False}
    if address == "local":
        options.update(address="local", include_dashboard=False)
    else:
        options["address"] = address
    try:
        ray.init(**options)
    except Exception as error:  # Ray raises ConnectionError, RuntimeError, ValueError… for an address it cannot use
        hint = (
            ' (ray:// addresses need Ray\'s client: pip install "ray[client]")' if "ray[client]" in str(error) else ""
        )
        raise ParameterError(f"Got --ray {address!r}, but Ray cannot connect there: {error}{hint}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


_CONNECT_S = 10.0  # seconds to reach a cluster's head before giving up (Ray itself retries for minutes)


def _check_reachable(address: str) -> None:
    """For HOST:PORT and ray://HOST:PORT: that something answers there within ``_CONNECT_S``, or a ParameterError.
    Ray's own connection retries for minutes against an address nobody listens on."""
    import socket

    target = address.removeprefix("ray://")
    if address in ("auto", "local") or ":" not in target:
        return
    host, _, port = target.rpartition(":")
    if not port.isdigit():
        raise ParameterError(f"Got --ray {address!r}, but its port {port!r} is not a number.")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=_CONNECT_S).close()
    except OSError as error:
        raise ParameterError(
            f"Got --ray {address!r}, but nothing answers there within {_CONNECT_S:g} s ({error}): is the cluster's "
            "head running, and is this its address (ray status prints it)?"
        ) from None


def cluster_device(ray, device: str) -> str:
    """``device`` resolved against the cluster's resources, not this machine's: auto is cuda where it has GPUs."""
    gpus = ray.cluster_resources().get("GPU", 0)
    if device == "cuda" and not gpus:
        raise ParameterError("Got --device cuda, but the Ray cluster has no GPU resources: use --device cpu.")
    return "cuda" if device == "cuda" or (device == "auto" and gpus) else "cpu"


def cluster_slots(ray, device: str) -> int:
    """How many tasks the cluster runs at once: its GPUs, or its CPUs over two."""
    resources = ray.cluster_resources()
    return max(1, int(resources.get("GPU", 0)) if device == "cuda" else int(resources.get("CPU", 2)) // 2)


def _payload(pair, given, version: str) -> dict:
    """What a task needs of a pair: its id, the two files, and every source file each may read (contents, by path
    from its folder: the pair's snapshot, ``triage.keys.snapshots``, read before any pair ran)."""
    same = given.solution.folder == given.problem.folder
    files = {f"problem/{relative}": data for relative, data in given.problem.contents.items()}
    # beside the problem, the solution's snapshot adds its own file (one a manifest names solution.txt, say)
    files.update({f"{'problem' if same else 'solution'}/{rel}": data for rel, data in given.solution.contents.items()})
    return {
        "id": pair.id,
        "problem": f"problem/{given.problem.name}",
        "solution": f"{'problem' if same else 'solution'}/{given.solution.name}",
        "folders": {"problem": str(given.problem.folder), "solution": str(given.solution.folder)},
        "files": files,
        "version": version,
    }


@contextlib.contextmanager
def _written(payload: dict):
    """The pair's files written to a temporary folder on the node for the block; yields (that folder, the Pair)."""
    from .discovery import Pair

    with tempfile.TemporaryDirectory(prefix="fpa-ray-pair-") as folder:
        root = pathlib.Path(folder)
        for name, data in payload["files"].items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
        yield root, Pair(payload["id"], root / payload["problem"], root / payload["solution"])


# the solution's extensions are built in the folder its files name (``run.places.extensions_folder``: in the node's
# cache, or the --build-cache every node mounts), not one a variable on the node would make common to all: the
# explain task of the same files finds the build, and two solutions naming their extension alike build apart
_OWN_FOLDER = {"TORCH_EXTENSIONS_DIR": ""}


def remote_build(payload: dict, options: dict) -> dict | None:
    """A build task's work, on the node: import the pair's solution alone (``builds.build_ahead``), with no GPU
    visible (Ray leaves a GPU-less task's ``CUDA_VISIBLE_DEVICES`` as the node has it; so that the solution's import
    does not run on a GPU another pair's explain holds — a courtesy, not a boundary: its code may set the variable
    again), so that its extensions are built before its explain task runs; {"seconds", "environment": what the
    explain task must build under to find the build (``_node_arch_list``), "node": where it ran, "error": where the
    import's failure stands as the verdict (an extension that did not compile: ``builds._stands``), the failure as
    ``UserCodeError.to_dict`` with the original files named, which is the pair's row (``as_finished``: no explain
    task); else None, and the explain task imports again}. None on a node with another fp_analysis version (the explain
    task says so); "extensions": how its load_inline calls were answered (``run.extension_store``).
    """
    import ray

    from ..options import ExplainOptions
    from .builds import BUILD_JOBS, build_ahead
    from .keys import tool_version

    if payload["version"] != tool_version():
        return None
    environment = _node_arch_list()
    timeout = ExplainOptions.from_json(options).timeout
    with _written(payload) as (root, pair):
        unseen = {"CUDA_VISIBLE_DEVICES": "", "MAX_JOBS": str(BUILD_JOBS)}
        built = build_ahead(pair, timeout, {**_OWN_FOLDER, **environment, **unseen}, gpu_seen=False)
    error = built["error"]
    node = ray.get_runtime_context().get_node_id()
    handed = _originals(error.to_dict(), root, payload["folders"]) if error is not None else None
    return {"seconds": built["seconds"], "environment": environment, "node": node, "error": handed,
            "extensions": built["extensions"]}  # fmt: skip


def _originals(value, root: pathlib.Path, folders: dict):
    """``value`` (a message, or a record of them) with the node's temporary paths replaced by the original files'."""
    if isinstance(value, str):
        for label, original in folders.items():
            value = value.replace(str(root / label), original)
        return value
    if isinstance(value, dict):
        return {key: _originals(item, root, folders) for key, item in value.items()}
    if isinstance(value, list):
        return [_originals(item, root, folders) for item in value]
    return value


def _node_arch_list() -> dict[str, str]:
    """{"TORCH_CUDA_ARCH_LIST": the node's GPUs' architectures} for a build task and its explain task, where the
    node's environment does not set it: the build sees no GPU, and torch would build for every architecture, and
    again in the explain task, which sees one (``run.extension_store.arch_list`` of what ``nvidia-smi`` lists, every
    GPU of the node, lowered to what this torch was built for). {} without nvidia-smi (a CPU node)."""
    import subprocess

    from ..run.extension_store import arch_list

    if os.environ.get("TORCH_CUDA_ARCH_LIST", "").strip() not in ("", "native"):  # a list of the node's own
        return {}
    try:
        listed = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=30).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return {}
    capabilities = [tuple(map(int, line.split("."))) for line in map(str.strip, listed.splitlines())
                    if re.fullmatch(r"\d+\.\d+", line)]  # fmt: skip
    if not capabilities:
        return {}
    import torch  # what it was built for; this task's own process sees the node's GPUs (or none: nothing lowered)

    return {"TORCH_CUDA_ARCH_LIST": arch_list(capabilities, torch.cuda.get_arch_list())}


def remote_row(payload: dict, options: dict, built: dict | None = None) -> dict:
    """A task's work, on the node: write the pair's files, explain it as a local slot would, name the originals.
    ``options``: the check's ``ExplainOptions`` as ``to_json`` gives them, read back once the node's version is
    known to be the triage's; ``built``: what its build task gave (``remote_build``, without an error), None where
    none ran."""
    from ..options import ExplainOptions
    from .keys import tool_version
    from .rows import explain_row, internal_error_row

    if payload["version"] != tool_version():
        return internal_error_row(
            f"this Ray node has fp_analysis {tool_version()}, the triage {payload['version']}: install the same "
            "version on every node"
        )
    environment = {**_OWN_FOLDER, **(built["environment"] if built else {})}
    with _written(payload) as (root, pair):
        row = explain_row(pair, ExplainOptions.from_json(options), env=environment, built=built)
    if row.get("error"):
        row["error"] = _originals(row["error"], root, payload["folders"])
    return row


def _build_nodes(ray, device: str) -> list[tuple[str, int, int]]:
    """(node id, its explain slots, builds it runs at once) for each live node that explains pairs (one with a GPU
    for a GPU triage) and can run a build (``builds.BUILD_CORES`` CPUs; elsewhere Ray would move the build to another
    node, or wait for ever): as many builds as the CPUs its explains leave (a GPU triage's take one a GPU; a CPU
    triage's, two each, share the node's CPUs with its builds, which take at most half) run at ``BUILD_CORES`` each,
    and its memory holds at ``builds.BUILDER_BYTES`` each; one at least (then builds and explains take turns)."""
    from .builds import BUILD_CORES, BUILDER_BYTES

    nodes = []
    for node in ray.nodes():
        resources = node.get("Resources") or {}
        cpus = resources.get("CPU", 0)
        if not node.get("Alive") or cpus < BUILD_CORES or (device == "cuda" and resources.get("GPU", 0) < 1):
            continue
        slots = int(resources.get("GPU", 0)) if device == "cuda" else int(cpus // 2)
        left = cpus - slots if device == "cuda" else cpus / 2
        builds = int(left / BUILD_CORES)
        if resources.get("memory"):
            builds = min(builds, int(resources["memory"] // BUILDER_BYTES))
        if slots >= 1:
            nodes.append((node["NodeID"], slots, max(1, builds)))
    return nodes


def dealt(pairs: list[Pair], nodes: list[tuple[str, int, int]]) -> dict[str, list[Pair]]:
    """The pairs that build, dealt to the nodes (``_build_nodes``: node, explain slots, builds) in proportion to their
    explain slots, each problem's pairs to one node where they fit: samples of one problem are the likeliest to share a
    kernel, which fpa's store on that node builds once (``run.extension_store``), where dealt in turn each twin was
    built on another node unless the nodes share a build cache (``--build-cache``). A problem with more pairs than a
    slot's share (all pairs over all slots, rounded up) goes in pieces of that share; the pieces, largest first, each
    to the node then least loaded for its slots (Graham's list scheduling, longest first: with equal slots no node
    ends more than one piece above the even deal; Graham 1966, 1969). Each node's pairs are taken one problem's at a
    time in turn (``problem_by_problem``)."""
    if not nodes:
        return {}
    share = max(1, math.ceil(len(pairs) / sum(slots for _, slots, _ in nodes)))
    by_problem: dict = {}
    for pair in pairs:
        by_problem.setdefault(pair.problem, []).append(pair)
    pieces = [group[i : i + share] for group in by_problem.values() for i in range(0, len(group), share)]
    queued: dict[str, list[Pair]] = {node: [] for node, _, _ in nodes}
    for piece in sorted(pieces, key=len, reverse=True):  # stable: equal pieces in the pairs' order
        node, _, _ = min(nodes, key=lambda n: (len(queued[n[0]]) + len(piece)) / n[1])
        queued[node] += piece
    order = {pair.id: index for index, pair in enumerate(pairs)}
    return {node: problem_by_problem(sorted(mine, key=lambda p: order[p.id])) for node, mine in queued.items()}


def as_finished(ray, todo: list, options: ExplainOptions, version: str, given: dict, build_cache: str | None = None):
    """(pair, row) for each pair of ``todo`` as its task finishes under ``options`` (their device resolved against
    the cluster); ``version``: the triage's fp_analysis version, which each node must have; ``given``: each pair's
    snapshot, by id; ``build_cache``: the folder every node builds the solutions' extensions in (``--build-cache``;
    None: each node's own cache), given to each task as ``run.places.EXTENSIONS_OVERRIDE`` (Ray's runtime_env).

    The pairs that build an extension are dealt to the nodes in proportion to their explain slots, a problem's
    pairs together (``dealt``); each node's builds are submitted as it has room for them, and a pair's explain task
    once its build task returned, on its node, where the build is and what it was built for (Ray's node affinity;
    soft: a node that died leaves the explain to another, which builds for itself). The other pairs' explain tasks
    are submitted at once, anywhere (Ray queues them)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from ..errors import UserCodeError
    from .builds import BUILD_CORES, needs_build
    from .rows import explain_row, internal_error_row

    explaining = {"num_gpus": 1, "num_cpus": 1} if options.device == "cuda" else {"num_cpus": 2}
    environment = {} if build_cache is None else {"runtime_env": {"env_vars": {EXTENSIONS_OVERRIDE: build_cache}}}
    explain = ray.remote(max_retries=0, **explaining, **environment)(remote_row)
    build = ray.remote(max_retries=0, num_cpus=BUILD_CORES, **environment)(remote_build)
    checks = options.to_json()
    payloads = {pair.id: ray.put(_payload(pair, given[pair.id], version)) for pair in todo}
    nodes = _build_nodes(ray, options.device)
    to_build = [pair for pair in todo if nodes and needs_build(pair.solution)]
    queued = dealt(to_build, nodes)
    room = {node: builds for node, _, builds in nodes}
    pending = {}  # a task's ref: (pair, its node, whether it is the pair's build)

    def on(node: str | None) -> dict:
        return {} if node is None else {"scheduling_strategy": NodeAffinitySchedulingStrategy(node, soft=True)}

    def submit_builds(node: str) -> None:
        while room[node] and queued[node]:
            pair = queued[node].pop(0)
            room[node] -= 1
            pending[build.options(**on(node)).remote(payloads[pair.id], checks)] = (pair, node, True)

    building = {pair.id for pair in to_build}
    for pair in todo:
        if pair.id not in building:
            pending[explain.remote(payloads[pair.id], checks)] = (pair, None, False)
    for node in queued:
        submit_builds(node)
    try:
        while pending:
            (ready,), _ = ray.wait(list(pending), num_returns=1)
            pair, node, is_build = pending.pop(ready)
            if is_build:
                try:
                    built = ray.get(ready)
                except Exception:  # the build task failed (its node died): the explain task builds for itself
                    built = None
                room[node] += 1
                submit_builds(node)
                if built and built["error"]:  # its extension did not compile: the row, with no GPU task to wait for
                    failed = {**built, "error": UserCodeError.from_dict(built["error"])}
                    yield pair, explain_row(pair, options, env={}, built=failed)
                    continue
                # where the build ran (its node's, unless that one died first), even with a shared cache: built for
                # that node's GPUs (``_node_arch_list``)
                where = built["node"] if built else node
                pending[explain.options(**on(where)).remote(payloads[pair.id], checks, built)] = (pair, where, False)
                continue
            try:
                row = ray.get(ready)
            except Exception as error:  # the task itself failed (its node died): that pair's row
                first = (str(error).splitlines() or [""])[0]
                row = internal_error_row(f"the Ray task failed: {type(error).__name__}: {first}")
            yield pair, row
    finally:
        for ref in pending:  # interrupted: the cluster stops the rest
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
