"""An analysis never imports torch._dynamo (fp_analysis/model/dynamo_guards.py): it cost seconds of every job.

Each Model is analysed in a fresh interpreter (another test of this process may have imported torch._dynamo), on
a candidate that differs from the reference, so the engine runs its floor, its rewrites (sum orders, the one-pass
variance form) and the selection re-checks: every path that reaches a decomposition or a dispatch mode of ours.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

_ANALYSE = textwrap.dedent(
    """
    import sys
    import torch
    from torch import nn
    from fp_analysis.model.engine import analyse_model

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(16)
            self.ln = nn.LayerNorm(32)

        def forward(self, x):
            y = self.ln(self.bn(x))
            return torch.softmax(y, dim=-1).cumsum(-1) + torch.argmax(y, dim=1, keepdim=True)

    torch.manual_seed(0)
    model, x = Model(), torch.randn(8, 16, 32)
    with torch.no_grad():
        reference = model(x)
    candidate = reference.clone()
    candidate.view(-1)[:5] += 1e-5  # a difference, so the analysis runs all of its steps
    analysis = analyse_model(model, [x], reference, candidate)
    assert analysis.causes, analysis
    print("torch._dynamo" in sys.modules)
    """
)


def test_an_analysis_of_norms_softmax_scans_and_argmax_does_not_import_dynamo():
    result = subprocess.run([sys.executable, "-c", _ANALYSE], capture_output=True, text=True, timeout=110)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().splitlines()[-1] == "False", "an analysis imported torch._dynamo"
