"""``fpa``, the command line: one module per command; each parses, calls the library and renders (never the reverse).

``entry`` is the console script (it starts the fork server before the command line loads), ``app`` the typer app
(the commands' registration and how every command ends). The commands share ``arguments`` (their option types and
checks), ``console`` (the terminal: stdout, stderr, text made safe for them), ``worker`` (what the worker is doing
and what it printed) and ``storing`` (a run appended to the results store).
"""
