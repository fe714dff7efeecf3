"""The team's own KernelBench-format problems: every conv kind, and after it every op family real problems use.

Each ``Problem`` renders to a KernelBench problem file (``Model``, ``get_inputs``, ``get_init_inputs``):
constructor arguments as KernelBench's are (ints where the module wants tuples, extra parameters given by
shape), inputs from ``torch.rand``. Shapes are small so the whole suite runs on a CPU in CI. The families
follow shared/facts/kernelbench_conv_families.md: Conv1d/2d/3d (full kernels and (k,k,1)),
ConvTranspose1d/2d/3d (stride, output_padding, groups), Linear and batched matrix products, followed by
Mish, tanh, GELU (both forms), LeakyReLU, HardSwish, Hardtanh, clamp, ReLU, sigmoid, Swish, scaling and
adding (C,1,1) parameters, max/avg/adaptive pooling, mean/sum/logsumexp, softmax, GroupNorm, LayerNorm and
BatchNorm in training mode.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import pathlib
import textwrap


@dataclasses.dataclass(frozen=True)
class Problem:
    name: str
    init: str  # the constructor's parameters, e.g. "in_channels, out_channels, kernel_size"
    init_values: str  # get_init_inputs()'s list, e.g. "[4, 8, 3]"
    layers: str  # __init__'s body after super().__init__()
    forward: str  # forward's body, x the input
    input_shape: tuple[int, ...]
    transposed_output_padding: bool = False  # a ConvTranspose with output_padding > 0 (for its bug)
    grouped: bool = False  # a conv with groups > 1 (for the group-offset bug)

    def source(self) -> str:
        return (
            f'"""{self.name}: a KernelBench-format problem of fp_analysis\'s own suite."""\n\n'
            "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
            "class Model(nn.Module):\n"
            f"    def __init__(self, {self.init}):\n"
            "        super().__init__()\n"
            + textwrap.indent(textwrap.dedent(self.layers).strip(), " " * 8)
            + "\n\n    def forward(self, x):\n"
            + textwrap.indent(textwrap.dedent(self.forward).strip(), " " * 8)
            + "\n\n\ndef get_inputs():\n"
            f"    return [torch.rand{self.input_shape}]\n\n\n"
            "def get_init_inputs():\n"
            f"    return {self.init_values}\n"
        )


def _conv(kind: str, args: str) -> str:
    return f"self.conv = nn.{kind}({args})"


C = "in_channels, out_channels, kernel_size"
KK1 = "self.conv = nn.Conv3d(in_channels, out_channels, (kernel_size, kernel_size, 1))"
CS = "in_channels, out_channels, kernel_size, stride, padding, output_padding"

