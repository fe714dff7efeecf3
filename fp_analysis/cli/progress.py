"""Progress off a terminal: in a log file or a pipe a transient status line shows nothing, so a long command says
how far it is in a plain line now and then (``PeriodicLine``), and a short one says nothing."""

from __future__ import annotations

import sys
import time

__all__ = ["PeriodicLine"]


class PeriodicLine:
    """Prints the latest of what it is told on stderr, at most once every ``every_s`` seconds (the first only after
    ``every_s``: a command shorter than that prints nothing); does nothing unless ``enabled``."""

    def __init__(self, enabled: bool, every_s: float = 30.0):
        self.enabled = enabled
        self.every_s = every_s
        self._last = time.monotonic()

    def say(self, text: str) -> None:
        now = time.monotonic()
        if self.enabled and now - self._last >= self.every_s:
            self._last = now
            print(text, file=sys.stderr, flush=True)
