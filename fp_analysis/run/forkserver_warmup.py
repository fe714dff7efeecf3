"""The fork server's warm-up: run once in the server what jobs first run and import, so the children forked after it
start warm.

What it runs is torch's first convolution and numba's twins (``orders.accumulate``, ``arith.add32``), which the
kernels' twins in ``fpa fuzz`` of a seed op compute with: loading the twins from numba's cache is paid by every
process that does it, unless the process is forked from one that has. It also imports what torch's first
``torch._check`` imports (``torch.fx.experimental.symbolic_shapes``, and sympy with it): the reference
decompositions the engine evaluates norms through (``torch._refs``) call it, and a job importing it itself paid
0.36 s (measured on 2 cores: each group-norm pair of a triage), where the warm-up, once a session, takes ~0.5 s
longer for it. It is our own fixed code, never the user's,
and the only torch the server (``fp_analysis.run.forkserver_loop``) runs itself.
"""

from __future__ import annotations

import contextlib

__all__ = ["warm_before", "warm_up"]

_workers_forked = 0  # in the server: workers forked so far
_warmed = False


def warm_before(target: str) -> None:
    """Warm up (``warm_up``) before the second worker is forked, not when the server starts.

    A job loads what it uses itself, so the warm-up pays off only for the jobs forked after it: done at the
    start, it was on the way of every first job, and a single ``fpa explain`` whose analysis uses no twin (most
    on a GPU: the twins are for two plain fp32 sides) waited for it for nothing. Before the second worker, a
    session of many jobs (triage, fuzz, the tests) still forks all but its first warm. A warm-up that fails is not
    tried again: the children load what they need.
    """
    global _workers_forked, _warmed
    if target != "worker":
        return
    if _workers_forked and not _warmed:
        _warmed = True
        with contextlib.suppress(Exception):
            warm_up()
    _workers_forked += 1


def warm_up() -> None:
    """Run once, in the server, what jobs first run and import (see the module docstring), so that the jobs forked
    after it (all but the first: ``warm_before``) start warm.

    On one torch thread, so that no OpenMP pool exists when the server forks (each child sets its own thread
    count, ``forkserver_loop._become``); inside ``fork_rng`` so that torch's default generator is where a fresh
    interpreter's is. numba's compiler works in the forked children after this (checked: children compile new
    functions).
    """
    import numpy as np
    import torch
    import torch.fx.experimental.symbolic_shapes  # what torch._check imports at its first call

    from ..numerics.arith import add32
    from ..numerics.orders import AccumulationSpec, accumulate
    from ..ops.conv import spec_of_module
    from ..ops.terms import gather_terms, sample_output_indices

    torch.set_num_threads(1)
    with torch.random.fork_rng(devices=[]), torch.no_grad():
        module = torch.nn.Conv2d(2, 3, 3)
        x = torch.rand(1, 2, 6, 6)
        y = module(x)
        index = sample_output_indices(tuple(y.shape), 8, 0)
        terms = gather_terms(spec_of_module(module), x, module.weight.detach(), module.bias.detach(), index)
        np.asarray(add32(accumulate(terms.w, terms.x, AccumulationSpec(), terms.bias), terms.bias))
