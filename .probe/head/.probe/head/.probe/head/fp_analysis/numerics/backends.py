"""cuDNN's and cuBLAS's TF32 switches, set for a block and put back after it: the one place fp_analysis flips them.

PyTorch has two ways to say whether fp32 convolutions and matrix products may run in TF32 on tensor cores:
the legacy flags ``torch.backends.cudnn.allow_tf32`` (True by default) and
``torch.backends.cuda.matmul.allow_tf32`` (False by default), and, since 2.9, ``fp32_precision`` ("ieee" or
"tf32") on ``torch.backends.cudnn.conv`` and ``torch.backends.cuda.matmul``. Reading a legacy flag raises
once the two APIs have been mixed (conv and RNN then disagree), so ``tf32`` uses the legacy flags while they
can be read — setting one keeps conv and RNN in step, so neither API's readers are broken — and the new API
only where the process already mixed them.
"""

from __future__ import annotations

import contextlib

import torch

__all__ = ["tf32", "tf32_settings", "versions"]


def _knobs():
    """(name, getter, setter) of each switch: the legacy flags while they can be read (setting them keeps conv
    and RNN consistent, so every later reader of either API sees the truth), the new API once they cannot."""
    conv, matmul = torch.backends.cudnn, torch.backends.cuda.matmul
    try:
        conv.allow_tf32, matmul.allow_tf32  # noqa: B018 - the read is the test
        return (
            ("conv", lambda: conv.allow_tf32, lambda on: setattr(conv, "allow_tf32", on)),
            ("matmul", lambda: matmul.allow_tf32, lambda on: setattr(matmul, "allow_tf32", on)),
        )
    except RuntimeError:
        return (
            ("conv", lambda: conv.conv.fp32_precision == "tf32",
             lambda on: setattr(conv.conv, "fp32_precision", "tf32" if on else "ieee")),
            ("matmul", lambda: matmul.fp32_precision == "tf32",
             lambda on: setattr(matmul, "fp32_precision", "tf32" if on else "ieee")),
        )  # fmt: skip


def tf32_settings() -> dict[str, bool]:
    """Whether fp32 convolutions ("conv") and matrix products ("matmul") may run in TF32 now."""
    settings = {}
    for name, get, _ in _knobs():
        try:
            settings[name] = bool(get())
        except RuntimeError:  # the two APIs mixed: the legacy read refuses
            settings[name] = None
    return settings


@contextlib.contextmanager
def tf32(conv: bool | None = None, matmul: bool | None = None):
    """Within the block, fp32 convolutions (``conv``) and matrix products (``matmul``) may run in TF32 or not
    (None: as they are); the settings before it are restored after it, an exception included."""
    saved = tf32_settings()
    wanted = {"conv": conv, "matmul": matmul}
    try:
        for name, _, set_ in _knobs():
            if wanted[name] is not None:
                set_(wanted[name])
        yield
    finally:
        for name, _, set_ in _knobs():
            if saved[name] is not None:
                set_(saved[name])


def versions() -> dict:
    """torch's CUDA and cuDNN versions (None where this build has none), as the results store records them."""
    cudnn = None
    with contextlib.suppress(Exception):
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {"torch_cuda_version": torch.version.cuda, "cudnn_version": cudnn}
