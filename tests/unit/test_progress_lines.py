"""Progress lines: a status that fits one terminal line, and the periodic line off a terminal."""

from __future__ import annotations

from fp_analysis.cli import progress, worker


def test_a_periodic_line_says_the_latest_at_most_once_a_period_and_nothing_before(monkeypatch, capsys):
    clock = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: clock[0])
    line = progress.PeriodicLine(enabled=True, every_s=30)
    for t, text in [(110, "a"), (131, "b"), (140, "c"), (162, "d")]:
        clock[0] = t
        line.say(text)
    assert capsys.readouterr().err.splitlines() == ["b", "d"]
    progress.PeriodicLine(enabled=False, every_s=0).say("never")
    assert capsys.readouterr().err == ""


def test_the_worker_status_is_one_line_of_the_terminal_with_the_step_first(monkeypatch):
    monkeypatch.setattr(type(worker.err), "width", property(lambda self: 60))
    status = worker.WorkerStatus(enabled=False)
    status.update({"event": "progress", "step": "example 7 of 200"})
    status.update({"event": "enter", "side": "solution", "where": "ModelNew.forward", "detail": "x" * 200})
    line = status._line()
    assert line.startswith("example 7 of 200: running the solution's") and len(line) <= 60 - 4 and line[-1] == "…"
    status.update({"event": "leave"})
    assert status._line() == "example 7 of 200: analysing…"
