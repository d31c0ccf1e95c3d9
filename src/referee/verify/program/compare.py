"""Comparing a program's output with the expected output, on the host, as plain text.

Modes: ``tokens`` (whitespace-separated tokens equal), ``exact`` (equal after CRLF becomes LF
and trailing newlines are dropped), ``float`` (tokens; numeric tokens equal within a tolerance,
absolute or relative). Checker programs are :mod:`.checker`'s. Nothing here runs code.

>>> compare("tokens", "1  2\\n3\\n", "1 2 3")
(True, '')
>>> compare("float", "0.3333334", "0.333333", tolerance=1e-6)
(True, '')
"""

from __future__ import annotations

import math

__all__ = ["COMPARE_MODES", "compare"]

COMPARE_MODES = ("tokens", "exact", "float", "checker")


def _number(token: str) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    return value


def _close(got: float, want: float, tolerance: float) -> bool:
    if math.isnan(want) or math.isinf(want):
        return False  # such tokens must match as text
    if math.isnan(got) or math.isinf(got):
        return False
    diff = abs(got - want)
    return diff <= tolerance or diff <= tolerance * abs(want)


def _first_difference(got: list[str], want: list[str]) -> str:
    for i, (g, w) in enumerate(zip(got, want, strict=False)):
        if g != w:
            return f"token {i + 1} differs"
    return f"{len(got)} tokens, expected {len(want)}"


def compare(mode: str, output: str, expected: str, *, tolerance: float = 1e-6) -> tuple[bool, str]:
    """Whether ``output`` is right, and if not a short reason (never the expected text)."""
    if mode == "exact":
        got = output.replace("\r\n", "\n").rstrip("\n")
        want = expected.replace("\r\n", "\n").rstrip("\n")
        if got == want:
            return True, ""
        return False, "output differs"
    got_t, want_t = output.split(), expected.split()
    if mode == "tokens":
        if got_t == want_t:
            return True, ""
        return False, _first_difference(got_t, want_t)
    if mode == "float":
        if len(got_t) != len(want_t):
            return False, f"{len(got_t)} tokens, expected {len(want_t)}"
        for i, (g, w) in enumerate(zip(got_t, want_t, strict=True)):
            if g == w:
                continue
            gv, wv = _number(g), _number(w)
            if gv is None or wv is None or not _close(gv, wv, tolerance):
                return False, f"token {i + 1} differs"
        return True, ""
    raise ValueError(f"unknown comparison mode {mode!r}")
