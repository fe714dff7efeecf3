"""Building ahead (``triage.builds``): which of a build's failures stand as the pair's verdict; and on a Ray cluster
(``triage.ray``), which nodes build, how many builds each runs at once, and the architectures a build task, which
sees no GPU, builds for. The builds themselves run in tests/process/test_triage.py (``--ray local``)."""

from __future__ import annotations

import subprocess

import pytest

from fp_analysis.errors import Fate, InternalError, UserCodeError
from fp_analysis.run.extension_store import arch_list
from fp_analysis.triage import builds
from fp_analysis.triage import ray as triage_ray
from fp_analysis.triage.builds import BUILD_CORES, BUILDER_BYTES

GIB = 1024**3


class _Cluster:
    """What ``_build_nodes`` reads of Ray: ``nodes()``, as Ray gives it."""

    def __init__(self, *nodes):
        self._nodes = [{"NodeID": f"node{i}", "Alive": alive, "Resources": resources}
                       for i, (alive, resources) in enumerate(nodes)]  # fmt: skip

    def nodes(self):
        return self._nodes


def test_a_gpu_triage_builds_on_the_gpu_nodes_in_the_cpus_their_explains_leave_and_within_their_memory():
    cluster = _Cluster(
        (True, {"CPU": 16.0, "GPU": 1.0, "memory": 128.0 * GIB}),  # the H200 host: 15 CPUs left, 12 builds
        (True, {"CPU": 64.0}),  # no GPU: explains nothing, so builds nothing (its build would be on the wrong node)
        (False, {"CPU": 16.0, "GPU": 1.0}),  # dead
        (True, {"CPU": 32.0, "GPU": 4.0, "memory": 12.0 * GIB}),  # memory for two builders only
        (True, {"CPU": 1.0, "GPU": 1.0}),  # no room for a build at all: its builds would go elsewhere, or wait
    )
    assert triage_ray._build_nodes(cluster, "cuda") == [
        ("node0", 1, int(15 / BUILD_CORES)),
        ("node3", 4, int(12 * GIB // BUILDER_BYTES)),
    ]


def test_a_cpu_triage_keeps_half_of_each_nodes_cpus_for_its_explains_and_builds_one_at_a_time_at_least():
    cluster = _Cluster((True, {"CPU": 2.0}), (True, {"CPU": 40.0}), (True, {"CPU": 1.0}))
    assert triage_ray._build_nodes(cluster, "cpu") == [("node0", 1, 1), ("node1", 20, int(20 / BUILD_CORES))]


def test_the_arch_list_is_torchs_default_for_the_gpus_seen():
    """Each once, sorted as text as torch sorts them (10.0 before 9.0), each lowered to the highest architecture torch
    was built for, PTX with the last."""
    assert arch_list([(9, 0), (8, 0), (9, 0)], []) == "8.0;9.0+PTX"
    assert arch_list([(10, 0), (9, 0)], []) == "10.0;9.0+PTX"
    assert arch_list([(12, 0), (9, 0)], ["sm_80", "sm_90", "compute_90"]) == "9.0+PTX"
    assert arch_list([(10, 3)], ["sm_90", "sm_100a"]) == "10.0+PTX"


@pytest.mark.parametrize(
    ("listed", "expected"),
    [("9.0\n9.0\n", {"TORCH_CUDA_ARCH_LIST": "9.0+PTX"}), ("8.6\n9.0\n", {"TORCH_CUDA_ARCH_LIST": "8.6;9.0+PTX"}),
     ("", {}), ("[N/A]\n", {})],
)  # fmt: skip
def test_a_build_task_builds_for_the_gpus_nvidia_smi_lists_on_its_node(listed, expected, monkeypatch):
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    answer = subprocess.CompletedProcess([], 0, stdout=listed, stderr="")
    monkeypatch.setattr(subprocess, "run", lambda *args, **kwargs: answer)
    assert triage_ray._node_arch_list() == expected


@pytest.mark.parametrize("asked", [None, "", "native"])
def test_the_slots_and_builders_build_for_the_gpus_unless_a_list_is_given(asked, monkeypatch):
    """The builders see no GPU: the slots' ``TORCH_CUDA_ARCH_LIST`` (which they share) names the GPUs' architectures
    where the user gave none, or "native" (which would build for no GPU in a builder and for this one in the job: two
    keys, nothing built ahead found)."""
    import torch

    from fp_analysis.triage import pool

    for name, value in (("device_count", lambda: 2), ("get_device_capability", lambda i: (9, 0)),
                        ("get_arch_list", lambda: ["sm_80", "sm_90"])):  # fmt: skip
        monkeypatch.setattr(torch.cuda, name, value)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    if asked is None:
        monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    else:
        monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", asked)
    slots = pool._slot_environments("cuda")
    assert slots == [{"CUDA_VISIBLE_DEVICES": gpu, "TORCH_CUDA_ARCH_LIST": "9.0+PTX"} for gpu in ("0", "1")]
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "8.0;9.0")
    assert pool._slot_environments("cuda")[0] == {"CUDA_VISIBLE_DEVICES": "0"}  # the user's list: torch reads it


def test_a_node_without_nvidia_smi_or_with_its_own_arch_list_adds_none(monkeypatch):
    def missing(*args, **kwargs):
        raise FileNotFoundError("nvidia-smi")

    monkeypatch.setattr(subprocess, "run", missing)
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    assert triage_ray._node_arch_list() == {}
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "8.0")  # the node's own: torch reads it in both tasks
    assert triage_ray._node_arch_list() == {}


