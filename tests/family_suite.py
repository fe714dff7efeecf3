"""The team's own KernelBench-format problems beyond convolutions: every level-1 family and a spread of level 2 and 3.

tests/model_suite.py holds the conv and linear Models (one ``torch.rand`` input each); these are the Models without a
convolution or a matrix product at their heart, and those whose inputs are several or not all uniform: matrix
products of every KernelBench shape (square, batched, matrix-vector, large K, a 4-d tensor times a matrix, diagonal,
symmetric, lower-triangular, transposed), activations, softmax and log-softmax, norms, pooling, reductions, scans,
losses, attention, then level 2's chains after a Gemm and reduced level 3 networks (an MLP, a LeNet, a ResNet basic
block, a transformer block, an LSTM, a GRU). Each ``Family`` renders to a KernelBench problem file (``Model``,
``get_inputs``, ``get_init_inputs``); shapes are small so every analysis runs on a CPU in CI. Argmax and argmin are
left out (integer outputs). The transformer block comes twice: in eval mode, where nn.MultiheadAttention would take
its fused fast path (one ATen op, ``_native_multi_head_attention``), and in training mode (dropout 0), where it runs
op by op through scaled_dot_product_attention.

``tags`` say which planted cases of tests/unit/test_families.py apply beyond the ones every family gets: ``tf32``
(the linear ops' operands can be rounded to TF32 by hand).
"""

from __future__ import annotations

import dataclasses
import pathlib
import textwrap

from . import model_suite


@dataclasses.dataclass(frozen=True)
class Family:
    name: str
    level: int
    forward: str  # forward's body
    inputs: str  # get_inputs()'s body
    args: str = "x"  # forward's parameters
    init: str = ""  # the constructor's parameters
    init_values: str = "[]"  # get_init_inputs()'s list
    layers: str = ""  # __init__'s body after super().__init__()
    eval_mode: bool = False  # the Model puts itself in eval mode at the end of __init__
    tags: frozenset[str] = frozenset()

    def source(self) -> str:
        init = f"self, {self.init}" if self.init else "self"
        layers = textwrap.dedent(self.layers).strip()
        if self.eval_mode:
            layers = f"{layers}\nself.eval()".strip()
        body = textwrap.indent(layers, " " * 8) + "\n" if layers else ""
        return (
            f'"""{self.name}: a KernelBench-format problem (level {self.level}) of fp_analysis\'s family suite."""\n\n'
            "import math\n\nimport torch\nimport torch.nn.functional as F\nfrom torch import nn\n\n\n"
            "class Model(nn.Module):\n"
            f"    def __init__({init}):\n"
            "        super().__init__()\n"
            + body
            + f"\n    def forward(self, {self.args}):\n"
            + textwrap.indent(textwrap.dedent(self.forward).strip(), " " * 8)
            + "\n\n\ndef get_inputs():\n"
            + textwrap.indent(textwrap.dedent(self.inputs).strip(), " " * 4)
            + "\n\n\ndef get_init_inputs():\n"
            f"    return {self.init_values}\n"
        )


def _f(name, level, forward, inputs, **kwargs) -> Family:
    tags = frozenset(kwargs.pop("tags", ()))
    return Family(name, level, forward, inputs, tags=tags, **kwargs)


AB = "A, B"
ACT = "return [torch.randn(8, 48)]"  # an activation's input
RED = "return [torch.randn(4, 16, 12)]"  # a reduction's or a scan's input
DIM = {"init": "dim", "init_values": "[1]", "layers": "self.dim = dim"}
PAIR = "return [torch.randn(32, 16), torch.randn(32, 16)]"
PT = "predictions, targets"
TF32 = ("tf32",)

