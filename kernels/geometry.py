"""The compile-time shapes the CUDA sources and their launchers share: tile sizes, pipeline stages, window
reach. Written into fpa_generated.cuh (``#define FPA_TILE_BM 128`` …) by ``fpa_kernels.build``, read by the
launchers from here, so a source and its launcher cannot disagree on a tile size.
"""

from __future__ import annotations

__all__ = ["GEOMETRY", "ROWS_BN", "ROWS_MAX_REACH", "TILE_BK", "TILE_BM", "TILE_BN", "WG_BN", "WG_PX", "WG_STAGES"]

# conv_tile.cuh (conv_tiled.cu, conv_mma_tiled.cu, conv_dmma_tiled.cu): a block owns TILE_BM output pixels ×
# TILE_BN output channels and walks K in chunks of TILE_BK terms, double-buffered.
TILE_BM, TILE_BN, TILE_BK, TILE_STAGES = 128, 64, 16, 2
# conv_rows.cu: output channels per block, and how far (inputs) a thread's register window reaches beyond its
# own pixels, (KW − 1)·DW; wider windows go to conv_tiled.cu.
ROWS_BN, ROWS_MAX_REACH = 64, 40
# conv_wgmma.cu: output pixels × channels per block, and the stages of input slabs (A) and tap weights (B).
WG_PX, WG_BN = 256, 64
WG_STAGES = (2, 4)

GEOMETRY: dict[str, int] = {
    "FPA_TILE_BM": TILE_BM,
    "FPA_TILE_BN": TILE_BN,
    "FPA_TILE_BK": TILE_BK,
    "FPA_TILE_STAGES": TILE_STAGES,
    "FPA_ROWS_BN": ROWS_BN,
    "FPA_ROWS_MAX_REACH": ROWS_MAX_REACH,
    "FPA_WG_PX": WG_PX,
    "FPA_WG_BN": WG_BN,
    "FPA_WG_A_STAGES": WG_STAGES[0],
    "FPA_WG_B_STAGES": WG_STAGES[1],
}
