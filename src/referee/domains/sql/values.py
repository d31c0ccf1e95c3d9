"""Cells as plain JSON values, on the host as the sandbox's runner writes them.

The runner (:mod:`.sandbox_runner`, standard library only) has its own copy of this rule;
both must agree, and ``tests/domains/sql`` checks that they do.

>>> import datetime, decimal
>>> plain_rows([(1, 2.5, None, "x", datetime.date(2024, 3, 1), decimal.Decimal("1.50"), True)])
[[1, 2.5, None, 'x', '2024-03-01', 1.5, 1]]
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["plain", "plain_rows"]


def plain(value: Any) -> Any:
    """A JSON value for one cell: numbers, strings and None as they are, dates as ISO text."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, datetime.date | datetime.datetime | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes | bytearray | memoryview):
        return "x'" + bytes(value).hex() + "'"
    return str(value)


def plain_rows(rows: Iterable[Sequence[Any]]) -> list[list[Any]]:
    """Every row as a list of :func:`plain` values."""
    return [[plain(v) for v in row] for row in rows]
