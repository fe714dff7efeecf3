"""Where solutions build their extensions: a folder of fpa's cache named by the solution's files — the same for a
triage's builder, its job, a later triage with other options and an explain; another for other files."""

from __future__ import annotations

from fp_analysis.run import candidate
from fp_analysis.run.snapshot import Given
from fp_analysis.triage.pool import pair_extensions

KERNEL = "from torch.utils.cpp_extension import load_inline\n# ModelNew would build {name} here\n"


def _pair(folder, name: str) -> Given:
    folder.mkdir()
    (folder / "problem.py").write_text("class Model: pass\n")
    (folder / "solution.py").write_text(KERNEL.format(name=name))
    return Given.take(folder / "problem.py", folder / "solution.py")


def test_the_same_files_build_in_one_folder_and_other_files_in_another(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first, again, other = _pair(tmp_path / "a", "k"), _pair(tmp_path / "b", "k"), _pair(tmp_path / "c", "k2")
    assert pair_extensions(first) == pair_extensions(again)  # read twice, from two folders: the same bytes
    assert pair_extensions(first) != pair_extensions(other)
    assert pair_extensions(first).startswith(str(tmp_path / "cache" / "fp_analysis" / "extensions"))


def test_an_explain_of_the_files_a_triage_built_finds_the_build(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("TORCH_EXTENSIONS_DIR", raising=False)
    given = _pair(tmp_path / "a", "k")
    chosen = candidate._private_folders(str(tmp_path / "tmp"), given.solution.encoded())
    assert chosen["TORCH_EXTENSIONS_DIR"] == pair_extensions(given)
