"""A candidate for problem_relu.py (taking its constructor) that forgets the ReLU."""

from _conv import Conv


class ModelNew(Conv):
    pass
