"""Exact floating-point arithmetic on a CPU, the bottom layer: formats and rounding, emulated fp32 (add, mul, fma), GELU
in fp32, named accumulation orders, error bounds and error metrics, the TF32 switches of cuDNN/cuBLAS, and memory
estimates.

Imports only ``fp_analysis.errors`` (and numpy, torch, numba, mpmath): no op, no process, no file of the user's.
"""
