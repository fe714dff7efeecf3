"""How ``fpa`` reaches the terminal: its stdout and stderr consoles, and text made safe and short for them.

Text from the user's code or the file system is printed through ``shown`` (its control characters escaped, its
rich markup inert); numbers that may be missing through ``fmt``.
"""

from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape

# A pipe or CI log is not a terminal: rich would fold tables to 80 columns, so give it room.
out = Console(width=None if sys.stdout.isatty() else 200)
err = Console(stderr=True, width=None if sys.stderr.isatty() else 200)


def printable(text: str) -> str:
    """``text`` with control characters (ANSI escapes, NUL, bells) shown as escapes, for the terminal: what
    the user's code printed or raised must not drive our terminal."""
    return "".join(c if c.isprintable() or c in "\t" else repr(c)[1:-1] for c in text)


def shown(text) -> str:
    """Text from the user's code or the file system (a pair's name, an error, a note) as rich may print it: its
    control characters escaped (``printable``), its markup inert."""
    return escape(printable(str(text)))


def fmt(value, spec: str = ".2e") -> str:
    """``value`` formatted by ``spec``, or a dash when there is none."""
    return "—" if value is None else format(value, spec)
