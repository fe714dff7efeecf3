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
cluster holds. Each task builds its solution's extensions itself: building ahead (``--builders``) is the local
pool's. ``ADDRESS``: ``auto`` (the running cluster this machine belongs to), ``ray://host:port`` or
``host:port``, or ``local`` to start a Ray instance on this machine's cores (what the tests use).

Ray is optional (``pip install "fp_analysis[cluster]"``); without it ``--ray`` is a usage error naming the
install. This module imports Ray only when asked to.
"""

from __future__ import annotations

import contextlib
import logging
import pathlib
import tempfile
from typing import TYPE_CHECKING

from ..errors import ParameterError, install_hint
from ..run.places import EXTENSIONS_OVERRIDE

if TYPE_CHECKING:
    from ..options import ExplainOptions

__all__ = ["as_finished", "cluster", "cluster_device", "cluster_slots", "remote_row"]


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


def remote_row(payload: dict, options: dict) -> dict:
    """A task's work, on the node: write the pair's files, explain it as a local slot would, name the originals.
    ``options``: the check's ``ExplainOptions`` as ``to_json`` gives them, read back once the node's version is
    known to be the triage's."""
    from ..options import ExplainOptions
    from .discovery import Pair
    from .keys import tool_version
    from .rows import explain_row, internal_error_row

    if payload["version"] != tool_version():
        return internal_error_row(
            f"this Ray node has fp_analysis {tool_version()}, the triage {payload['version']}: install the same "
            "version on every node"
        )
    with tempfile.TemporaryDirectory(prefix="fpa-ray-pair-") as folder:
        root = pathlib.Path(folder)
        for name, data in payload["files"].items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
        pair = Pair(payload["id"], root / payload["problem"], root / payload["solution"])
        # empty: the solution builds in the folder its files name (``run.places.extensions_folder``: in this node's
        # cache, or the --build-cache every node mounts), not one a variable on the node would make common to all; a
        # later task of the same files finds the build, and two solutions naming their extension alike build apart
        env = {"TORCH_EXTENSIONS_DIR": ""}
        row = explain_row(pair, ExplainOptions.from_json(options), env=env, built=None)
    if row.get("error"):
        for label, original in payload["folders"].items():
            row["error"] = row["error"].replace(str(root / label), original)
    return row


def as_finished(ray, todo: list, options: ExplainOptions, version: str, given: dict, build_cache: str | None = None):
    """(pair, row) for each pair of ``todo`` as its task finishes under ``options`` (their device resolved against
    the cluster), every task submitted at once (Ray queues them on the cluster's resources); ``version``: the
    triage's fp_analysis version, which each node must have; ``given``: each pair's snapshot, by id;
    ``build_cache``: the folder every node builds the solutions' extensions in (``--build-cache``; None: each
    node's own cache), given to each task as ``run.places.EXTENSIONS_OVERRIDE`` (Ray's runtime_env)."""
    resources = {"num_gpus": 1, "num_cpus": 1} if options.device == "cuda" else {"num_cpus": 2}
    if build_cache is not None:
        resources["runtime_env"] = {"env_vars": {EXTENSIONS_OVERRIDE: build_cache}}
    task = ray.remote(max_retries=0, **resources)(remote_row)
    checks = options.to_json()
    pending = {task.remote(_payload(pair, given[pair.id], version), checks): pair for pair in todo}
    try:
        while pending:
            (ready,), _ = ray.wait(list(pending), num_returns=1)
            pair = pending.pop(ready)
            try:
                row = ray.get(ready)
            except Exception as error:  # the task itself failed (its node died): that pair's row
                from .rows import internal_error_row

                first = (str(error).splitlines() or [""])[0]
                row = internal_error_row(f"the Ray task failed: {type(error).__name__}: {first}")
            yield pair, row
    finally:
        for ref in pending:  # interrupted: the cluster stops the rest
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
