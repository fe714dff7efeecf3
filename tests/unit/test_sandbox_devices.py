"""A solution's process in a job without a GPU may not open a GPU's device files (``places.solution_writable``): a
triage's builders import solutions beside the GPUs' jobs, and setting ``CUDA_VISIBLE_DEVICES`` again is in the
solution's hands; Landlock's rules are not. /dev is a made folder here: this machine may have no GPU."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import pytest

from fp_analysis.run import hardening, places

_WRITER = """
import json, os, sys
from fp_analysis.run import hardening, places
devices, gpu = sys.argv[1], sys.argv[2] == "1"
places._DEVICES_FOLDER = devices
confined = hardening.sandbox(places.solution_writable(gpu))
said = {"confined": confined is not None}
for name in ("nvidia0", "nvidiactl", "dri/card0", "null", "shm/segment"):
    try:
        with open(os.path.join(devices, name), "r+") as device:
            device.write("x")
        said[name] = "written"
    except OSError as error:
        said[name] = f"refused: {error.errno}"
print(json.dumps(said))
"""


def _written(devices: pathlib.Path, gpu: bool) -> dict:
    package = str(pathlib.Path(places.__file__).parents[2])
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": package, "TMPDIR": str(devices.parent / "tmp")}  # not /tmp
    done = subprocess.run([sys.executable, "-c", _WRITER, str(devices), "1" if gpu else "0"], capture_output=True,
                          text=True, timeout=120, env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.skipif(hardening._libc() is None, reason="Linux only")
def test_a_job_without_a_gpu_may_not_open_the_gpus_device_files(tmp_path):
    devices = tmp_path / "dev"
    for name in ("nvidia0", "nvidiactl", "dri/card0", "null", "shm/segment"):
        (devices / name).parent.mkdir(parents=True, exist_ok=True)
        (devices / name).write_text("")
    without = _written(devices, gpu=False)
    if not without["confined"]:
        pytest.skip("the kernel has no Landlock")
    assert [without[name] for name in ("nvidia0", "nvidiactl", "dri/card0")] == ["refused: 13"] * 3, without
    assert without["null"] == without["shm/segment"] == "written", without
    with_gpu = _written(devices, gpu=True)
    assert {with_gpu[name] for name in ("nvidia0", "nvidiactl", "dri/card0", "null", "shm/segment")} == {"written"}


_LOCKER = """
import fcntl, json, os, sys
from fp_analysis.run import hardening
lock, tmp = sys.argv[1], sys.argv[2]
hardening.drop_privileges()
confined = hardening.sandbox([tmp])
said = {"confined": confined is not None}
for mode in (os.O_RDONLY, os.O_WRONLY):
    try:
        descriptor = os.open(lock, mode)
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        said[str(mode)] = "locked"
    except OSError as error:
        said[str(mode)] = f"refused: {error.errno}"
print(json.dumps(said))
"""


@pytest.mark.skipif(hardening._libc() is None, reason="Linux only")
def test_a_sandboxed_solution_cannot_open_a_lock_of_fpas_to_hold_it(tmp_path):
    """fpa's locks (a store key's, a solution folder's lock of use) are files a solution's process may read wherever
    they lie: made by ``places.lock_file`` (write-only, and its mode so), it can open one neither way, so it cannot
    hold one to starve a build or unmark a job (a review, 2026-12-05)."""
    lock = tmp_path / ".key.lock"
    lock.write_text("")  # made before, readable: its mode is set again
    places.lock_file(lock).close()
    (tmp_path / "tmp").mkdir()
    package = str(pathlib.Path(places.__file__).parents[2])
    done = subprocess.run([sys.executable, "-c", _LOCKER, str(lock), str(tmp_path / "tmp")], capture_output=True,
                          text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": package})  # fmt: skip
    assert done.returncode == 0, done.stderr
    said = json.loads(done.stdout)
    if not said["confined"]:
        pytest.skip("the kernel has no Landlock")
    assert said == {"confined": True, "0": "refused: 13", "1": "refused: 13"}, said
