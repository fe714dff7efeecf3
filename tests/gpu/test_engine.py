"""The whole-Model engine on a GPU: cuDNN's own TF32 is named on the side that ran it."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from fp_analysis.model.engine import Effort, analyse_model


class _ConvGelu(nn.Module):
    """Large enough in K (32·3·3 = 288) that TF32 operands leave the fp32 floor far behind."""

    def __init__(self, transposed: bool = False):
        super().__init__()
        self.conv = nn.ConvTranspose3d(32, 16, 3, stride=2) if transposed else nn.Conv2d(32, 64, 3)

    def forward(self, x):
        return torch.nn.functional.gelu(self.conv(x))


def _on_gpu(model: nn.Module, x: torch.Tensor, *, conv_tf32: bool) -> torch.Tensor:
    from fp_analysis.numerics.backends import tf32

    with torch.no_grad(), tf32(conv=conv_tf32, matmul=conv_tf32):
        return model(x)


@pytest.mark.gpu
@pytest.mark.parametrize("transposed", [False, True], ids=["conv2d", "convtranspose3d"])
def test_gpu_tf32_of_cudnn_is_named_on_the_side_that_ran_it(transposed):
    torch.manual_seed(0)
    model = _ConvGelu(transposed).cuda()
    # shapes on which cuDNN (9.19, H200) picks TF32 kernels: experiments/results/tf32_probe_h200.json
    x = torch.rand(2, 32, 8, 8, 8).cuda() if transposed else torch.rand(8, 32, 48, 48).cuda()
    tf32_out, plain = _on_gpu(model, x, conv_tf32=True), _on_gpu(model, x, conv_tf32=False)
    # The default (TF32 allowed) stays on while the engine runs: its fp32 baseline must switch TF32 off itself.
    if torch.equal(tf32_out, plain):
        pytest.skip("cuDNN chose an fp32 kernel for this shape even with TF32 allowed: nothing to name")

    analysis = analyse_model(model, [x], tf32_out, plain, effort=Effort(runs=4))
    assert analysis.verdict == "reference_tf32", analysis.hypotheses
    swapped = analyse_model(model, [x], plain, tf32_out, effort=Effort(runs=4))
    assert swapped.verdict == "candidate_tf32", swapped.hypotheses
    both = analyse_model(model, [x], tf32_out, tf32_out.clone(), effort=Effort(runs=4))
    assert [c.name for c in both.causes] == ["shared_tf32"]
