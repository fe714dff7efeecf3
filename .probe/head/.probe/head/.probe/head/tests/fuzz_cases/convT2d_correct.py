"""Correct: the transposed conv as a direct conv over the zero-spread input (another order of the same terms)."""

from _transposed import DirectTransposed


class ModelNew(DirectTransposed):
    pass
