"""The solution's helper, a different one of the same name."""


def output_scale():
    return 2.0
