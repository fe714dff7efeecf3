"""ptxas's registers, spills and stack of each build a preset's probe rows time (experiments/tile_probe.py), without a
GPU: what a kernel change does to the register cap and the spills can be seen before a device run.

    python experiments/kernel_resources.py [--preset conv3d_kk1]

Each row: the kernel, the probe's extra defines, and ptxas's report (``-Xptxas -v``) for the build the probe would
time on the preset's conv (the variant's defines from ``fpa_kernels.variant_build``, the probe's over them).
"""

from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))

from fpa_kernels import KERNELS, variant_build  # noqa: E402
from fpa_kernels.build import SOURCE_DIR, find_nvcc, generated_header  # noqa: E402
from tile_probe import FP64, PRESET_PROBES  # noqa: E402

from fp_analysis.ops.presets import PRESETS  # noqa: E402


def resources(kernel: str, defines: dict[str, int], flags: list[str]) -> str:
    """ptxas's lines for the build of ``kernel`` with ``defines`` and ``flags``: registers, spills, stack."""
    chosen = KERNELS[kernel]
    with tempfile.TemporaryDirectory() as folder:
        (pathlib.Path(folder) / "fpa_generated.cuh").write_text(generated_header(chosen.source, tuple(chosen.reads)))
        command = [find_nvcc(), "-cubin", f"-arch={chosen.arch}", "-O3", "-std=c++17", "-Xptxas=-v", *flags,
                   *[f"-D{name}={value}" for name, value in defines.items()], f"-I{folder}", f"-I{SOURCE_DIR}",
                   "-o", f"{folder}/out.cubin", str(SOURCE_DIR / chosen.source)]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        return f"nvcc failed: {done.stderr.strip()[-300:]}"
    said = [line.split(":", 1)[-1].strip() for line in done.stderr.splitlines() if re.search("spill|registers", line)]
    return "; ".join(said)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", choices=sorted(PRESET_PROBES), default="conv3d_kk1")
    args = parser.parse_args()
    if find_nvcc() is None:
        sys.exit("no nvcc on this machine")
    preset = PRESETS[args.preset]
    for index, (variant, kernel, extra) in enumerate(PRESET_PROBES[args.preset]):
        if variant is FP64:
            defines, flags = dict(extra), []
        else:
            build = variant_build(variant, preset.spec, kernel, tuple(preset.input_shape))
            defines, flags = {**dict(build.defines), **extra}, list(build.flags)
        print(f"{index:2d} {kernel} {extra or ''}: {resources(kernel, defines, flags)}")


if __name__ == "__main__":
    main()
