"""Building a solution's extensions ahead of its explain: which solutions build one, the build itself (the
solution's import alone, in the folder its files name), and what a build costs the machine, for sizing the builders
(the local pool's, ``pool``; a Ray node's, ``ray``) — so that no GPU is held through a compiler."""

from __future__ import annotations

import json
import pathlib
import time

from ..errors import Fate, FpaError, InternalError, UserCodeError
from ..explain.jobs import prepare_file
from ..run.extension_store import COMPILER_KILLED
from ..run.snapshot import Given
from .discovery import Pair

__all__ = [
    "BUILDER_BYTES",
    "BUILD_CORES",
    "BUILD_CORES_WITH_HEADER",
    "BUILD_JOBS",
    "build_ahead",
    "needs_build",
]

# A load_inline extension is two compile units (its C++ bindings and its .cu file), which torch's ninja build runs at
# once: each builder is given that many jobs (MAX_JOBS).
BUILD_JOBS = 2
# The cores a builder keeps busy on average: the .cu unit the whole build, the C++ unit a quarter of it (measured with
# nvcc 13.0 and torch 2.13's headers, experiments/bench_build_memory.py: 91–101 s and 21–28 s). Builders are as many
# as the cores run at that: half the cores left a quarter idle (on the H200 host, 8 builders on 16 cores: 60.6 s a
# build, 66 builds in 540 s). A Ray node's builds parse torch/extension.h (no precompiled header there).
BUILD_CORES = 1.25
# The same where the builders' C++ units read the precompiled header (``headers``: the local pool on a GPU host): the
# C++ unit a tenth of the .cu one. On the H200 host (16 cores, 66 builds, experiments/results/triage_h200.json,
# 2026-12-04) 12 builders (cores / 1.25) gave 614 pairs/hour with the GPU slot idle 41 %, 14 (cores / 1.1) 627 and
# 37 %; where the header turns out unusable, cores / 1.1 builders ask ~1.14 × the cores.
BUILD_CORES_WITH_HEADER = 1.1
# Memory a builder's two units take at once, for sizing the builders: measured with nvcc 13.0 and torch 2.13's headers
# on a typical solution (experiments/bench_build_memory.py: the C++ bindings 1.41 GiB, the .cu file 2.94 GiB at its
# peak, the host compiler parsing torch/extension.h in nvcc's last stage), 4.35 GiB, and a margin for larger files.
BUILDER_BYTES = 5 * 1024**3


def needs_build(solution: pathlib.Path) -> bool:
    """Whether the solution's import may build a torch extension (``load_inline``, ``load``, ``cpp_extension``):
    such pairs are built ahead on the CPU cores. A plain-PyTorch solution is not imported twice."""
    try:
        text = solution.read_text(errors="replace")
    except OSError:
        return False
    return "load_inline" in text or "cpp_extension" in text


def build_ahead(
    pair: Pair, timeout: float, env: dict[str, str], given: Given | None = None, *, gpu_seen: bool = True
) -> dict:
    """Import the pair's solution alone (``jobs.prepare_file``), so that its extensions are built into the pair's
    extensions folder before a GPU's worker takes it; {"seconds", "error": the import's failure where it stands as
    the pair's verdict (``_stands``; ``gpu_seen``: whether the import could see a GPU), else None, "extensions": how
    many of its ``load_inline`` calls were compiled in fpa's store, found there, failed to
    compile there, or left to the solution's own build (``run.extension_store.ANSWERS``)}."""
    start = time.perf_counter()
    error, extensions = None, {}
    try:
        extensions = prepare_file(pair.solution, timeout=timeout, env=env, given=given).get("extensions", {})
    except InternalError:
        pass  # ours, not the solution's: the explain job meets it again and its row says so
    except FpaError as failure:
        error = failure if _stands(failure, pair.solution, gpu_seen) else None
        if isinstance(failure, UserCodeError):  # its calls answered before it failed (``run.candidate.prepare_job``)
            extensions = failure.details.get("extensions") or {}
    return {"seconds": time.perf_counter() - start, "error": error, "extensions": extensions}


# How torch words a failed build of a JIT extension (torch.utils.cpp_extension._jit_compile)
_COMPILE_FAILED = "Error building extension '"


def _stands(failure: FpaError, solution: pathlib.Path, gpu_seen: bool) -> bool:
    """Whether a build's failure is the pair's verdict, which its job reports without importing the solution again:
    the solution's own doing (it raised, or changed its files), not a compiler the system killed (out of memory:
    the builders' load, not the solution's code). Where the build saw no GPU, only a failure of torch's build of
    the extension, by a solution that neither asks torch.cuda nor builds for the GPU it runs on (``-arch=native``,
    ``TORCH_CUDA_ARCH_LIST=native``: without one nvcc builds for another, where sm_80 code fails): either may build
    otherwise with a GPU; any other import may need the GPU the job has."""
    if not isinstance(failure, UserCodeError) or failure.fate not in (Fate.RAISED, Fate.MODIFIED_FILES):
        return False
    said = json.dumps(failure.to_dict(), default=str)  # the message and the traceback: the compiler's output
    if any(words in said for words in COMPILER_KILLED):
        return False
    if gpu_seen:
        return True
    try:
        text = solution.read_text(errors="replace")
        asks_the_gpu = "torch.cuda" in text or "native" in text
    except OSError:
        asks_the_gpu = True
    return _COMPILE_FAILED in said and not asks_the_gpu
