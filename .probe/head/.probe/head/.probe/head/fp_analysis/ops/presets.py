"""The three seed problems as data, and ``make_problem`` to instantiate one the way KernelBench does.

Each preset follows a KernelBench problem file: the module's constructor arguments (``get_init_inputs``)
and the input shape (``get_inputs``). ``make_problem`` reproduces KernelBench's protocol for one seed:
``torch.manual_seed(seed)``, build the reference module (default PyTorch initialisation), then
``x = torch.rand(input_shape)`` (float32, CPU), so the same seed gives the same weights and inputs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from ..errors import ParameterError
from ..numerics.memory import require
from ..options import SEED_MAX
from .conv import ConvSpec, conv2d_spec, conv3d_kk1_spec
from .epilogue import EpilogueSpec, GeluForm
from .modules import reference_module
from .terms import require_terms_memory

__all__ = ["PRESETS", "Preset", "Problem", "make_problem", "require_sample_memory", "resolve_input_shape"]


@dataclass(frozen=True)
class Preset:
    """One seed problem: the op as a spec, its full-size input shape, and its epilogue if any."""

    name: str
    spec: ConvSpec
    input_shape: tuple[int, ...]
    epilogue: EpilogueSpec | None
    multiplier_shape: tuple[int, ...] | None
    description: str


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset(
            name="dilated_conv2d",
            spec=conv2d_spec(32, 64, (5, 9), stride=1, padding=(2, 4), dilation=(2, 3), bias=False),
            input_shape=(8, 32, 512, 512),
            epilogue=None,
            multiplier_shape=None,
            description=(
                "2-d convolution with an asymmetric (5, 9) kernel, dilation (2, 3) and padding (2, 4), "
                "no bias: K = 32·45 = 1440 terms per output; output 8×64×512×496."
            ),
        ),
        Preset(
            name="conv3d_kk1",
            spec=conv3d_kk1_spec(3, 64, 3, stride=1, padding=0, bias=False),
            input_shape=(16, 3, 256, 256, 10),
            epilogue=None,
            multiplier_shape=None,
            description=(
                "3-d convolution with a (3, 3, 1) kernel over a depth-10 volume, no bias (KernelBench's "
                "default for this problem): K = 3·9 = 27 terms per output; output 16×64×254×254×10."
            ),
        ),
        Preset(
            name="conv_gelu",
            spec=conv2d_spec(64, 64, 3, bias=True),
            input_shape=(64, 64, 256, 256),
            epilogue=EpilogueSpec(negative_slope=0.01, approximate=GeluForm.NONE),
            multiplier_shape=(64, 1, 1),
            description=(
                "KernelBench level 2 problem 54: Conv2d(64, 64, 3) with bias, × per-channel multiplier "
                "(64, 1, 1), LeakyReLU(0.01), GELU (erf form): K = 64·9 = 576 terms per output."
            ),
        ),
    )
}


@dataclass(frozen=True)
class Problem:
    """An instantiated preset: the module and detached float32 CPU copies of its tensors."""

    preset: Preset
    input_shape: tuple[int, ...]
    module: nn.Module
    x: torch.Tensor
    weight: torch.Tensor
    bias: torch.Tensor | None
    multiplier: torch.Tensor | None

    @property
    def spec(self) -> ConvSpec:
        """The preset's convolution spec."""
        return self.preset.spec

    @property
    def epilogue(self) -> EpilogueSpec | None:
        """The preset's epilogue (None for a plain convolution)."""
        return self.preset.epilogue


def _resolve_preset(preset: Any) -> Preset:
    if isinstance(preset, Preset):
        return preset
    if isinstance(preset, str) and preset in PRESETS:
        return PRESETS[preset]
    raise ParameterError(f"preset must be a Preset or one of {sorted(PRESETS)}; got {preset!r}")


def resolve_input_shape(preset: Preset | str, batch: Any = None, input_shape: Any = None) -> tuple[int, ...]:
    """The input shape ``make_problem`` would use (validated, nothing allocated): the preset's, or with ``batch``
    replaced, or ``input_shape``."""
    preset = _resolve_preset(preset)
    if batch is not None and input_shape is not None:
        raise ParameterError("give batch or input_shape, not both (input_shape already fixes the batch size)")
    if input_shape is not None:
        if not isinstance(input_shape, Sequence) or isinstance(input_shape, str):
            raise ParameterError(f"input_shape must be a tuple of ints (N, C, *spatial), got {input_shape!r}")
        shape = tuple(input_shape)
    else:
        shape = preset.input_shape
        if batch is not None:
            if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
                raise ParameterError(f"batch must be a positive integer, got {batch!r}")
            shape = (batch, *shape[1:])
    preset.spec.output_shape(shape)  # raises ShapeError with PyTorch's message if it does not fit
    if shape[0] < 1:
        raise ParameterError(f"input_shape must have a batch size >= 1, got {list(shape)}")
    return tuple(int(s) for s in shape)


def require_sample_memory(preset: Preset | str, samples: int, batch: Any = None, input_shape: Any = None) -> None:
    """Refuse, before anything is allocated, ``samples`` sampled outputs whose terms would not fit in memory."""
    resolved = _resolve_preset(preset)
    shape = resolve_input_shape(resolved, batch, input_shape)
    outputs = math.prod(resolved.spec.output_shape(shape))
    require_terms_memory(resolved.spec, min(samples, outputs))


def make_problem(
    preset: Preset | str, seed: int = 0, batch: int | None = None, input_shape: Sequence[int] | None = None
) -> Problem:
    """Return the preset's module and input for ``seed``, following KernelBench's protocol.

    ``torch.manual_seed(seed)``; build ``reference_module`` (default PyTorch init, then the multiplier
    ``torch.randn`` for conv_gelu); then ``x = torch.rand(input_shape)``. ``batch`` replaces N of the
    preset's input shape and ``input_shape`` replaces the whole shape (keep CPU runs small); the full
    presets allocate hundreds of MB to GB. Note: this reseeds torch's global RNG.
    """
    resolved = _resolve_preset(preset)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= SEED_MAX:
        raise ParameterError(f"seed must be an integer in [0, {SEED_MAX}], got {seed!r}")
    shape = resolve_input_shape(resolved, batch, input_shape)
    given = f"input_shape={list(shape)}" if input_shape is not None else f"batch={batch}"
    require({"fp32 input": 4 * math.prod(shape)}, given if batch or input_shape else f"preset {resolved.name}")
    torch.manual_seed(seed)
    module = reference_module(resolved.spec, resolved.epilogue, resolved.multiplier_shape)
    x = torch.rand(shape, dtype=torch.float32)
    conv = module.conv if hasattr(module, "conv") else module
    multiplier = getattr(module, "multiplier", None)
    return Problem(
        preset=resolved,
        input_shape=shape,
        module=module,
        x=x,
        weight=conv.weight.detach(),
        bias=None if conv.bias is None else conv.bias.detach(),
        multiplier=None if multiplier is None else multiplier.detach(),
    )
