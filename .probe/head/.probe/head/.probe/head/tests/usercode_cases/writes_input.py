"""Right for problem_writes_input.py (the conv of twice the input), computed by doubling its input in place and
then zeroing it."""

from _conv import Conv


class ModelNew(Conv):
    def forward(self, x):
        x.mul_(2.0)
        out = super().forward(x)
        x.zero_()
        return out
