"""What fpa's store of extension builds (``fp_analysis.run.extension_store``) costs and saves on the triage's
build-ahead path, on this machine's CPU: C++ ``load_inline`` solutions built by ``triage.builds.build_ahead`` in a
pool of builder threads, as ``fpa triage --device cuda`` runs them, once with the store and once without
(``FPA_EXTENSION_STORE=0``: each solution builds in its own folder, as before the store), each from a cold cache.

The solutions: ``--kernels`` distinct extensions (one constant apart), ``--resamples`` more samples of the first
of them (other Python, the same ``load_inline`` call), and ``--broken`` samples of one extension whose source does not
compile (a stray name: with the store it compiles once, without it each sample's compiles in its own folder,
and before the store kept failures each compiled twice). Prints, for each run, the wall seconds, each build's seconds
and how the builds' calls were answered (compiled in the store, found there, failed there, built by the solution),
and the ratio of the two walls.

    python experiments/bench_extension_store.py [--kernels 4] [--resamples 4] [--broken 0] [--builders 2]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import pathlib
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_PROBLEM = """
import torch
from torch import nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2.0


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
"""
_SOLUTION = """
from torch import nn
from torch.utils.cpp_extension import load_inline

_ext = load_inline("scaled_{kernel}", cpp_sources={source!r}, functions=["scaled"])


class ModelNew(nn.Module):  # sample {sample}
    def forward(self, x):
        return _ext.scaled(x) * 2.0
"""
_SOURCE = "#include <torch/extension.h>\ntorch::Tensor scaled(torch::Tensor x) {{ return x * {factor}{end}; }}\n"


def write(folder: pathlib.Path, kernels: int, resamples: int, broken: int = 0) -> list[pathlib.Path]:
    """The problem and its solutions in ``folder``; the solutions' paths."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "problem.py").write_text(_PROBLEM)
    solutions = []
    for index in range(kernels + resamples + broken):
        kernel = index if index < kernels else 0  # the resamples: the first kernel's call, byte for byte
        if index >= kernels + resamples:  # the broken samples: one call, a stray name before the semicolon
            kernel = kernels
        end = " x" if index >= kernels + resamples else ""
        source = _SOURCE.format(factor=f"1.0 + {kernel}e-9", end=end)
        path = folder / f"sample_{index}.py"
        path.write_text(_SOLUTION.format(kernel=kernel, source=source, sample=index))
        solutions.append(path)
    return solutions


def run(solutions: list[pathlib.Path], builders: int, store: bool) -> dict:
    """Build every solution ahead in ``builders`` threads from a cold cache; the run's figures."""
    from fp_analysis.run.snapshot import Given
    from fp_analysis.triage.builds import BUILD_JOBS, build_ahead
    from fp_analysis.triage.discovery import Pair
    from fp_analysis.triage.pool import pair_extensions

    cache = tempfile.mkdtemp(prefix="bench-store-cache-")
    os.environ["XDG_CACHE_HOME"] = cache
    os.environ["FPA_EXTENSION_STORE"] = "1" if store else "0"

    def one(solution: pathlib.Path) -> dict:
        pair = Pair(id=solution.stem, problem=solution.parent / "problem.py", solution=solution, expected=None)
        given = Given.take(pair.problem, pair.solution)
        env = {"TORCH_EXTENSIONS_DIR": pair_extensions(given), "MAX_JOBS": str(BUILD_JOBS)}
        return build_ahead(pair, 600.0, env, given, gpu_seen=False)

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(builders) as pool:
        built = list(pool.map(one, solutions))
    wall = time.perf_counter() - start

    def count(kind: str) -> int:
        return sum(each["extensions"].get(kind, 0) for each in built)

    return {
        "wall_s": wall,
        "build_s": [round(each["seconds"], 1) for each in built],
        "errors": [str(each["error"])[:200] for each in built if each["error"] is not None],
        "compiled_in_store": count("built"),
        "found_in_store": count("found"),
        "failed_in_store": count("failed"),
        "built_by_the_solution": count("own"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=4)
    parser.add_argument("--resamples", type=int, default=4)
    parser.add_argument("--broken", type=int, default=0)
    parser.add_argument("--builders", type=int, default=2)
    args = parser.parse_args()
    folder = pathlib.Path(tempfile.mkdtemp(prefix="bench-store-"))
    solutions = write(folder, args.kernels, args.resamples, args.broken)
    from fp_analysis.run.children import start_fork_server

    start_fork_server()
    walls = {}
    for store in (True, False):
        figures = run(solutions, args.builders, store)
        walls[store] = figures["wall_s"]
        print(f"{'with the store' if store else 'without (each solution its own build)'}: {figures}")
    print(f"wall with the store / without: {walls[True] / walls[False]:.2f} ({args.kernels} kernels, "
          f"{args.resamples} resamples, {args.broken} broken, {args.builders} builders, "
          f"{os.cpu_count()} cores)")  # fmt: skip


if __name__ == "__main__":
    main()
