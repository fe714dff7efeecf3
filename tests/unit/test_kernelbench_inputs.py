"""KernelBench's inputs are drawn in a thread only where a thread sees the torch state the problem set (its
default device, its mode stacks); elsewhere they are drawn in turn.
"""

from __future__ import annotations


def test_inputs_are_drawn_in_a_thread_only_where_a_thread_sees_the_same_torch_state():
    """torch's default device and its mode stacks are per thread: where a problem set one, a thread would draw
    other inputs (on another device's generator), so they are drawn in turn."""
    import torch

    from fp_analysis.explain.kernelbench import _thread_draws_alike

    assert _thread_draws_alike()
    with torch.device("meta"):  # what torch.set_default_device does: a mode on the function stack
        assert not _thread_draws_alike()
    assert _thread_draws_alike()
