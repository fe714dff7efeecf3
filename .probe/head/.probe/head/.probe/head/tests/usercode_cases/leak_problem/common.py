"""The problem's helper."""


def output_scale():
    return 1.0
