"""Where a candidate departs: the outputs beyond the floor, counted per batch item and channel, edges and regions."""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["locate"]


_DIM_NAMES = {3: ("positions",), 4: ("rows", "columns"), 5: ("depth slices", "rows", "columns")}


def locate(bad: torch.Tensor, nonfinite: torch.Tensor, shape: tuple[int, ...]) -> dict:
    """Where the outputs in ``bad`` lie, over every output, with counts that add up: the channels and batch
    items that hold all of them (each with how many of its outputs are bad), edges, a region; ``summary`` in
    words. Dim 0 is the batch, dim 1 the channels (for outputs of 2 or more dims)."""
    bad_np = bad.cpu().numpy().reshape(shape)
    count, total = int(bad_np.sum()), int(bad_np.size)
    nonfinite_count = int(nonfinite.sum())
    parts = [
        f"{count} of {total} outputs beyond the floor"
        + (f" ({nonfinite_count} of them NaN or ±inf)" if nonfinite_count else "")
    ]
    record: dict = {"bad": count, "outputs": total, "nonfinite": nonfinite_count}
    if not count:
        record["summary"] = parts[0]
        return record
    where = np.argwhere(bad_np)
    axes = [(0, "batch item"), (1, "channel")] if len(shape) >= 2 else []
    for axis, name in sorted(axes, key=lambda a: -a[0]):
        values, counts = np.unique(where[:, axis], return_counts=True)
        per = total // shape[axis]
        if shape[axis] > 1 and len(values) <= max(1, shape[axis] // 4):
            each = [f"{name} {v}: {c} of its {per}" for v, c in zip(values.tolist(), counts.tolist(), strict=True)]
            shown = ", ".join(each[:8]) + (f", and {len(each) - 8} more" if len(each) > 8 else "")
            parts.append(
                f"all in {len(values)} {name}{'s' if len(values) > 1 else ''} of 0…{shape[axis] - 1} ({shown})"
            )
            record[f"{name.replace(' ', '_')}s"] = dict(zip(values.tolist(), counts.tolist(), strict=True))
    for d, axis in enumerate(_DIM_NAMES.get(len(shape), ())):
        extent = shape[2 + d]
        lo, hi = int(where[:, 2 + d].min()), int(where[:, 2 + d].max())
        if extent > 2 and hi == extent - 1 and lo > 0 and lo >= extent // 2:
            parts.append(f"all in the last {extent - lo} {axis} (index ≥ {lo} of 0…{extent - 1})")
        elif extent > 2 and lo == 0 and hi < extent - 1 and hi < extent // 2:
            parts.append(f"all in the first {hi + 1} {axis} (index ≤ {hi} of 0…{extent - 1})")
        elif extent > 2 and hi < extent - 1 and lo > 0:
            parts.append(f"{axis} {lo}…{hi} only, of 0…{extent - 1}")
    record["summary"] = "; ".join(parts)
    return record
