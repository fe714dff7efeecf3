"""Fit the piecewise polynomials behind fp_analysis.numerics.gelu32's erf and tanh, and write them as data.

    python experiments/fit_gelu_tables.py   # rewrites fp_analysis/data/gelu_tables.json

Each function is split into intervals of width 1/4 on [0, cutoff); on each, a degree-7 polynomial in
t = x − left end is fitted by least squares at 64 Chebyshev points against mpmath values (30 digits)
and its coefficients rounded to fp32. The table is data with provenance: it is computed here once and
committed, so CPU twins and CUDA kernels built anywhere use the same bits. tests/unit/test_gelu32.py checks
the accuracy of what this produces against mpmath.
"""

from __future__ import annotations

import json
import pathlib

import mpmath
import numpy as np

WIDTH = 0.25
DEGREE = 7
NODES = 64
CUTOFFS = {"erf": 4.0, "tanh": 9.5}  # beyond: fp32 erf and tanh round to 1.0 (checked in the tests)


def _fit(fn, left: float) -> list[float]:
    k = np.arange(NODES)
    t = (1 - np.cos((k + 0.5) * np.pi / NODES)) / 2 * WIDTH  # Chebyshev points mapped to [0, WIDTH]
    with mpmath.workdps(30):
        y = np.array([float(fn(mpmath.mpf(left) + mpmath.mpf(float(ti)))) for ti in t])
    if left == 0:
        # erf and tanh are odd: fit f(t)/t and shift, so the constant term is exactly 0 and tiny
        # arguments keep their relative accuracy (f(t) ≈ c1·t).
        coeffs = np.concatenate([[0.0], np.polynomial.polynomial.polyfit(t, y / t, DEGREE - 1)])
    else:
        coeffs = np.polynomial.polynomial.polyfit(t, y, DEGREE)
    return [float(np.float32(c)) for c in coeffs]


def main() -> None:
    tables = {}
    for name, fn in (("erf", mpmath.erf), ("tanh", mpmath.tanh)):
        intervals = int(CUTOFFS[name] / WIDTH)
        tables[name] = {
            "width": WIDTH,
            "cutoff": CUTOFFS[name],
            "coefficients": [[c.hex() for c in _fit(fn, i * WIDTH)] for i in range(intervals)],
        }
    out = pathlib.Path(__file__).resolve().parents[1] / "fp_analysis" / "numerics" / "data" / "gelu_tables.json"
    out.write_text(json.dumps(tables, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
