"""Wrong (returns zeros), and answers forward with a pickle that would run code in the worker if it were unpickled:
it would touch the file FPA_TEST_CANARY names and hand back the worker's own reference output."""

import os
import pickle
import struct
import sys

import torch
from _conv import Conv


class _RunsInTheReader:
    def __reduce__(self):
        return (os.system, (f"touch {os.environ.get('FPA_TEST_CANARY', '/dev/null')}",))


class ModelNew(Conv):
    def forward(self, x):
        data = pickle.dumps({"output": torch.zeros(2, 8, 12, 14), "device": "cpu", "ran": _RunsInTheReader()})
        os.write(int(sys.argv[-1]), struct.pack("!i", len(data)) + data)  # multiprocessing.Connection's framing
        os._exit(0)
