"""One line out of a program's output, for an error message or a check's detail.

>>> last_line("Reading lists...\\n\\x1b[1;31mE: \\x1b[0mUnable to locate package foo\\n\\n")
'E: Unable to locate package foo'
>>> last_line("")
''
"""

from __future__ import annotations

import re

__all__ = ["last_line", "strip_ansi"]

# CSI sequences (colours, cursor moves), OSC sequences (titles, links) and lone escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def strip_ansi(text: str) -> str:
    """``text`` without terminal escape sequences and control characters (tabs and newlines
    kept; a carriage return ends a line, as a progress bar's redraws do)."""
    return _CONTROL.sub("", _ANSI.sub("", text).replace("\r", "\n"))


def last_line(text: str, limit: int = 200) -> str:
    """The last line of ``text`` with something in it, escapes stripped, cut to ``limit``."""
    lines = [ln.strip() for ln in strip_ansi(text).splitlines() if ln.strip()]
    line = lines[-1] if lines else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."
