"""Where a job's start goes: the fork server's steps, CUDA's start, `fpa explain` timestamped, explain twice.

Measures, each in a fresh interpreter of its own: ``import torch``; the fork server's preloads one by one and its
warm-up (``fp_analysis.run.forkserver_loop``; twice, as a fresh checkout's first warm-up fills numba's cache); CUDA's
start in a process that has imported torch (context, first cuDNN convolution, first ``torch.rand`` on the GPU);
``fpa explain --json`` twice as a user runs it, each step timestamped from its process's start (the server's
launch and readiness, the job's first event and return, the exit after the results store's write). Then runs
``fp_analysis.explain.jobs.explain_files`` on PROBLEM and SOLUTION twice in this process, printing each of the worker's
events with the seconds since the call began: the first call starts the fork server, the second finds it
started (and, being its second worker, waits for its warm-up).

    python experiments/startup_timeline.py PROBLEM SOLUTION --device cuda --out OUT/startup.json
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

_IMPORT_TORCH = "import time; t = time.perf_counter(); import torch; print(time.perf_counter() - t)"

# The server's preloads and warm-up, timed one by one (as ``forkserver_loop.serve`` runs them).
_SERVER_STEPS = """
import importlib, json, sys, time
from fp_analysis.run import forkserver_loop, forkserver_warmup
steps = {}
for module in forkserver_loop._PRELOAD:
    t = time.perf_counter(); importlib.import_module(module); steps["import " + module] = time.perf_counter() - t
t = time.perf_counter(); forkserver_warmup.warm_up(); steps["warm-up"] = time.perf_counter() - t
print(json.dumps(steps))
"""

_CUDA_STEPS = """
import json, time
import torch
steps = {}
def timed(name, step):
    t = time.perf_counter(); step(); torch.cuda.synchronize(); steps[name] = time.perf_counter() - t
timed("torch.cuda.init()", torch.cuda.init)
timed("first tensor", lambda: torch.zeros(1, device="cuda"))
x = torch.rand(2, 3, 16, 16, device="cuda"); conv = torch.nn.Conv2d(3, 4, 3).cuda()
timed("first cuDNN conv2d", lambda: conv(x))
timed("torch.rand 8x32x512x512 on the CPU", lambda: torch.rand(8, 32, 512, 512))
timed("torch.rand 8x32x512x512 on the GPU", lambda: torch.rand(8, 32, 512, 512, device="cuda"))
print(json.dumps(steps))
"""


# `fpa explain --json` as a user runs it, its steps timestamped from the process's start (/proc/self/stat): the
# server's launch and readiness, the job's first event and its return, the exit (after the results store's write).
_COMMAND = """
import atexit, json, os, sys, time
with open(f"/proc/{os.getpid()}/stat") as f:
    ticks = int(f.read().rsplit(")", 1)[1].split()[19])
with open("/proc/uptime") as f:
    base = float(f.read().split()[0]) - ticks / os.sysconf("SC_CLK_TCK") - time.perf_counter()
marks = {}
def mark(name):
    marks.setdefault(name, round(base + time.perf_counter(), 3))
mark("interpreter ready")
from fp_analysis.cli import entry as command
from fp_analysis.run import forkserver
launch = forkserver.ForkServer.launch.__func__
forkserver.ForkServer.launch = classmethod(lambda cls, env: (mark("server launched"), launch(cls, env))[1])
await_ready = forkserver.ForkServer._await_ready
def ready(self):
    await_ready(self)
    mark("server ready")
forkserver.ForkServer._await_ready = ready
atexit.register(lambda: (mark("exit"), print(json.dumps(marks), file=sys.stderr)))
import fp_analysis.explain.jobs as jobs  # (not the command line: it is imported after the launch, as fpa imports it)
explain_files = jobs.explain_files
def timed_explain(*args, on_event=None, **kwargs):
    def event(e):
        mark("first event")
        on_event and on_event(e)
    result = explain_files(*args, on_event=event, **kwargs)
    mark("job returned")  # then the results store's write and the exit
    return result
jobs.explain_files = timed_explain
sys.argv = ["fpa", "explain", "--json", *sys.argv[1:]]
command.main()
"""


def _command_marks(problem: str, solution: str, device: str) -> dict:
    done = subprocess.run([sys.executable, "-c", _COMMAND, "--problem", problem, "--solution", solution, "--device",
                           device], capture_output=True, text=True, env=_env())  # fmt: skip
    return json.loads(done.stderr.strip().splitlines()[-1])


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _fresh(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_env()).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problem")
    parser.add_argument("solution")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", type=pathlib.Path, required=True)
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    record: dict = {"import torch (s)": [float(_fresh(_IMPORT_TORCH)) for _ in range(2)]}
    # twice: the first may compile numba's twins into its cache (a fresh checkout has none)
    record["fork server steps (s)"] = [json.loads(_fresh(_SERVER_STEPS)) for _ in range(2)]
    if options.device != "cpu":
        record["CUDA steps (s)"] = json.loads(_fresh(_CUDA_STEPS))
    record["fpa explain, seconds since its start"] = [
        _command_marks(options.problem, options.solution, options.device) for _ in range(2)
    ]
    print(json.dumps(record, indent=1), flush=True)

    from fp_analysis.explain.jobs import explain_files
    from fp_analysis.options import ExplainOptions

    for call in ("cold server", "warm server"):
        start, events = time.perf_counter(), []

        def timed(event, start=start, events=events):
            events.append(f"{time.perf_counter() - start:7.2f} s  {event}")

        result = explain_files(options.problem, options.solution, ExplainOptions(options.device), on_event=timed)
        wall = time.perf_counter() - start
        record[call] = {"wall (s)": wall, "verdict": result.verdict, "events": events}
        print(f"{call}: {result.verdict} in {wall:.2f} s", *events, sep="\n  ", flush=True)
    options.out.write_text(json.dumps(record, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
