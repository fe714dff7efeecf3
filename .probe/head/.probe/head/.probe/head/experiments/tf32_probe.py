"""Which arithmetic cuDNN's TF32 convolutions use, shape by shape: distance from emulations in units of σ.

For each convolution of the device cases, on the GPU with TF32 allowed (PyTorch's default for convolutions):
the kernels cuDNN launched (profiler names), and max |y − e| / σ over all outputs for the emulations e = the
exact sum of products of operands rounded to TF32 to nearest with ties to even ("rne") or away from zero
("rna", as PTX's cvt.rna.tf32.f32), or by dropping the low 13 bits ("rz", what a tensor core does when handed
fp32 bits), and of the fp64 result itself; σ = 2^-24 Σ|w·x|
(fp32's unit for a dot product, the engine's unit on a single conv). Also how many outputs lie past 60 units.

    python experiments/tf32_probe.py OUT COMMIT     (writes OUT/tf32_probe_<gpu>.json)
"""

from __future__ import annotations

import json
import sys

import torch
import torch.nn.functional as F
from device_results import write_results

from fp_analysis.numerics.backends import tf32
from fp_analysis.numerics.rounding import round_to

SHAPES = [
    # name, input shape, out channels, kernel, padding, conv dims
    ("mish case 3x3 pad 1", (8, 32, 64, 64), 64, 3, 1),
    ("groupnorm case 3x3", (8, 32, 48, 48), 64, 3, 0),
    ("engine test 3x3", (2, 32, 32, 32), 64, 3, 0),
    ("seed 000 item (5,9) dilated", (1, 32, 512, 512), 64, (5, 9), (2, 4)),
    ("clamp case 3x3x3", (4, 32, 16, 24, 24), 32, 3, 0),
    ("1x1", (8, 64, 64, 64), 64, 1, 0),
    ("5x5 pad 2", (8, 32, 64, 64), 64, 5, 2),
]


def main(out: str, commit: str) -> None:
    torch.manual_seed(0)
    results = []
    for name, shape, k, kernel, padding in SHAPES:
        dims = len(shape) - 2
        conv = F.conv2d if dims == 2 else F.conv3d
        x = torch.rand(shape, device="cuda")
        kernel = kernel if isinstance(kernel, tuple) else (kernel,) * dims
        fan_in = shape[1] * int(torch.tensor(kernel).prod())
        w = (torch.rand(k, shape[1], *kernel, device="cuda") * 2 - 1) / fan_in**0.5
        extra = {"dilation": (2, 3)} if "dilated" in name else {}
        with tf32(conv=True), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            y = conv(x, w, padding=padding, **extra)
            torch.cuda.synchronize()
        kernels = sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})
        with tf32(conv=False):
            plain = conv(x, w, padding=padding, **extra)
        y64 = conv(x.double(), w.double(), padding=padding, **extra)
        sigma = 2.0**-24 * conv(x.double().abs(), w.double().abs(), padding=padding, **extra)
        emulations = {"fp64": y64}
        for rounding in ("rne", "rna", "rz"):
            xr, wr = round_to(x, "tf32", rounding), round_to(w, "tf32", rounding)
            emulations[rounding] = conv(xr.double(), wr.double(), padding=padding, **extra)
        row = {"case": name, "kernels": kernels, "tf32_differs_from_plain": not torch.equal(y, plain),
               "K": fan_in, "outputs": y.numel()}  # fmt: skip
        for label, e in emulations.items():
            units = ((y.double() - e).abs() / sigma).nan_to_num(0.0)
            row[f"max_units_vs_{label}"] = float(units.max())
            row[f"beyond_60_vs_{label}"] = int((units > 60).sum())
        plain_units = ((plain.double() - y64).abs() / sigma).nan_to_num(0.0)
        row["plain_max_units_vs_fp64"] = float(plain_units.max())
        print(json.dumps(row), flush=True)
        results.append(row)
    write_results(out, "tf32_probe", commit, {"cases": results})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
