"""``fpa fuzz OP``: property-based search over our own kernel variants of a preset op, shrunk to the minimum.

Each example draws a conv configuration, its data and a twinned variant (``fp_analysis.strategies``); it fails
where the variant's CPU twin exceeds its deterministic bound against the exact result, where a conv3d_kk1 depth
slice differs from conv2d of its input slice, or, on a GPU, where the CUDA kernel differs from its twin. It runs in
this process: our own kernels, no user code.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import given
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from ..explain.jobs import default_max_examples
from ..model.verdict import CauseKind
from ..options import PRESET_KERNEL_OPS, check_count, check_op, resolve_device
from ..strategies import config_spec, conv2d_configs, conv3d_kk1_configs
from .hypothesis_setup import example_database, files_in_cache, search_settings

__all__ = ["fuzz_op"]


def _op_check(kind, problem, variant, dev: torch.device) -> str | None:
    """Why this example of our own variant is wrong, or None (see ``fuzz_op``)."""
    from fpa_kernels import Op, run_variant, twin, variant_bound
    from fpa_kernels.twin import all_output_indices

    from ..numerics.bounds import term_sums
    from ..ops.conv import conv2d_spec
    from ..ops.epilogue import EpilogueSpec, epilogue_torch
    from ..ops.reference import fp64_at
    from ..ops.terms import gather_terms

    config, x, w, b = problem
    spec = config_spec(config)
    x = x.contiguous()
    m = (
        torch.randn(spec.out_channels, 1, 1, generator=torch.Generator().manual_seed(1))
        if kind is Op.CONV_GELU
        else None
    )
    got = twin(variant, spec, x, w, b, m)
    terms = gather_terms(spec, x, w, b, all_output_indices(got.shape))
    exact = fp64_at(terms)
    per_output = m.reshape(-1).numpy()[terms.index[:, 1]] if m is not None else None
    sums = term_sums(terms.w, terms.x, terms.bias)
    bound = variant_bound(variant, sums, conv=exact, multiplier=per_output).deterministic
    if m is not None:
        exact = epilogue_torch(
            torch.from_numpy(exact), torch.from_numpy(per_output.astype(np.float64)), EpilogueSpec(0.01, variant.gelu)
        ).numpy()
    err = np.abs(got.reshape(-1).astype(np.float64) - exact)
    finite = np.isfinite(err) & np.isfinite(bound)
    if np.any(err[finite] > bound[finite]):
        return f"error beyond the deterministic bound (max ratio {np.max(err[finite] / bound[finite]):.3g})"
    if kind is Op.CONV3D_KK1:
        padding = tuple(p[0] for p in spec.padding[:2]) if spec.is_symmetric_padding else "same"
        flat_spec = conv2d_spec(
            spec.in_channels,
            spec.out_channels,
            spec.kernel_size[:2],
            spec.stride[:2],
            padding,
            spec.dilation[:2],
            spec.groups,
            spec.bias,
        )
        flat_variant = type(variant)(Op.CONV2D, variant.accumulation, variant.term_order, variant.fast_math)
        for d in range(got.shape[-1]):
            j = d * spec.stride[2] - spec.padding[2][0]  # a (k,k,1) kernel reads exactly one input slice
            if 0 <= j < x.shape[-1]:
                want = twin(flat_variant, flat_spec, x[..., j].contiguous(), w[..., 0].contiguous(), b)
                if not np.array_equal(got[..., d].view(np.uint32), want.view(np.uint32)):
                    return f"depth slice {d} differs from conv2d of input slice {j}"
    if dev.type == "cuda":
        on_gpu = [t.cuda() if t is not None else None for t in (x, w, b, m)]
        kernel = run_variant(variant, spec, *on_gpu).cpu().numpy()
        if not np.array_equal(kernel.view(np.uint32), got.view(np.uint32)):
            return "the CUDA kernel differs from its CPU twin"
    return None


def fuzz_op(op: str, *, max_examples: int | None = None, device: str = "auto", seed: int = 0) -> dict:
    """Fuzz our own variants of ``op`` (one of PRESET_NAMES; the twinned variants): each twin's error ≤ its
    deterministic bound against the exact result; for conv3d_kk1, each depth slice equals conv2d of its input
    slice (same variant) bit for bit; on a GPU, the kernel equals its twin bit for bit. Returns
    {"failures": [...], "examples": n, "shrink_steps": k} (counted as for ``fuzz_kernelbench``)."""
    from fpa_kernels import Op, variant_matrix

    from ..strategies import conv_inputs

    kind = Op(PRESET_KERNEL_OPS[check_op(op)])
    max_examples = default_max_examples() if max_examples is None else check_count("max_examples", max_examples)
    dev = resolve_device(device)
    configs = conv3d_kk1_configs(max_outputs=3000) if kind is Op.CONV3D_KK1 else conv2d_configs(max_outputs=3000)
    variants = [v for v in variant_matrix(kind) if v.twinned]
    kinds = ("uniform", "normal", "heavy_tailed", "subnormal_rich", "cancellation")
    counts = {"examples": 0, "shrink_steps": 0}
    last: list = []

    @search_settings(max_examples, example_database("op", op, dev.type))
    @hypothesis_seed(seed)
    @given(st.tuples(conv_inputs(configs, kinds=kinds), st.sampled_from(variants)))
    def prop(example):
        problem, variant = example
        counts["shrink_steps" if last else "examples"] += 1
        reason = _op_check(kind, problem, variant, dev)
        if reason:
            last[:] = [problem[0], variant.label, reason]
            raise AssertionError(reason)

    failures = []
    try:
        with files_in_cache():
            prop()
    except AssertionError:
        config, label, reason = last
        failures.append(
            {
                "config": {k: list(v) if isinstance(v, tuple) else v for k, v in config.items()},
                "variant": label,
                "max_abs": None,
                "command": f"fpa fuzz {op} --device {dev.type} --seed {seed} --max-examples {max_examples}",
                "explanation": {"verdict": CauseKind.BUG.value, "evidence": reason},
            }
        )
    return {"failures": failures, **counts}
