"""Exact fp32 arithmetic on numpy arrays: fused multiply-add, separately rounded multiply and add,
and the flush-to-zero that CUDA's fast-math mode applies.

Exactness comes from IEEE 754 itself rather than from an emulation trick: the kernels are compiled
with numba, and the fused multiply-add is LLVM's ``llvm.fma.f32`` intrinsic, whose semantics are the
IEEE 754-2019 §5.4.1 fusedMultiplyAdd — a·b+c computed exactly and rounded once, to nearest even
(LLVM Language Reference, "'llvm.fma.*' Intrinsic"). On a CPU with FMA instructions it is one
instruction; elsewhere LLVM calls libm's ``fmaf``, which is correctly rounded too. That is the same
operation as CUDA's ``fmaf`` / ``__fmaf_rn`` (CUDA Math API, "Single Precision Intrinsics").
Separately rounded ``a*b`` and ``a+b`` in float32 are IEEE basic operations (§5.4.1), which is what
``__fmul_rn`` / ``__fadd_rn`` and ``-fmad=false`` give on the GPU. Numba compiles without fast-math
flags, so LLVM never contracts a multiply and an add into an FMA behind our back.

The tests check every function bit for bit against exact rational arithmetic (``fractions``).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, vectorize
from numba.extending import intrinsic

from .fma_emulation import float32_operand

__all__ = ["add32", "fma32", "mul32"]

# Smallest normal fp32 (2^-126): below it, CUDA's -ftz=true flushes operands and results to ±0.
_FP32_TINY = np.float32(float.fromhex("0x1p-126"))


@intrinsic
def _llvm_fma(typingctx, a, b, c):
    """a·b+c with a single rounding: LLVM's llvm.fma intrinsic (IEEE 754 fusedMultiplyAdd)."""
    signature = a(a, b, c)

    def codegen(context, builder, sig, args):
        return builder.fma(*args)

    return signature, codegen


@njit(inline="always")
def ftz(v):
    """±0 (same sign) for a subnormal fp32 ``v``, else ``v``: the flush of CUDA's -ftz=true."""
    if abs(v) < _FP32_TINY:
        return v * np.float32(0.0)  # keeps the sign: a zero or subnormal times +0 is ±0
    return v


@njit(inline="always")
def fma_rn(a, b, c, flush):
    """fp32 fused multiply-add, rounded once to nearest even; with ``flush`` as CUDA's fmaf under -ftz."""
    if flush:
        return ftz(_llvm_fma(ftz(a), ftz(b), ftz(c)))
    return _llvm_fma(a, b, c)


@njit(inline="always")
def mul_rn(a, b, flush):
    """fp32 product, rounded to nearest even (``__fmul_rn``); with ``flush`` as under -ftz."""
    if flush:
        return ftz(ftz(a) * ftz(b))
    return a * b


@njit(inline="always")
def add_rn(a, b, flush):
    """fp32 sum, rounded to nearest even (``__fadd_rn``); with ``flush`` as under -ftz."""
    if flush:
        return ftz(ftz(a) + ftz(b))
    return a + b


# One module-level function per (operation, flush): numba's cache tells functions apart by qualified name and
# source line, so a closure made by a factory (one qualified name for all six) was compiled again in every process
# and its cache index grew by an entry each time (hundreds of files in __pycache__).
def _fma(a, b, c):
    return fma_rn(a, b, c, False)


def _fma_ftz(a, b, c):
    return fma_rn(a, b, c, True)


def _mul(a, b):
    return mul_rn(a, b, False)


def _mul_ftz(a, b):
    return mul_rn(a, b, True)


def _add(a, b):
    return add_rn(a, b, False)


def _add_ftz(a, b):
    return add_rn(a, b, True)


_ELEMENTWISE = {
    ("fma", False): _fma,
    ("fma", True): _fma_ftz,
    ("mul", False): _mul,
    ("mul", True): _mul_ftz,
    ("add", False): _add,
    ("add", True): _add_ftz,
}


@functools.cache
def _ufunc(name: str, flush: bool):
    """The numpy ufunc of ``_ELEMENTWISE[name, flush]`` on float32, compiled (or loaded from numba's cache) on
    first use, not at import: a process that never emulates arithmetic (the CLI, a worker whose user code fails)
    does not pay for it."""
    arity = 3 if name == "fma" else 2
    signature = "float32(" + ", ".join(["float32"] * arity) + ")"
    return vectorize([signature], cache=True)(_ELEMENTWISE[name, flush])


def fma32(a, b, c, *, ftz: bool = False) -> np.ndarray:
    """Return RNE(a·b + c) in fp32 with one rounding, elementwise with numpy broadcasting.

    Equals CUDA's ``fmaf(a, b, c)``; with ``ftz=True``, subnormal operands and results are flushed to
    zeros of the same sign, as ``fmaf`` compiled with ``-ftz=true`` (``--use_fast_math``) does.
    Result tininess is judged after rounding (IEEE 754-2019 §7.5 allows either; a result that rounds
    up to exactly 2^-126 is kept).
    """
    args = (float32_operand(a, "a"), float32_operand(b, "b"), float32_operand(c, "c"))
    with np.errstate(all="ignore"):  # overflow and NaN are IEEE results here, not accidents
        return _ufunc("fma", bool(ftz))(*args)


def mul32(a, b, *, ftz: bool = False) -> np.ndarray:
    """Return RNE(a·b) in fp32, elementwise (``__fmul_rn``; with ``ftz`` flushed as under -ftz=true)."""
    args = (float32_operand(a, "a"), float32_operand(b, "b"))
    with np.errstate(all="ignore"):
        return _ufunc("mul", bool(ftz))(*args)


def add32(a, b, *, ftz: bool = False) -> np.ndarray:
    """Return RNE(a + b) in fp32, elementwise (``__fadd_rn``; with ``ftz`` flushed as under -ftz=true)."""
    args = (float32_operand(a, "a"), float32_operand(b, "b"))
    with np.errstate(all="ignore"):
        return _ufunc("add", bool(ftz))(*args)
