"""Where a candidate departs: the outputs beyond the floor, counted per batch item and channel, edges and regions."""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["dim_names", "locate"]


_SPATIAL_NAMES = {3: ("position",), 4: ("row", "column"), 5: ("depth slice", "row", "column")}


def dim_names(rank: int) -> list[str]:
    """What each dim of an output of ``rank`` dims is called: the batch item, then a feature (2-d) or a channel,
    then the spatial dims."""
    if rank == 1:
        return ["element"]
    if rank == 2:
        return ["batch item", "feature"]
    return ["batch item", "channel", *_SPATIAL_NAMES.get(rank, tuple(f"index of dim {d}" for d in range(2, rank)))]


def locate(bad: torch.Tensor, nonfinite: torch.Tensor, shape: tuple[int, ...], how: str = "beyond the floor") -> dict:
    """Where the outputs in ``bad`` lie, over every output, with counts that add up: the channels and batch
    items that hold all of them (each with how many of its outputs are bad), edges, a region; ``summary`` in
    words, ``how`` saying what made an output bad. Dims are named by ``dim_names``."""
    bad_np = bad.cpu().numpy().reshape(shape)
    count, total = int(bad_np.sum()), int(bad_np.size)
    nonfinite_count = int(nonfinite.sum())
    parts = [
        f"{count} of {total} outputs {how}" + (f" ({nonfinite_count} of them NaN or ±inf)" if nonfinite_count else "")
    ]
    record: dict = {"bad": count, "outputs": total, "nonfinite": nonfinite_count}
    if not count:
        record["summary"] = parts[0]
        return record
    where = np.argwhere(bad_np)
    axes = list(enumerate(dim_names(len(shape))[:2])) if len(shape) >= 2 else []
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
    bands = []
    for d, axis in enumerate(f"{name}s" for name in _SPATIAL_NAMES.get(len(shape), ())):
        extent = shape[2 + d]
        lo, hi = int(where[:, 2 + d].min()), int(where[:, 2 + d].max())
        if extent > 2 and hi == extent - 1 and lo > 0 and lo >= extent // 2:
            bands.append(f"all in the last {extent - lo} {axis} (index ≥ {lo} of 0…{extent - 1})")
        elif extent > 2 and lo == 0 and hi < extent - 1 and hi < extent // 2:
            bands.append(f"all in the first {hi + 1} {axis} (index ≤ {hi} of 0…{extent - 1})")
        elif extent > 2 and hi < extent - 1 and lo > 0:
            bands.append(f"{axis} {lo}…{hi} only, of 0…{extent - 1}")
    edges = None if bands else _on_edges(where, shape)
    parts += bands if edges is None else [edges]
    if edges is not None:
        record["edges"] = True
    record["summary"] = "; ".join(parts)
    return record


def _on_edges(where: np.ndarray, shape: tuple[int, ...]) -> str | None:
    """Words for bad outputs that all lie in a band along the spatial borders and touch more than one of them (a
    padding or boundary bug: all four edges, or the first and last rows), else None. The band is as deep as the
    deepest bad output and at most a quarter of the smallest spatial extent."""
    names = [f"{name}s" for name in _SPATIAL_NAMES.get(len(shape), ())]
    if not names or min(shape[2:]) < 4:
        return None
    spatial = where[:, 2:]
    extents = np.array(shape[2:])
    depth = np.minimum(spatial, extents - 1 - spatial).min(axis=1)  # each bad output's distance to its nearest border
    band = int(depth.max()) + 1
    if band > min(shape[2:]) // 4:
        return None
    touched = []
    for d, axis in enumerate(names):
        others = [e for e in range(len(names)) if e != d]
        for end, at in (("first", spatial[:, d] < band), ("last", spatial[:, d] >= extents[d] - band)):
            # a side is touched where its band holds bad outputs along it, not only a corner of another side's
            along = not others or any(len(np.unique(spatial[at, e])) > band for e in others)
            if at.any() and along:
                touched.append(f"{end} {axis}")
    if len(touched) < 2:
        return None
    deep = "the outermost output" if band == 1 else f"the {band} outermost outputs"
    return f"all on the edges: within {deep} of the borders ({', '.join(touched)})"
