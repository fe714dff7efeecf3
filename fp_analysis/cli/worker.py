"""The worker a job runs the user's code in, as ``fpa`` shows it: what it is doing while it runs (``WorkerStatus``),
and after, its time and (shortened) what the user's code printed (``print_worker``). Used by explain and fuzz, and
by the error of a user's code that failed."""

from __future__ import annotations

import sys
import threading
import time

from rich.console import Console
from rich.markup import escape

from ..errors import Side
from .console import err, out, printable, shown


class WorkerStatus:
    """What the worker is doing, on stderr: on a terminal a transient status line naming its current call into the
    user's code or analysis step (not with --json); elsewhere (a log file, a pipe) a line every ``HEARTBEAT_S``
    seconds of the job saying the same, so that a long job is never silent, and a short one prints nothing."""

    HEARTBEAT_S = 30.0

    def __init__(self, enabled: bool):
        self.enabled = enabled and err.is_terminal
        self.status = None
        self.text = "starting the worker"
        self.step = ""
        self._stop = threading.Event()
        self._started = time.monotonic()

    def __enter__(self):
        if self.enabled:
            self.status = err.status(self._line())
            self.status.__enter__()
        elif not err.is_terminal:
            threading.Thread(target=self._heartbeat, name="fpa-heartbeat", daemon=True).start()
        return self

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.HEARTBEAT_S):
            step = f"{self.step}: " if self.step else ""
            print(f"fpa: {time.monotonic() - self._started:.0f} s: {step}{self.text}", file=sys.stderr, flush=True)

    def update(self, event: dict) -> None:
        if event.get("event") == "enter":
            detail = f" ({event['detail']})" if event.get("detail") else ""
            self.text = f"running the {event['side']}'s {event['where']}{detail}"
        elif event.get("event") == "leave":
            self.text = "analysing"
        elif event.get("event") == "progress" and "step" in event:  # how far a job of many steps is (fuzz)
            self.step = str(event["step"])
        elif event.get("event") == "progress":
            self.text = str(event.get("text", ""))
        else:
            return
        if self.status is not None:
            self.status.update(shown(self._line()))

    def _line(self) -> str:
        """The status in one line of the terminal: the step, then what is running now, cut to fit (a wrapped
        status line is redrawn as several, each repaint leaving lines behind)."""
        text = f"{self.step}: {self.text}" if self.step else self.text
        room = max(20, err.width - 4)  # the spinner and its space
        return f"{text[: room - 1]}…" if len(text) >= room else f"{text}…"

    def __exit__(self, *exc):
        self._stop.set()
        if self.status is not None:
            self.status.__exit__(*exc)
        return False


def print_worker(worker: dict, console: Console = out) -> None:
    """The time the worker took and, shortened, what the user's code printed."""
    if not worker:
        return
    from ..run.children import CapturedOutput

    console.print(
        f"  worker: {worker['seconds']:.1f} s, of which {worker['user_code_seconds']:.1f} s in the user's code",
        highlight=False,
    )
    for side in Side:
        lines = CapturedOutput(**worker[side.value]).tail() if side.value in worker else []
        if lines:
            where = "the problem's process (with fpa's analysis)" if side is Side.PROBLEM else "the solution's process"
            console.print(f"  {where} printed (all of it under 'worker' with --json):", highlight=False)
            for line in lines:
                console.print(f"  {escape(printable(line))}", highlight=False)