FAMILIES = [
    # ---- level 1: matrix products, the operands the inputs
    _f("matmul_square", 1, "return torch.matmul(A, B)", "return [torch.randn(32, 32), torch.randn(32, 32)]",
       args=AB, tags=TF32),
    _f("matmul_batched", 1, "return torch.bmm(A, B)", "return [torch.randn(4, 16, 24), torch.randn(4, 24, 12)]",
       args=AB, tags=TF32),
    _f("matrix_vector", 1, "return torch.matmul(A, B)", "return [torch.randn(32, 64), torch.randn(64, 1)]",
       args=AB, tags=TF32),
    _f("matmul_large_k", 1, "return torch.matmul(A, B)", "return [torch.randn(8, 8192), torch.randn(8192, 8)]",
       args=AB, tags=TF32),
    _f("matmul_4d_tensor_matrix", 1, 'return torch.einsum("bijl,lk->bijk", A, B)',
       "return [torch.randn(2, 3, 4, 16), torch.randn(16, 8)]", args=AB, tags=TF32),
    _f("matmul_diagonal", 1, "return torch.diag(A) @ B", "return [torch.randn(32), torch.randn(32, 16)]",
       args=AB, tags=TF32),
    _f("matmul_symmetric", 1, "return torch.matmul(A, B)",
       "A = torch.randn(24, 24)\nB = torch.randn(24, 24)\nreturn [(A + A.T) / 2, (B + B.T) / 2]", args=AB, tags=TF32),
    _f("matmul_lower_triangular", 1, "return torch.tril(torch.matmul(A, B))",
       "return [torch.tril(torch.randn(24, 24)), torch.tril(torch.randn(24, 24))]", args=AB, tags=TF32),
    _f("matmul_transposed_a", 1, "return torch.matmul(A.T, B)",
       "return [torch.randn(48, 16), torch.randn(48, 12)]", args=AB, tags=TF32),
    # ---- level 1: activations
    _f("relu", 1, "return torch.relu(x)", ACT),
    _f("leaky_relu", 1, "return F.leaky_relu(x, negative_slope=self.negative_slope)", ACT,
       init="negative_slope", init_values="[0.01]", layers="self.negative_slope = negative_slope"),
    _f("sigmoid", 1, "return torch.sigmoid(x)", ACT),
    _f("tanh", 1, "return torch.tanh(x)", ACT),
    _f("swish", 1, "return x * torch.sigmoid(x)", ACT),
    _f("gelu", 1, "return F.gelu(x)", ACT),
    _f("selu", 1, "return torch.selu(x)", ACT),
    _f("hardsigmoid", 1, "return F.hardsigmoid(x)", ACT),
    _f("hardswish", 1, "return F.hardswish(x)", ACT),
    _f("softplus", 1, "return F.softplus(x)", ACT),
    _f("softsign", 1, "return x / (1 + torch.abs(x))", ACT),
    _f("elu", 1, "return F.elu(x, alpha=self.alpha)", ACT, init="alpha", init_values="[1.0]",
       layers="self.alpha = alpha"),
    _f("hardtanh", 1, "return F.hardtanh(x, min_val=-1.0, max_val=1.0)", ACT),
    _f("new_gelu", 1,
       "return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))", ACT),
    # ---- level 1: softmax
    _f("softmax", 1, "return torch.softmax(x, dim=1)", "return [torch.randn(4, 128)]"),
    _f("log_softmax", 1, "return torch.log_softmax(x, dim=self.dim)", "return [torch.randn(4, 128)]", **DIM),
    # ---- level 1: norms
    _f("batchnorm2d", 1, "return self.bn(x)", "return [torch.randn(4, 8, 6, 6)]", init="num_features",
       init_values="[8]", layers="self.bn = nn.BatchNorm2d(num_features)"),
    _f("instancenorm2d", 1, "return self.inorm(x)", "return [torch.randn(2, 8, 6, 6)]", init="num_features",
       init_values="[8]", layers="self.inorm = nn.InstanceNorm2d(num_features=num_features)"),
    _f("groupnorm", 1, "return self.gn(x)", "return [torch.randn(2, 8, 6, 6)]", init="num_features, num_groups",
       init_values="[8, 4]", layers="self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)"),
    _f("layernorm", 1, "return self.ln(x)", "return [torch.randn(2, 8, 6, 6)]", init="normalized_shape",
       init_values="[(8, 6, 6)]", layers="self.ln = nn.LayerNorm(normalized_shape=normalized_shape)"),
    _f("rmsnorm", 1, "rms = torch.sqrt(torch.mean(x**2, dim=1, keepdim=True) + self.eps)\nreturn x / rms",
       "return [torch.randn(2, 8, 6, 6)]", init="num_features, eps", init_values="[8, 1e-5]",
       layers="self.num_features = num_features\nself.eps = eps"),
    _f("frobenius_norm", 1, 'norm = torch.norm(x, p="fro")\nreturn x / norm', "return [torch.randn(2, 8, 6, 6)]"),
    _f("l1_norm", 1, "return x / torch.sum(torch.abs(x), dim=1, keepdim=True)", "return [torch.randn(8, 64)]"),
    _f("l2_norm", 1, "return x / torch.norm(x, p=2, dim=1, keepdim=True)", "return [torch.randn(8, 64)]"),
    # ---- level 1: pooling
    _f("maxpool1d", 1, "return self.pool(x)", "return [torch.randn(2, 4, 32)]",
       init="kernel_size, stride, padding, dilation", init_values="[4, 2, 1, 1]",
       layers="self.pool = nn.MaxPool1d(kernel_size, stride=stride, padding=padding, dilation=dilation)"),
    _f("maxpool2d", 1, "return self.pool(x)", "return [torch.randn(2, 4, 12, 12)]",
       init="kernel_size, stride, padding, dilation", init_values="[3, 2, 1, 2]",
       layers="self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding, dilation=dilation)"),
    _f("maxpool3d", 1, "return self.pool(x)", "return [torch.randn(2, 3, 8, 8, 8)]",
       init="kernel_size, stride, padding", init_values="[3, 2, 1]",
       layers="self.pool = nn.MaxPool3d(kernel_size, stride=stride, padding=padding)"),
    _f("avgpool1d", 1, "return self.pool(x)", "return [torch.randn(2, 4, 32)]",
       init="kernel_size, stride, padding", init_values="[4, 2, 1]",
       layers="self.pool = nn.AvgPool1d(kernel_size, stride=stride, padding=padding)"),
    _f("avgpool2d", 1, "return self.pool(x)", "return [torch.randn(2, 4, 12, 12)]",
       init="kernel_size", init_values="[3]", layers="self.pool = nn.AvgPool2d(kernel_size)"),
    _f("avgpool3d", 1, "return self.pool(x)", "return [torch.randn(2, 3, 8, 8, 8)]",
       init="kernel_size, stride, padding", init_values="[3, 2, 1]",
       layers="self.pool = nn.AvgPool3d(kernel_size, stride=stride, padding=padding)"),
    # ---- level 1: reductions over a dim
    _f("sum_dim", 1, "return torch.sum(x, dim=self.dim, keepdim=True)", RED, **DIM),
    _f("mean_dim", 1, "return torch.mean(x, dim=self.dim)", RED, **DIM),
    _f("max_dim", 1, "return torch.max(x, dim=self.dim)[0]", RED, **DIM),
    _f("min_dim", 1, "return torch.min(x, dim=self.dim)[0]", RED, **DIM),
    _f("prod_dim", 1, "return torch.prod(x, dim=self.dim)", RED, **DIM),
    _f("cumsum", 1, "return torch.cumsum(x, dim=self.dim)", RED, **DIM),
    _f("cumprod", 1, "return torch.cumprod(x, dim=self.dim)", "return [torch.rand(4, 32)]", **DIM),
    _f("reverse_cumsum", 1, "return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)", RED, **DIM),
    _f("exclusive_cumsum", 1,
       "first = torch.zeros_like(x.narrow(self.dim, 0, 1))\n"
       "shifted = torch.cat((first, x.narrow(self.dim, 0, x.size(self.dim) - 1)), dim=self.dim)\n"
       "return torch.cumsum(shifted, dim=self.dim)", RED, **DIM),
    _f("masked_cumsum", 1, "return torch.cumsum(x * mask, dim=self.dim)",
       "return [torch.randn(4, 16, 12), torch.randint(0, 2, (4, 16, 12)).bool()]", args="x, mask", **DIM),
    # ---- level 1: losses
    _f("mse_loss", 1, "return torch.mean((predictions - targets) ** 2)", PAIR, args=PT),
    _f("cross_entropy", 1, "return F.cross_entropy(predictions, targets)",
       "return [torch.randn(32, 10), torch.randint(0, 10, (32,))]", args=PT),
    _f("smooth_l1_loss", 1, "return F.smooth_l1_loss(predictions, targets)", PAIR, args=PT),
    _f("cosine_similarity_loss", 1,
       "cosine_sim = F.cosine_similarity(predictions, targets, dim=1)\nreturn torch.mean(1 - cosine_sim)", PAIR,
       args=PT),
    _f("kl_div", 1, 'return F.kl_div(torch.log(predictions), targets, reduction="batchmean")',
       "return [torch.rand(16, 32).softmax(dim=-1), torch.rand(16, 32).softmax(dim=-1)]", args=PT),
    _f("triplet_margin_loss", 1, "return self.loss(anchor, positive, negative)",
       "return [torch.randn(16, 32), torch.randn(16, 32), torch.randn(16, 32)]", args="anchor, positive, negative",
       init="margin", init_values="[1.0]", layers="self.loss = nn.TripletMarginLoss(margin=margin)"),
    _f("hinge_loss", 1, "return torch.mean(torch.clamp(1 - predictions * targets, min=0))",
       "return [torch.randn(64), torch.randint(0, 2, (64,)).float() * 2 - 1]", args=PT),
    # ---- level 1: attention
    _f("scaled_dot_product_attention", 1, "return F.scaled_dot_product_attention(Q, K, V)",
       "return [torch.randn(2, 4, 16, 8), torch.randn(2, 4, 16, 8), torch.randn(2, 4, 16, 8)]", args="Q, K, V"),
    # ---- level 2: chains after a Gemm
    _f("gemm_scale_relu", 2, "return torch.relu(self.gemm(x) * self.scale)", "return [torch.randn(8, 32)]",
       init="in_features, out_features, scale", init_values="[32, 16, 0.5]",
       layers="self.gemm = nn.Linear(in_features, out_features)\nself.scale = scale", tags=TF32),
    _f("matmul_gelu_softmax", 2, "return torch.softmax(F.gelu(self.linear(x)), dim=1)", "return [torch.randn(8, 32)]",
       init="in_features, out_features", init_values="[32, 16]",
       layers="self.linear = nn.Linear(in_features, out_features)", tags=TF32),
    _f("gemm_batchnorm_gelu", 2, "return F.gelu(self.bn(self.gemm(x)))", "return [torch.randn(16, 32)]",
       init="in_features, out_features", init_values="[32, 16]",
       layers="self.gemm = nn.Linear(in_features, out_features)\nself.bn = nn.BatchNorm1d(out_features)", tags=TF32),
    _f("gemm_layernorm_logsumexp", 2,
       "return torch.logsumexp(self.norm(self.gemm(x)), dim=1, keepdim=True)", "return [torch.randn(8, 32)]",
       init="in_features, out_features", init_values="[32, 16]",
       layers="self.gemm = nn.Linear(in_features, out_features)\nself.norm = nn.LayerNorm(out_features)", tags=TF32),
    _f("gemm_groupnorm_swish", 2, "x = self.norm(self.gemm(x))\nreturn x * torch.sigmoid(x)",
       "return [torch.randn(8, 32)]", init="in_features, out_features, num_groups", init_values="[32, 16, 4]",
       layers="self.gemm = nn.Linear(in_features, out_features)\nself.norm = nn.GroupNorm(num_groups, out_features)",
       tags=TF32),
    # ---- level 3, reduced
    _f("mlp", 3, "return self.network(x)", "return [torch.randn(4, 32)]",
       init="input_size, layer_sizes, output_size", init_values="[32, [64, 32], 10]",
       layers="layers = []\nsize = input_size\nfor width in layer_sizes:\n"
              "    layers += [nn.Linear(size, width), nn.ReLU()]\n    size = width\n"
              "layers.append(nn.Linear(size, output_size))\nself.network = nn.Sequential(*layers)",
       tags=TF32),
    _f("lenet", 3,
       "x = F.max_pool2d(F.relu(self.conv1(x)), kernel_size=2, stride=2)\n"
       "x = F.max_pool2d(F.relu(self.conv2(x)), kernel_size=2, stride=2)\n"
       "x = x.view(x.size(0), -1)\nx = F.relu(self.fc1(x))\nreturn self.fc2(x)",
       "return [torch.randn(2, 1, 20, 20)]", init="num_classes", init_values="[10]",
       layers="self.conv1 = nn.Conv2d(1, 6, kernel_size=5)\nself.conv2 = nn.Conv2d(6, 16, kernel_size=5)\n"
              "self.fc1 = nn.Linear(16 * 2 * 2, 32)\nself.fc2 = nn.Linear(32, num_classes)",
       tags=TF32),
    _f("resnet_basic_block", 3,
       "out = self.relu(self.bn1(self.conv1(x)))\nout = self.bn2(self.conv2(out))\nreturn self.relu(out + x)",
       "return [torch.randn(2, 8, 8, 8)]", init="channels", init_values="[8]",
       layers="self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)\n"
              "self.bn1 = nn.BatchNorm2d(channels)\n"
              "self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)\n"
              "self.bn2 = nn.BatchNorm2d(channels)\nself.relu = nn.ReLU()"),
    _f("transformer_block", 3,
       "attended = self.attn(x, x, x, need_weights=False)[0]\nx = self.norm1(x + attended)\n"
       "return self.norm2(x + self.ff2(F.gelu(self.ff1(x))))",
       "return [torch.randn(2, 10, 32)]", init="embed_dim, num_heads, ff_dim", init_values="[32, 4, 64]",
       layers="self.attn = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)\n"
              "self.norm1 = nn.LayerNorm(embed_dim)\nself.ff1 = nn.Linear(embed_dim, ff_dim)\n"
              "self.ff2 = nn.Linear(ff_dim, embed_dim)\nself.norm2 = nn.LayerNorm(embed_dim)",
       eval_mode=True),
    _f("transformer_block_training", 3,
       "attended = self.attn(x, x, x, need_weights=False)[0]\nx = self.norm1(x + attended)\n"
       "return self.norm2(x + self.ff2(F.gelu(self.ff1(x))))",
       "return [torch.randn(2, 10, 32)]", init="embed_dim, num_heads, ff_dim", init_values="[32, 4, 64]",
       layers="self.attn = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)\n"
              "self.norm1 = nn.LayerNorm(embed_dim)\nself.ff1 = nn.Linear(embed_dim, ff_dim)\n"
              "self.ff2 = nn.Linear(ff_dim, embed_dim)\nself.norm2 = nn.LayerNorm(embed_dim)"),
    _f("lstm_last_step", 3, "out, _ = self.lstm(x)\nreturn self.fc(out[:, -1, :])", "return [torch.randn(2, 6, 8)]",
       init="input_size, hidden_size, output_size", init_values="[8, 16, 4]",
       layers="self.lstm = nn.LSTM(input_size, hidden_size, batch_first=True)\n"
              "self.fc = nn.Linear(hidden_size, output_size)"),
    _f("gru_hidden", 3, "_, h_n = self.gru(x)\nreturn h_n", "return [torch.randn(2, 6, 8)]",
       init="input_size, hidden_size, num_layers", init_values="[8, 16, 2]",
       layers="self.gru = nn.GRU(input_size, hidden_size, num_layers, batch_first=True)"),
]  # fmt: skip

BY_NAME = {f.name: f for f in FAMILIES}
assert len(BY_NAME) == len(FAMILIES), "family names repeat"


def load(family: Family, folder: pathlib.Path):
    """The family's module, imported from its file (tests/model_suite.py writes and imports it)."""
    return model_suite.load(family, folder, prefix="family")
