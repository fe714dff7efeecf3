"""A small conv of each op, every build of the variant matrix on them, and a check that builds compile."""

from __future__ import annotations

from fpa_kernels import Op, build_all, kernels_for, variant_build, variant_matrix

from fp_analysis.ops.conv import conv2d_spec, conv3d_kk1_spec

# A small conv of each op that every kernel of the op takes (conv_rows: stride 1 along W; conv_wgmma: one group;
# conv_lanes: K ≤ 32 terms per output).
SMALL = {
    Op.CONV2D: (conv2d_spec(3, 4, 3, padding=1), (1, 3, 9, 9)),
    Op.CONV_GELU: (conv2d_spec(3, 4, 3, padding=1), (1, 3, 9, 9)),
    Op.CONV3D_KK1: (conv3d_kk1_spec(3, 4, (3, 3, 1), padding=(1, 1, 0)), (1, 3, 9, 9, 3)),
}


def every_build() -> list:
    """Every build a variant of the matrix needs, on every kernel that takes it, on the small convs."""
    return [
        variant_build(variant, spec, kernel.name, shape)
        for op, (spec, shape) in SMALL.items()
        for variant in variant_matrix(op)
        for kernel in kernels_for(variant, spec, shape)
    ]


def compile_and_check(tmp_path, monkeypatch, builds: list) -> None:
    """Compile ``builds`` into a kernel cache under ``tmp_path``: one cubin (an ELF image) per distinct build."""
    monkeypatch.setenv("FPA_KERNEL_CACHE", str(tmp_path))
    paths = build_all(builds)
    assert len(paths) == len(set(builds))
    for path in set(paths.values()):
        assert path.stat().st_size > 1000 and path.read_bytes()[:4] == b"\x7fELF"  # a cubin is an ELF image
