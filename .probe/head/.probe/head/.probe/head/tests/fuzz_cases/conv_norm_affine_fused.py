"""Correct up to arithmetic: GroupNorm by hand and its affine folded into the scale and bias (another order)."""

from _norm_affine import NormAffine


class ModelNew(NormAffine):
    pass
