"""Wrong (returns zeros), and writes an 'identical' result into fpa's job folder, then kills the worker (its sibling:
both were forked by fpa's fork server) so that the worker never writes its own."""

import json
import os
import signal

import torch
from _conv import Conv

FOLDER = os.path.dirname(os.readlink("/proc/self/fd/1"))  # its captured stdout lies in the job's folder


class ModelNew(Conv):
    def forward(self, x):
        forged = json.dumps({"value": {"explained": True, "verdict": "identical"}})
        with open(os.path.join(FOLDER, "result.json"), "w") as out:
            out.write(json.dumps({"record": forged, "mac": "0" * 64}))
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                parent = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if parent == os.getppid() and int(pid) != os.getpid():
                os.kill(int(pid), signal.SIGKILL)
        return torch.zeros(2, 8, 12, 14)
