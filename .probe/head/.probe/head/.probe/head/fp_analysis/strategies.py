"""Hypothesis strategies for conv configurations, epilogue parameters and awkward tensor data.

Composable and bounded so that one example stays cheap on a CPU (outputs ≤ ``max_outputs`` and
K ≤ ``max_terms`` by default). Configs are dicts with PyTorch's constructor names (``in_channels``,
``out_channels``, ``kernel_size``, ``stride``, ``padding``, ``dilation``, ``groups``, ``bias``) plus
``input_shape``; ``config_spec`` turns one into an ``fp_analysis.ops.ConvSpec``. Shrinking moves
towards batch 1, one group, kernel 1, stride 1, no padding, no dilation, no bias and small sizes, so a
failure shrinks to the parameter that matters.
"""

from __future__ import annotations

import numpy as np
import torch
from hypothesis import assume
from hypothesis import strategies as st

from .errors import FpaError
from .ops.conv import ConvSpec, conv2d_spec, conv3d_kk1_spec
from .ops.epilogue import EpilogueSpec, GeluForm

__all__ = [
    "DATA_KINDS",
    "LAYOUTS",
    "config_spec",
    "conv2d_configs",
    "conv3d_kk1_configs",
    "conv_inputs",
    "epilogue_params",
    "tensors",
]

SIZES = (1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17)  # 1, primes, powers of two and their neighbours
DATA_KINDS = ("uniform", "normal", "heavy_tailed", "subnormal_rich", "huge_tiny", "cancellation")
LAYOUTS = ("contiguous", "channels_last", "non_contiguous")


def config_spec(config: dict) -> ConvSpec:
    """The ConvSpec of a config drawn by these strategies (3 spatial dims → conv3d (k,k,1))."""
    args = {k: v for k, v in config.items() if k != "input_shape"}
    return (conv3d_kk1_spec if len(config["input_shape"]) == 5 else conv2d_spec)(**args)


def _per_axis(draw, values, nd: int, square_bias: float = 0.5):
    """An int (all axes equal) or a tuple, one value per axis."""
    if draw(st.booleans()) if square_bias else False:
        return draw(values)
    return tuple(draw(values) for _ in range(nd))


