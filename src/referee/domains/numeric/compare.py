"""Comparing a candidate's numbers with the reference's, on the host.

Both sides are plain JSON data by the time they meet here: the candidate's outcome was decoded
from tagged builtins (:mod:`referee.verify.harness`) into fresh host objects, so nothing the
candidate made (an ``__eq__`` that lies, a patched ``numpy.allclose``) takes part. Numbers are
compared as numpy's ``isclose`` does, one-sided on the reference:
``|got - want| <= atol + rtol * |want|``. A NaN or an infinity from the candidate is never
equal to anything (the references are finite: recording refuses them). Structure must match
exactly: the same keys, the same list lengths; a bool is not a number.

>>> within({"x": [1.0, 2.0]}, {"x": [1.0, 2.0 + 1e-9]}, rtol=1e-6, atol=0.0)
''
>>> within({"x": [1.0]}, {"x": [float("nan")]}, rtol=1e-6, atol=0.0)
'x[0]: not a finite number'
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["Tolerance", "finite_numbers", "floats_of", "is_number", "within"]

_MAX_DEPTH = 16


class Tolerance(dict[str, float]):
    """``{"rtol": ..., "atol": ...}``, checked: both finite and at least 0, not both 0."""

    def __init__(self, rtol: float, atol: float) -> None:
        for name, value in (("rtol", rtol), ("atol", atol)):
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise ValueError(f"{name} must be a number, got {value!r}")
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if rtol == 0 and atol == 0:
            raise ValueError("rtol and atol cannot both be 0 (floating point is never exact)")
        super().__init__(rtol=float(rtol), atol=float(atol))


def is_number(x: Any) -> bool:
    """An int or float (not a bool)."""
    return isinstance(x, int | float) and not isinstance(x, bool)


def finite_numbers(value: Any, where: str = "", _depth: int = 0) -> str:
    """Why ``value`` is not a nest of finite numbers in lists and string-keyed dicts ("" if
    it is): what a recorded reference output must be."""
    if _depth > _MAX_DEPTH:
        return f"{where or 'value'}: nested too deeply"
    if is_number(value):
        return "" if math.isfinite(value) else f"{where or 'value'}: not a finite number"
    if isinstance(value, list):
        for i, v in enumerate(value):
            why = finite_numbers(v, f"{where}[{i}]", _depth + 1)
            if why:
                return why
        return ""
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                return f"{where or 'value'}: keys must be strings"
            why = finite_numbers(v, f"{where}.{k}" if where else k, _depth + 1)
            if why:
                return why
        return ""
    return f"{where or 'value'}: {type(value).__name__} is not a number, list or dict"


def within(want: Any, got: Any, *, rtol: float, atol: float, where: str = "") -> str:
    """Where ``got`` first differs from ``want`` beyond the tolerance, or "" if nowhere."""
    return _within(want, got, rtol, atol, where, 0)


def _within(want: Any, got: Any, rtol: float, atol: float, where: str, depth: int) -> str:
    here = where or "the answer"
    if depth > _MAX_DEPTH:
        return f"{here}: nested too deeply"
    if is_number(want):
        if not is_number(got):
            return f"{here}: expected a number, got {_kind(got)}"
        g = float(got) if abs(got) < 1e308 else math.inf
        if not math.isfinite(g):
            return f"{here}: not a finite number"
        w = float(want)
        if abs(g - w) <= atol + rtol * abs(w):
            return ""
        return f"{here}: {g!r} differs from the reference by {abs(g - w):.3g}"
    if isinstance(want, list):
        if not isinstance(got, list):
            return f"{here}: expected a list of {len(want)}, got {_kind(got)}"
        if len(got) != len(want):
            return f"{here}: expected {len(want)} values, got {len(got)}"
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            why = _within(w, g, rtol, atol, f"{where}[{i}]", depth + 1)
            if why:
                return why
        return ""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{here}: expected a dict with keys {sorted(want)}, got {_kind(got)}"
        if set(got) != set(want):
            return f"{here}: expected keys {sorted(want)}, got {sorted(map(str, got))[:10]}"
        for k in want:
            why = _within(want[k], got[k], rtol, atol, f"{where}.{k}" if where else k, depth + 1)
            if why:
                return why
        return ""
    return f"{here}: the reference holds a {_kind(want)}, which is not comparable"


def _kind(x: Any) -> str:
    if isinstance(x, bool):
        return "a bool"
    if isinstance(x, list):
        return f"a list of {len(x)}"
    if isinstance(x, dict):
        return "a dict"
    if x is None:
        return "None"
    return f"a {type(x).__name__}"


def floats_of(value: Any, _depth: int = 0) -> list[float]:
    """Every float in a nest of lists and dicts (ints and bools left out)."""
    if _depth > _MAX_DEPTH:
        return []
    if isinstance(value, float):
        return [value]
    if isinstance(value, list):
        return [f for v in value for f in floats_of(v, _depth + 1)]
    if isinstance(value, dict):
        return [f for v in value.values() for f in floats_of(v, _depth + 1)]
    return []
