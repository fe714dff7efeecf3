"""Peak memory and time of each compile unit of a `load_inline` extension, as `fpa triage`'s builders run them.

A KernelBench solution's extension is two units, its C++ bindings (`main.cpp`: torch/extension.h and pybind11) and
its `.cu` file (torch/extension.h, the kernel, the launcher), which torch's ninja build compiles at once; the
triage's builders are sized by cores and by memory at an allowance per builder (`triage.builds.BUILDER_BYTES`). This
builds a typical solution (an elementwise kernel and a launcher over torch tensors, the shape of most KernelBench
solutions) with MAX_JOBS=1, each compiler run under `/usr/bin/time`, and prints each unit's peak resident memory
(the largest process of the unit: nvcc runs its stages one after another) and seconds, with the allowance beside
them. The link step needs torch's CUDA libraries: on a machine whose torch is the CPU build it fails after both
units are measured, which is all this reads.

With ``--precompiled``, each repeat is built again with the triage builders' precompiled torch/extension.h
(``fp_analysis.triage.headers``, made first where fpa's cache does not hold it): the C++ unit's seconds and peak
with it, and whether its object file is the same bytes as without it.

    python experiments/bench_build_memory.py [--repeats 2] [--cuda-home /usr/local/cuda] [--precompiled]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

_CUDA = textwrap.dedent(r"""
    #include <torch/extension.h>
    #include <cuda_runtime.h>

    __global__ void scaled_gelu(const float* x, float* y, float scale, long long n) {
      long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
      if (i < n) { float v = x[i] * scale; y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f)); }
    }

    torch::Tensor scaled_gelu_cuda(torch::Tensor x, double scale) {
      TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "x must be a CUDA float32 tensor");
      auto input = x.contiguous();
      auto out = torch::empty_like(input);
      long long n = input.numel();
      scaled_gelu<<<(unsigned)((n + 255) / 256), 256>>>(input.data_ptr<float>(), out.data_ptr<float>(),
                                                       (float)scale, n);
      return out;
    }
    """)
_CPP = "torch::Tensor scaled_gelu_cuda(torch::Tensor x, double scale);"
_WRAPPER = '#!/bin/sh\nexec /usr/bin/time -f "{label} %M %e" -a -o {log} {compiler} "$@"\n'


def _wrapped_toolchain(folder: pathlib.Path, cuda_home: pathlib.Path, log: pathlib.Path, cxx: str) -> pathlib.Path:
    """A CUDA_HOME whose nvcc, and a C++ compiler, that run the real ones (``cxx``: the one torch's builds run, as
    $CXX named it before the wrapper took its place) under /usr/bin/time, appending to ``log``."""
    home = folder / "cuda"
    (home / "bin").mkdir(parents=True)
    (home / "include").symlink_to(cuda_home / "include")
    for name, label, compiler in (("bin/nvcc", "cu", cuda_home / "bin" / "nvcc"), ("cxx", "cpp", cxx)):
        path = home / name
        path.write_text(_WRAPPER.format(label=label, log=log, compiler=compiler))
        path.chmod(0o755)
    return home


def measure(cuda_home: pathlib.Path, repeats: int, cxx: str, header: str | None = None) -> list[dict]:
    """Build the typical extension ``repeats`` times from an empty folder; each compile unit's peak and seconds, and
    the C++ unit's object file's SHA-256. ``cxx``: the C++ compiler torch's builds run (read before the wrapper
    takes $CXX's place: a GPU host may set $CXX to a GCC of its own, and GCC passes over a precompiled header another
    GCC made). ``header``: the folder of a precompiled torch/extension.h, named in CPATH as the triage's builders
    do."""
    import torch.utils.cpp_extension as extension

    rows = []
    os.environ.pop("CPATH", None)
    if header:
        os.environ["CPATH"] = header
    for repeat in range(repeats):
        # one folder for every build: its path is written in the object file, which is compared between builds
        folder = pathlib.Path(tempfile.gettempdir()) / "fpa-build-memory"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        try:
            log = folder / "units.log"
            home = _wrapped_toolchain(folder, cuda_home, log, cxx)
            extension.CUDA_HOME = str(home)  # the CPU build of torch sets none; the wrapper's is the one to use
            os.environ.update(CXX=str(home / "cxx"), MAX_JOBS="1", TORCH_EXTENSIONS_DIR=str(folder / "ext"))
            os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")  # the H200's; with no GPU torch cannot ask one
            extension.JIT_EXTENSION_VERSIONER.entries.clear()  # else torch skips a name it built in this process
            try:
                extension.load_inline("fpa_build_memory", _CPP, cuda_sources=_CUDA,
                                      functions=["scaled_gelu_cuda"], extra_cuda_cflags=["-O3"])  # fmt: skip
                linked = True
            except (RuntimeError, OSError, ImportError, subprocess.CalledProcessError):
                linked = False  # the CPU build of torch has no CUDA libraries to link: both units are measured
            objects = folder / "ext" / "fpa_build_memory" / "main.o"
            digest = hashlib.sha256(objects.read_bytes()).hexdigest() if objects.is_file() else None
            for line in log.read_text().splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[0] in ("cpp", "cu"):
                    rows.append({"repeat": repeat, "unit": parts[0], "peak_bytes": int(parts[1]) * 1024,
                                 "seconds": float(parts[2]), "linked": linked, "precompiled": bool(header),
                                 "main_o_sha256": digest})  # fmt: skip
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cuda-home", default=os.environ.get("CUDA_HOME") or "/usr/local/cuda")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--precompiled", action="store_true", help="also build with the precompiled header")
    args = parser.parse_args()
    cuda_home = pathlib.Path(args.cuda_home)
    from torch.utils.cpp_extension import get_cxx_compiler

    from fp_analysis.triage.builds import BUILD_JOBS, BUILDER_BYTES

    cxx, folder = get_cxx_compiler(), None
    if not (cuda_home / "bin" / "nvcc").exists() or shutil.which(cxx) is None:
        sys.exit(f"needs nvcc under --cuda-home ({cuda_home}) and the C++ compiler torch builds with ({cxx})")
    print(f"C++ compiler: {cxx}")
    if args.precompiled:  # made first: the builds below set CXX to a wrapper
        from fp_analysis.triage.headers import _made

        folder, state = _made(lambda compiler: True)  # nothing to stop it early here
        if folder is None:
            sys.exit(f"the precompiled header was {state}")
    rows = measure(cuda_home, args.repeats, cxx)
    if folder:
        rows += measure(cuda_home, args.repeats, cxx, folder)
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    # torch probes the compiler (c++ -v: a few MB) before the build, and links (c++) after the .cu unit
    units = [r for r in rows if r["peak_bytes"] > 64 * 1024**2]
    for r in units:
        after_cu = any(o["unit"] == "cu" and o["repeat"] == r["repeat"] and o["precompiled"] == r["precompiled"]
                       for o in units[: units.index(r)])  # fmt: skip
        r["unit"] = "link" if r["unit"] == "cpp" and after_cu else r["unit"]
        mode = "precompiled header" if r["precompiled"] else "parsed header"
        print(f"repeat {r['repeat']}  {r['unit']:>4}  peak {r['peak_bytes'] / 1024**3:.2f} GiB  {r['seconds']:.1f} s  "
              f"({mode})")  # fmt: skip
    both = max((sum(r["peak_bytes"] for r in units if (r["repeat"], r["precompiled"]) == k and r["unit"] != "link")
                for k in {(r["repeat"], r["precompiled"]) for r in units}), default=0)  # fmt: skip
    print(
        f"both units at once (MAX_JOBS={BUILD_JOBS}): {both / 1024**3:.2f} GiB; the builders' allowance "
        f"{BUILDER_BYTES / 1024**3:.1f} GiB each"
    )
    if args.precompiled:
        digests = {r["precompiled"]: {o["main_o_sha256"] for o in rows if o["precompiled"] == r["precompiled"]}
                   for r in rows}  # fmt: skip
        same = digests.get(True) == digests.get(False) and len(digests.get(False, ())) == 1
        print(f"main.o with the precompiled header the same bytes as without: {same} {digests}")


if __name__ == "__main__":
    main()
