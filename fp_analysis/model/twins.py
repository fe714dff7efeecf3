"""Bit-for-bit evidence of an order: each side compared with CPU twins of cuDNN's fp32 convolution at sampled outputs.

A side equal to a twin at every sampled output computed exactly that chain, the strongest evidence of an order there
is; it applies where the Model is one Conv2d/Conv3d module on its input.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np
import torch

from .compare import differing
from .graph import OpKind, OpRecord

__all__ = ["twin_evidence", "twin_words"]


# Terms (sampled outputs × K) up to which the twin evidence emulates the fmaf chain in numpy (``fma_emulation``)
# rather than run numba's compiled one: numba's load costs a process more than the rest of a small explanation, and
# two emulated chains of up to 2^23 terms cost about what the load does (experiments/PERF_NOTES.md, issue 27's
# section, has the measurements).
_EMULATED_AT_MOST = 1 << 23


def twin_words(twins: dict[str, str], sides: dict) -> str:
    """The twin evidence as words: each side that equals a twin at the sampled outputs; where both equal the same
    one there, their differences lie outside the sample, which says nothing of an order."""
    names = set(twins.values())
    if len(twins) == 2 and len(names) == 1:
        count = int(differing(sides["reference"], sides["candidate"]).sum())
        return (
            f"; both sides equal {names.pop()} bit for bit at every sampled output, so their {count} differing "
            "outputs lie outside the sample (no order is shown)"
        )
    return "".join(f"; the {side} equals {twin} bit for bit at every sampled output" for side, twin in twins.items())


def _numba_loaded() -> bool:
    return "numba" in sys.modules


def _fmaf_chain(w, x, init):
    from ..numerics.fma_emulation import fma_chain

    return fma_chain(w, x, init)


def _compiled_fmaf_chain(w, x, init):
    from ..numerics.orders import AccumulationSpec, accumulate

    return accumulate(w, x, AccumulationSpec(), init)


def twin_evidence(
    model: torch.nn.Module, ops: Sequence[OpRecord], inputs: Sequence, sides: dict, samples: int = 2000, seed: int = 0
) -> dict[str, str]:
    """Side → the CPU twin it equals bit for bit, for a Model that is one Conv2d/Conv3d module on its input.

    cuDNN's fp32 convolution is a plain fmaf chain with the input channel outermost, the bias added first or
    last (experiments/results/gpu_validation.json, shared/facts/h100_order_fastmath.json): a side equal to
    that chain at every sampled output computed exactly it, the strongest evidence of an order there is.
    """
    from ..ops.conv import spec_of_module
    from ..ops.terms import gather_terms, sample_output_indices

    linear = [o for o in ops if o.kind is OpKind.LINEAR]
    x = next((t for t in inputs if isinstance(t, torch.Tensor)), None)
    if len(linear) != 1 or linear[0].name != "convolution" or x is None:
        return {}
    if any(o.kind not in (OpKind.LINEAR, OpKind.EXACT) for o in ops):
        return {}
    try:
        module = model.get_submodule(linear[0].module)
        spec = spec_of_module(module)
        if (
            spec.transposed
            or spec.spatial_dims == 1
            or spec.output_shape(tuple(x.shape)) != tuple(sides["reference"].shape)
        ):
            return {}
    except Exception:  # not the one conv on the Model's input this evidence is about
        return {}
    index = sample_output_indices(tuple(sides["reference"].shape), samples, seed)
    bias = None if module.bias is None else module.bias.detach().float().cpu()
    terms = gather_terms(spec, x.detach().float().cpu(), module.weight.detach().float().cpu(), bias, index)
    # numba's chain where its load is paid already (a job forked after the fork server's warm-up, fpa fuzz) or
    # would pay off; the emulation where it would be most of the job's time
    compiled = _numba_loaded() or terms.w.size > _EMULATED_AT_MOST
    chain = _compiled_fmaf_chain if compiled else _fmaf_chain
    twins = {"the fp32 fmaf chain, input channel outermost (cuDNN's fp32 order)": chain(terms.w, terms.x, terms.bias)}
    if terms.bias is not None:  # numpy's float32 addition: the bias's one rounding to nearest even
        twins["the same chain with the bias added last"] = chain(terms.w, terms.x, None) + terms.bias
    found = {}
    for side, values in sides.items():
        at = values.detach().float().cpu().numpy()[tuple(index.T)]
        for name, twin in twins.items():
            if np.array_equal(at.view(np.uint32), twin.view(np.uint32)):
                found[side] = name
                break
    return found
