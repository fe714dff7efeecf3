"""``fpa``, the command line: one module per command; each parses, calls the library and renders (never the reverse).

``entry`` is the console script (it starts the fork server before the command line loads), ``app`` the typer app.
"""
