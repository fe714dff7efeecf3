"""Problems of the team's suite (tests/model_suite.py) through ``fpa explain`` end to end, with solution files:
the engine's verdict and location as the command reports them.
"""

from __future__ import annotations

import pathlib

from ..cli_runs import explain_args, fpa
from ..model_suite import PROBLEMS, load


def _solution(tmp_path, text: str) -> pathlib.Path:
    path = tmp_path / "solution.py"
    path.write_text(text)
    return path


def test_explain_end_to_end_on_a_transposed_conv_with_a_tanh_gelu(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path / "store"))
    problem = load(next(p for p in PROBLEMS if p.name == "convtranspose3d_gelu"), tmp_path)
    solution = _solution(tmp_path, (
        "import torch.nn.functional as F\nfrom torch import nn\n\n\nclass ModelNew(nn.Module):\n"
        "    def __init__(self, *args):\n        super().__init__()\n"
        "        self.conv = nn.ConvTranspose3d(*args)\n\n"
        "    def forward(self, x):\n        return F.gelu(self.conv(x), approximate='tanh')\n"
    ))  # fmt: skip
    run = fpa(*explain_args(pathlib.Path(problem.__file__), solution, "--json", "--trials", "2"))
    assert run.code == 0 and run.data["verdict"] == "gelu_approximation", run.stdout
    assert run.data["causes"][0]["op"] == "the gelu after the ConvTranspose3d `conv`"
    assert run.data["floor"]["method"] == "monte_carlo" and run.data["ops"][0]["name"] == "convolution"


def test_explain_end_to_end_locates_an_ignored_output_padding(tmp_path, monkeypatch):
    monkeypatch.setenv("FPA_STORE", str(tmp_path / "store"))
    problem = load(next(p for p in PROBLEMS if p.name == "convtranspose2d_35_leaky"), tmp_path)
    solution = _solution(tmp_path, (
        "import torch.nn.functional as F\nfrom torch import nn\n\n\nclass ModelNew(nn.Module):\n"
        "    def __init__(self, *args):\n        super().__init__()\n"
        "        self.conv = nn.ConvTranspose2d(*args, stride=(2, 1), padding=(1, 2), output_padding=(1, 0))\n\n"
        "    def forward(self, x):\n        c = self.conv\n"
        "        y = F.conv_transpose2d(x, c.weight, c.bias, c.stride, c.padding, 0)  # output_padding forgotten\n"
        "        return F.leaky_relu(F.pad(y, (0, 0, 0, 1)))\n"
    ))  # fmt: skip
    run = fpa(*explain_args(pathlib.Path(problem.__file__), solution, "--json", "--trials", "2"))
    assert run.code == 1 and run.data["verdict"] == "bug"
    assert "all in the last 1 rows" in run.data["causes"][0]["evidence"]