_NINJA = "Error building extension 'case': [1/3] c++ -c main.cpp -o main.o\n"
_UNDECLARED = _NINJA + "main.cpp:3:1: error: 'x' was not declared"


@pytest.mark.parametrize(
    ("message", "fate", "gpu_seen", "source", "stands"),
    [
        (_UNDECLARED, Fate.RAISED, False, "", True),
        (_NINJA + "c++: fatal error: Killed signal terminated program cc1plus", Fate.RAISED, True, "", False),
        (_NINJA + "nvcc error   : 'cicc' died due to signal 9 (Kill signal)", Fate.RAISED, False, "", False),
        (_UNDECLARED, Fate.RAISED, False, "torch.cuda.get_device_capability()", False),
        (_UNDECLARED, Fate.RAISED, False, 'extra_cuda_cflags=["-arch=native"]', False),  # no GPU: built for another
        ("RuntimeError: Found no NVIDIA driver on your system", Fate.RAISED, False, "", False),
        ("RuntimeError: Found no NVIDIA driver on your system", Fate.RAISED, True, "", True),
        ("the solution changed files", Fate.MODIFIED_FILES, True, "", True),
        ("did not return within 60 s", Fate.TIMED_OUT, True, "", False),
    ],
)  # fmt: skip
def test_a_builds_failure_stands_only_where_it_is_the_solutions_own(message, fate, gpu_seen, source, stands, tmp_path):
    """The solution's own failure (it raised, or changed its files) stands, unless a compiler was killed (out of
    memory: the builders' load); where the build saw no GPU, only an extension that did not compile, by a solution
    that neither asks torch.cuda nor builds for the GPU it runs on (a review, 2026-12-05: ``-arch=native``)."""
    solution = tmp_path / "solution.py"
    solution.write_text(f"# load_inline\n{source}\n")
    failure = UserCodeError(message, side="solution", where="importing solution.py", fate=fate)
    assert builds._stands(failure, solution, gpu_seen) is stands
    assert builds._stands(InternalError("ours"), solution, gpu_seen) is False


def _pairs(samples: dict[str, int]) -> list:
    """Pairs of problems named in ``samples``, that many samples each, in the order a triage lists them."""
    import pathlib

    from fp_analysis.triage.discovery import Pair

    return [Pair(f"{problem}/{i}", pathlib.Path(f"{problem}.py"), pathlib.Path(f"{problem}_{i}.py"))
            for problem, count in samples.items() for i in range(count)]  # fmt: skip


def test_a_problems_samples_build_on_one_node_so_that_their_twins_share_its_store():
    """Dealt in turn, the 5 samples of a problem went to 4 nodes, and each twin built again (without a shared build
    cache); now each problem's go together, and the nodes' loads stay within one problem of even."""
    pairs = _pairs({f"p{i}": 5 for i in range(40)})
    queued = triage_ray.dealt(pairs, [(f"node{i}", 8, 10) for i in range(4)])
    where = {pair.problem: node for node, mine in queued.items() for pair in mine}
    assert all(where[pair.problem] == node for node, mine in queued.items() for pair in mine)  # a problem: one node
    assert sorted(map(len, queued.values())) == [50, 50, 50, 50]
    assert sorted(pair.id for mine in queued.values() for pair in mine) == sorted(pair.id for pair in pairs)
    first = queued["node0"][:3]  # each node's taken one problem's at a time in turn: twins apart in time
    assert len({pair.problem for pair in first}) == 3


def test_a_problem_with_more_samples_than_a_slots_share_is_spread_in_proportion_to_the_slots():
    pairs = _pairs({"big": 90, "small": 6})
    queued = triage_ray.dealt(pairs, [("a", 1, 2), ("b", 2, 2)])
    assert {node: len(mine) for node, mine in queued.items()} == {"a": 32, "b": 64}  # a slot's share: 32
    assert triage_ray.dealt(pairs, []) == {}
