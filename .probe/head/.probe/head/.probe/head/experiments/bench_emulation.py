"""Emulated fp32 throughput of the sequential order against numpy float64 einsum, on the same terms.

    python experiments/bench_emulation.py [--samples 2000] [--repeats 15]

Both sides sum the K gathered terms of the same sampled outputs of the dilated seed preset:
``accumulate`` with the sequential fused order (exact fp32 FMA chain, one rounding per term) and
``np.einsum('mk,mk->m')`` on float64 copies made beforehand (the copies are not timed, which favours
einsum). Figures are medians of ``--repeats`` runs after one warm-up, measured in one process, so the
ratio compares like with like on whatever machine runs it. Target: ratio ≥ 0.25.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from fp_analysis.numerics.orders import AccumulationSpec, accumulate
from fp_analysis.study.order_table import preset_terms


def _median_seconds(fn, repeats: int) -> float:
    fn()  # warm-up: numba's cache load, numpy's buffers
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()

    _, terms = preset_terms("dilated_conv2d", args.samples)
    w64, x64 = terms.w.astype(np.float64), terms.x.astype(np.float64)
    spec = AccumulationSpec()
    emulated = _median_seconds(lambda: accumulate(terms.w, terms.x, spec), args.repeats)
    einsum = _median_seconds(lambda: np.einsum("mk,mk->m", w64, x64), args.repeats)
    macs = terms.M * terms.K
    print(f"terms: {terms.M} outputs × K = {terms.K} ({macs / 1e6:.2f} M multiply-adds), median of {args.repeats}")
    print(f"emulated fp32 sequential ({spec.label}): {emulated * 1e3:8.2f} ms  {macs / emulated / 1e9:6.3f} GMAC/s")
    print(f"numpy float64 einsum:                    {einsum * 1e3:8.2f} ms  {macs / einsum / 1e9:6.3f} GMAC/s")
    print(f"ratio (emulated rate / einsum rate): {einsum / emulated:.2f}  (target >= 0.25)")


if __name__ == "__main__":
    main()
