"""Where solutions build their extensions: a folder of fpa's cache named by the solution's files — the same for a
triage's builder, its job, a later triage with other options and an explain; another for other files; all of them
in the folder ``--build-cache`` names where a triage is given one."""

from __future__ import annotations

import pathlib

import pytest

from fp_analysis.errors import ParameterError
from fp_analysis.options import ExplainOptions
from fp_analysis.run import places
from fp_analysis.run.snapshot import Given
from fp_analysis.triage.pool import Pool, pair_extensions, placed

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
    chosen = places.solution_folders(str(tmp_path / "tmp"), given.solution.encoded(), given.solution.name)
    assert chosen["TORCH_EXTENSIONS_DIR"] == pair_extensions(given)


def test_a_build_cache_moves_every_solutions_build_there_for_the_triage(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("FPA_EXTENSIONS_CACHE", raising=False)
    given, shared = _pair(tmp_path / "a", "k"), tmp_path / "shared"
    default = pair_extensions(given)
    with placed(Pool(workers=1, build_cache=str(shared)), ExplainOptions(device="cpu")):
        assert pair_extensions(given) == str(shared / pathlib.Path(default).name)  # same key, the shared folder
    assert pair_extensions(given) == default  # the triage's block over: this machine's cache again


@pytest.mark.parametrize(
    ("folder", "words"),
    [("relative/builds", "absolute path"), ("", "absolute path"), ("{file}/builds", "cannot be made")],
)
def test_a_build_cache_that_is_not_an_absolute_folder_we_can_make_is_refused(tmp_path, folder, words):
    (tmp_path / "file").write_text("")
    with pytest.raises(ParameterError, match="--build-cache") as error:
        Pool(build_cache=folder.format(file=tmp_path / "file"))
    assert words in str(error.value)


def test_two_solutions_side_by_side_in_one_folder_build_apart(tmp_path, monkeypatch):
    """Both snapshots hold both files (a solution may import its siblings): which file is the solution is part of
    the key, or one could plant a build the other loads."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = tmp_path / "side_by_side"
    folder.mkdir()
    (folder / "problem.py").write_text("class Model: pass\n")
    for name in ("first.py", "second.py"):
        (folder / name).write_text(KERNEL.format(name="same_name"))
    first, second = (Given.take(folder / "problem.py", folder / name) for name in ("first.py", "second.py"))
    assert first.solution.encoded() == second.solution.encoded()
    assert pair_extensions(first) != pair_extensions(second)


def test_a_job_folder_is_removed_whatever_depth_the_users_code_nested_in_it(tmp_path):
    """A solution nested 3000 folders in its temporary one (inside the job's folder): Python's rmtree recursed past
    its limit, the job's cleanup raised RecursionError and the verdict was lost (exit 4)."""
    import os

    from fp_analysis.run.places import remove_folder

    job = tmp_path / "fpa-worker-x"
    deepest = job / "solution-tmp-y"
    deepest.mkdir(parents=True)
    fd = os.open(deepest, os.O_RDONLY)
    try:
        for _ in range(3000):  # by descriptor: the path itself grows past PATH_MAX
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("file", os.O_CREAT | os.O_WRONLY, dir_fd=fd))
    finally:
        os.close(fd)
    remove_folder(job)
    assert not job.exists()
