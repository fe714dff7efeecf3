"""Bug: the added bias parameter is read one channel off (channel c gets channel c−1's, the first the last's)."""

from _norm_affine import NormAffine


class ModelNew(NormAffine):
    def bias_used(self):
        return self.bias.roll(1, dims=0)