PROBLEMS = [
    # Conv2d
    Problem("conv2d_mish", C, "[4, 8, 3]", _conv("Conv2d", C), "return F.mish(self.conv(x))", (2, 4, 10, 9)),
    Problem(
        "conv2d_tanh_scale", C + ", scaling_factor", "[4, 8, 3, 2.0]",
        _conv("Conv2d", C) + "\nself.scaling_factor = scaling_factor",
        "return torch.tanh(self.conv(x)) * self.scaling_factor", (2, 4, 9, 11),
    ),
    Problem("conv2d_gelu", C, "[4, 6, 3]", _conv("Conv2d", C), "return F.gelu(self.conv(x))", (2, 4, 10, 10)),
    Problem(
        "conv2d_leaky_clamp", C, "[4, 8, 3]", _conv("Conv2d", C),
        "x = F.leaky_relu(self.conv(x), 0.1)\nreturn torch.clamp(x, -0.2, 0.3)", (2, 4, 9, 9),
    ),
    Problem("conv2d_hardswish", C, "[4, 8, 5]", _conv("Conv2d", C + ", padding=2"), "return F.hardswish(self.conv(x))",
            (2, 4, 8, 12)),
    Problem(
        "conv2d_groupnorm_tanh", C + ", num_groups", "[4, 8, 3, 2]",
        _conv("Conv2d", C) + "\nself.norm = nn.GroupNorm(num_groups, out_channels)",
        "return torch.tanh(self.norm(self.conv(x)))", (2, 4, 9, 9),
    ),
    Problem(
        "conv2d_batchnorm_relu", C, "[4, 8, 3]", _conv("Conv2d", C) + "\nself.bn = nn.BatchNorm2d(out_channels)",
        "return torch.relu(self.bn(self.conv(x)))", (4, 4, 8, 8),
    ),
    Problem(
        "conv2d_maxpool_hardtanh", C, "[4, 8, 3]", _conv("Conv2d", C) + "\nself.pool = nn.MaxPool2d(2)",
        "return F.hardtanh(self.pool(self.conv(x)), -0.5, 0.5)", (2, 4, 10, 10),
    ),
    Problem(
        "conv2d_avgpool_sigmoid", C, "[4, 8, 3]", _conv("Conv2d", C) + "\nself.pool = nn.AvgPool2d(2)",
        "return torch.sigmoid(self.pool(self.conv(x)))", (2, 4, 10, 10),
    ),
    Problem("conv2d_mean", C, "[4, 8, 3]", _conv("Conv2d", C), "return self.conv(x).mean(dim=(2, 3), keepdim=True)",
            (3, 4, 9, 9)),
    Problem("conv2d_softmax", C, "[4, 8, 3]", _conv("Conv2d", C), "return torch.softmax(self.conv(x), dim=1)",
            (2, 4, 9, 9)),
    Problem(
        "conv2d_params_leaky_gelu", C + ", bias_shape", "[4, 8, 3, (8, 1, 1)]",
        _conv("Conv2d", C) + "\nself.scale = nn.Parameter(torch.randn(bias_shape))"
        "\nself.shift = nn.Parameter(torch.randn(bias_shape) * 0.1)",
        "x = self.conv(x) * self.scale + self.shift\nreturn F.gelu(F.leaky_relu(x))", (2, 4, 9, 10),
    ),
    Problem(
        "conv2d_depthwise_hardswish", "channels, kernel_size", "[8, 3]",
        "self.conv = nn.Conv2d(channels, channels, kernel_size, padding=1, groups=channels)",
        "return F.hardswish(self.conv(x))", (2, 8, 9, 9), grouped=True,
    ),
    Problem(
        "conv2d_then_linear_gelu", C + ", features", "[4, 6, 3, 5]",
        _conv("Conv2d", C) + "\nself.fc = nn.Linear(out_channels, features)",
        "x = self.conv(x).mean(dim=(2, 3))\nreturn F.gelu(self.fc(x))", (3, 4, 8, 8),
    ),
    Problem(
        "conv2d_residual_relu", C, "[4, 4, 3]",
        "self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)"
        "\nself.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size, padding=1)",
        "y = self.conv1(x)\nreturn torch.relu(y + self.conv2(y))", (2, 4, 8, 8),
    ),
    # Conv1d
    Problem("conv1d_gelu_tanh", C, "[4, 8, 5]", _conv("Conv1d", C), "return F.gelu(self.conv(x), approximate='tanh')",
            (2, 4, 20)),
    Problem("conv1d_relu_mean", C, "[4, 8, 3]", _conv("Conv1d", C), "return torch.relu(self.conv(x)).mean(dim=2)",
            (3, 4, 17)),
    Problem(
        "conv1d_layernorm", C + ", length", "[4, 8, 3, 15]", _conv("Conv1d", C) + "\nself.norm = nn.LayerNorm(length)",
        "return self.norm(self.conv(x))", (2, 4, 17),
    ),
    # Conv3d, full kernels
    Problem("conv3d_mish_tanh", C, "[3, 6, 3]", _conv("Conv3d", C), "return torch.tanh(F.mish(self.conv(x)))",
            (2, 3, 6, 6, 6)),
    Problem(
        "conv3d_357_groupnorm_mean", C + ", num_groups", "[3, 8, (3, 5, 7), 4]",
        _conv("Conv3d", C) + "\nself.norm = nn.GroupNorm(num_groups, out_channels)",
        "return self.norm(self.conv(x)).mean(dim=(2, 3, 4))", (2, 3, 6, 7, 9),
    ),
    Problem(
        "conv3d_maxpool_softmax", C, "[3, 6, 3]", _conv("Conv3d", C) + "\nself.pool = nn.MaxPool3d(2)",
        "return torch.softmax(self.pool(self.conv(x)), dim=1)", (2, 3, 6, 6, 6),
    ),
    Problem(
        "conv3d_adaptive_avgpool", C, "[3, 6, 3]", _conv("Conv3d", C) + "\nself.pool = nn.AdaptiveAvgPool3d((2, 2, 2))",
        "return self.pool(self.conv(x))", (2, 3, 7, 7, 7),
    ),
    Problem("conv3d_logsumexp", C, "[3, 6, 3]", _conv("Conv3d", C), "return torch.logsumexp(self.conv(x), dim=1)",
            (2, 3, 6, 6, 6)),
    # Conv3d with a (k, k, 1) kernel, as KernelBench's seed 001
    Problem(
        "conv3d_kk1_leaky_gelu", C, "[3, 6, 3]", KK1,
        "return F.gelu(F.leaky_relu(self.conv(x)))", (2, 3, 8, 8, 4),
    ),
    Problem(
        "conv3d_kk1_hardswish_clamp", C, "[3, 6, 3]", KK1,
        "return torch.clamp(F.hardswish(self.conv(x)), min=0.0, max=0.5)", (2, 3, 8, 8, 3),
    ),
    # ConvTranspose1d
    Problem(
        "convtranspose1d_tanh", CS, "[4, 6, 3, 2, 1, 1]", _conv("ConvTranspose1d", CS),
        "return torch.tanh(self.conv(x))",
        (2, 4, 9), transposed_output_padding=True,
    ),
    # ConvTranspose2d
    Problem(
        "convtranspose2d_mish", CS, "[4, 6, 3, 2, 1, 1]", _conv("ConvTranspose2d", CS), "return F.mish(self.conv(x))",
        (2, 4, 6, 7), transposed_output_padding=True,
    ),
    Problem(
        "convtranspose2d_grouped_gelu", C + ", groups", "[4, 6, 3, 2]",
        "self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=2, groups=groups)",
        "return F.gelu(self.conv(x))", (2, 4, 5, 6), grouped=True,
    ),
    Problem(
        "convtranspose2d_batchnorm_hardtanh", C, "[4, 6, 3]",
        "self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=2)"
        "\nself.bn = nn.BatchNorm2d(out_channels)",
        "return F.hardtanh(self.bn(self.conv(x)))", (3, 4, 5, 5),
    ),
    Problem(
        "convtranspose2d_maxpool_sum", C, "[4, 6, 3]",
        "self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=2)\nself.pool = nn.MaxPool2d(2)",
        "return self.pool(self.conv(x)).sum(dim=1, keepdim=True)", (2, 4, 6, 6),
    ),
    Problem(
        "convtranspose2d_softmax_scale", C + ", scaling_factor", "[4, 6, 3, 1.5]",
        "self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size)\nself.scaling_factor = scaling_factor",
        "return torch.softmax(self.conv(x), dim=1) * self.scaling_factor", (2, 4, 6, 6),
    ),
    Problem(
        "convtranspose2d_35_leaky", C, "[4, 6, (3, 5)]",
        "self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=(2, 1), padding=(1, 2), "
        "output_padding=(1, 0))",
        "return F.leaky_relu(self.conv(x))", (2, 4, 6, 7), transposed_output_padding=True,
    ),
    Problem(
        "convtranspose2d_pool_linear", C + ", features", "[4, 6, 3, 5]",
        "self.conv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size)"
        "\nself.fc = nn.Linear(out_channels, features)",
        "x = F.adaptive_avg_pool2d(self.conv(x), 1).flatten(1)\nreturn self.fc(x)", (3, 4, 6, 6),
    ),
    # ConvTranspose3d
    Problem(
        "convtranspose3d_gelu", CS, "[3, 4, 3, 2, 1, 1]", _conv("ConvTranspose3d", CS), "return F.gelu(self.conv(x))",
        (2, 3, 4, 4, 4), transposed_output_padding=True,
    ),
    Problem(
        "convtranspose3d_groupnorm_hardswish", C + ", num_groups", "[3, 4, 3, 2]",
        "self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size)"
        "\nself.norm = nn.GroupNorm(num_groups, out_channels)",
        "return F.hardswish(self.norm(self.conv(x)))", (2, 3, 4, 4, 4),
    ),
    Problem(
        "convtranspose3d_avgpool_sigmoid", C, "[3, 4, 3]",
        "self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=2)\nself.pool = nn.AvgPool3d(2)",
        "return torch.sigmoid(self.pool(self.conv(x)))", (2, 3, 3, 4, 4),
    ),
    Problem(
        "convtranspose3d_mean", C, "[3, 4, 3]",
        "self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size)",
        "return self.conv(x).mean(dim=(2, 3, 4), keepdim=True)", (3, 3, 4, 4, 4),
    ),
    Problem(
        "convtranspose3d_grouped_swish", C + ", groups", "[4, 4, 3, 2]",
        "self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, groups=groups)",
        "x = self.conv(x)\nreturn x * torch.sigmoid(x)", (2, 4, 4, 4, 3), grouped=True,
    ),
    Problem(
        "convtranspose3d_logsumexp_relu", C, "[3, 4, 3]",
        "self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size)",
        "return torch.relu(torch.logsumexp(self.conv(x), dim=1, keepdim=True))", (2, 3, 4, 4, 4),
    ),
    Problem(
        "convtranspose3d_clamp_scale", C + ", bias_shape", "[3, 4, 3, (4, 1, 1, 1)]",
        "self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size)"
        "\nself.scale = nn.Parameter(torch.randn(bias_shape))",
        "return torch.clamp(self.conv(x), -0.4, 0.4) * self.scale", (2, 3, 4, 4, 4),
    ),
    # Linear and matrix products
    Problem("linear_gelu", "in_features, out_features", "[24, 16]", "self.fc = nn.Linear(in_features, out_features)",
            "return F.gelu(self.fc(x))", (8, 24)),
    Problem(
        "linear_layernorm_tanh", "in_features, out_features", "[24, 16]",
        "self.fc = nn.Linear(in_features, out_features)\nself.norm = nn.LayerNorm(out_features)",
        "return torch.tanh(self.norm(self.fc(x)))", (8, 24),
    ),
    Problem("linear_softmax", "in_features, out_features", "[24, 16]", "self.fc = nn.Linear(in_features, out_features)",
            "return torch.softmax(self.fc(x), dim=1)", (8, 24)),
    Problem(
        "bmm_mish", "k, n", "[12, 10]", "self.weight = nn.Parameter(torch.randn(k, n) / k**0.5)",
        "return F.mish(torch.bmm(x, self.weight.expand(x.shape[0], -1, -1)))", (3, 5, 12),
    ),
]  # fmt: skip


def write(problem, folder: pathlib.Path) -> pathlib.Path:
    """The problem's file in ``folder`` (any problem with a ``name`` and a ``source()``: tests/family_suite.py's too),
    written whole at once: test processes running side by side read and write the same files, and one must never
    import another's half-written file."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{problem.name}.py"
    source = problem.source()
    if not path.exists() or path.read_text() != source:
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(source)
        os.replace(partial, path)
    return path


def load(problem, folder: pathlib.Path, prefix: str = "suite"):
    """The problem's module, imported from its file (``prefix``_name in ``sys.modules``' namespace)."""
    path = write(problem, folder)
    spec = importlib.util.spec_from_file_location(f"{prefix}_{problem.name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
