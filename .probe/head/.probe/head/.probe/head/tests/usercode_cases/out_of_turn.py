"""Wrong (returns zeros), and answers the first forward with a well-formed reply to a request that was never sent,
before the honest reply to the one that was."""

import os
import socket
import sys

import torch
from _conv import Conv

from fp_analysis.run import wire


class ModelNew(Conv):
    def forward(self, x):
        channel = socket.socket(fileno=os.dup(int(sys.argv[-1])))
        wire.send(channel, 10**6, {"output": super().forward(x), "device": "cpu", "mutated": []})
        return torch.zeros(2, 8, 12, 14)