@st.composite
def _configs(draw, nd: int, max_channels: int, max_kernel: int, max_size: int, max_outputs: int, max_terms: int):
    depthwise = draw(st.booleans()) and draw(st.booleans())
    groups = draw(st.integers(1, max_channels)) if depthwise else draw(st.sampled_from([1, 1, 2, 3, 4]))
    per_group_in = 1 if depthwise else draw(st.integers(1, max(1, max_channels // groups)))
    per_group_out = draw(st.integers(1, max(1, max_channels // groups)))
    kernel = [draw(st.integers(1, max_kernel)) for _ in range(2)] + ([1] if nd == 3 else [])
    stride = _per_axis(draw, st.integers(1, 3), nd)
    dilation = _per_axis(draw, st.integers(1, 3), nd)
    padding_kind = draw(st.sampled_from(["int", "tuple", "same", "valid"]))
    if padding_kind == "same":
        padding, stride = "same", 1
    elif padding_kind == "valid":
        padding = "valid"
    else:
        padding = (
            draw(st.integers(0, 3)) if padding_kind == "int" else tuple(draw(st.integers(0, 3)) for _ in range(nd))
        )
    sizes = st.sampled_from([s for s in SIZES if s <= max_size])
    depth = (draw(st.sampled_from([1, 2, 3, 5, 33, 40])),) if nd == 3 else ()
    input_shape = (draw(st.sampled_from([1, 1, 2, 3])), groups * per_group_in, draw(sizes), draw(sizes), *depth)
    config = dict(
        in_channels=groups * per_group_in,
        out_channels=groups * per_group_out,
        kernel_size=kernel[0] if kernel[0] == kernel[1] and nd == 2 else tuple(kernel),
        stride=stride,
        padding=padding,
        dilation=dilation,
        groups=groups,
        bias=draw(st.booleans()),
        input_shape=input_shape,
    )
    try:
        spec = config_spec(config)
        out = spec.output_shape(input_shape)
    except FpaError:
        assume(False)
    assume(int(np.prod(out)) <= max_outputs and spec.K <= max_terms)
    return config


def conv2d_configs(
    *, max_channels: int = 8, max_kernel: int = 5, max_size: int = 17, max_outputs: int = 20_000, max_terms: int = 200
) -> st.SearchStrategy[dict]:
    """Valid torch.nn.Conv2d configs with an input shape: batch 1–3, odd/prime/non-square sizes, stride,
    padding as int / tuple / 'same' / 'valid', dilation, groups incl. depthwise, bias."""
    return _configs(2, max_channels, max_kernel, max_size, max_outputs, max_terms)


def conv3d_kk1_configs(
    *, max_channels: int = 6, max_kernel: int = 4, max_size: int = 13, max_outputs: int = 30_000, max_terms: int = 100
) -> st.SearchStrategy[dict]:
    """Valid conv3d configs with a (kh, kw, 1) kernel: stride, padding and dilation on all three axes, depth 1 to
    40 (beyond 32 on purpose), groups incl. depthwise, bias."""
    return _configs(3, max_channels, max_kernel, max_size, max_outputs, max_terms)


def epilogue_params() -> st.SearchStrategy[EpilogueSpec]:
    """LeakyReLU slopes (0.01 as KernelBench, 0, 0.2, 1) and both GELU forms."""
    return st.builds(
        EpilogueSpec, negative_slope=st.sampled_from([0.01, 0.0, 0.2, 1.0]), approximate=st.sampled_from(list(GeluForm))
    )


def make_tensor(shape: tuple[int, ...], kind: str, seed: int, layout: str = "contiguous") -> torch.Tensor:
    """The float32 tensor that ``tensors`` draws for (kind, seed, layout): data examples replay from these three."""
    if kind not in DATA_KINDS or layout not in LAYOUTS:
        raise FpaError(f"Got kind={kind!r}, layout={layout!r}; kinds are {DATA_KINDS}, layouts {LAYOUTS}.")
    values = np.asarray(_values(kind, tuple(shape), np.random.default_rng(seed)), dtype=np.float32)  # 0-d too
    return _layout(torch.from_numpy(values), layout)


def _values(kind: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    if kind == "uniform":  # torch.rand, as KernelBench draws inputs
        return rng.random(shape)
    if kind == "normal":
        return rng.standard_normal(shape)
    if kind == "heavy_tailed":
        return rng.standard_t(1.5, shape)
    if kind == "subnormal_rich":  # a third subnormal fp32 values, a third tiny normals, a third O(1)
        pick = rng.integers(0, 3, shape)
        return np.choose(
            pick,
            [
                rng.standard_normal(shape) * 2.0**-135,
                rng.standard_normal(shape) * 2.0**-120,
                rng.standard_normal(shape),
            ],
        )
    if kind == "huge_tiny":
        return rng.standard_normal(shape) * np.exp2(rng.integers(-40, 40, shape))
    # cancellation: values in ± pairs along the last axis, so sums nearly vanish next to Σ|terms|
    base = rng.standard_normal(shape)
    signs = np.where(np.arange(shape[-1]) % 2 == 0, 1.0, -1.0) if shape else 1.0
    return np.abs(base) * signs * (1 + rng.standard_normal(shape) * 2.0**-12)


def _layout(t: torch.Tensor, layout: str) -> torch.Tensor:
    if layout == "channels_last" and t.dim() in (4, 5):
        return t.contiguous(memory_format=torch.channels_last if t.dim() == 4 else torch.channels_last_3d)
    if layout == "non_contiguous" and t.dim() >= 2:
        wide = torch.zeros((*t.shape[:-1], 2 * t.shape[-1]), dtype=t.dtype)
        wide[..., ::2] = t
        return wide[..., ::2]  # same values, every other element of a wider tensor
    return t


@st.composite
def tensors(
    draw, shape: tuple[int, ...], kinds: tuple[str, ...] = DATA_KINDS, layouts: tuple[str, ...] = LAYOUTS
) -> torch.Tensor:
    """A float32 tensor of ``shape``: one of ``kinds`` of data (seeded, so examples replay exactly) in one
    of ``layouts`` (contiguous, channels_last, a non-contiguous strided view)."""
    return make_tensor(
        shape, draw(st.sampled_from(kinds)), draw(st.integers(0, 2**32 - 1)), draw(st.sampled_from(layouts))
    )


@st.composite
def conv_inputs(
    draw, configs: st.SearchStrategy[dict], kinds: tuple[str, ...] = DATA_KINDS, layouts: tuple[str, ...] = LAYOUTS
) -> tuple[dict, torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """(config, input, weight, bias): a config and data for it; weights normal / √K, bias normal / 10."""
    config = draw(configs)
    spec = config_spec(config)
    x = draw(tensors(tuple(config["input_shape"]), kinds, layouts))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    w = torch.from_numpy((rng.standard_normal(spec.weight_shape) / np.sqrt(spec.K)).astype(np.float32))
    b = torch.from_numpy((rng.standard_normal(spec.out_channels) / 10).astype(np.float32)) if spec.bias else None
    return config, x, w, b
