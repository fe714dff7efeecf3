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
