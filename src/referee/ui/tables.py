"""Tables for the terminal that never cut an id or a path, and plain text when piped.

Rich fits a table to the console's width (80 columns when the output is not a terminal) by
cutting cells with "…": an id cut that way cannot be pasted back into a command. Here a table
is never cut: cells wrap between words instead, the *key* columns (ids, names, paths) keep each
cell on one line, and a table that needs more room than the console has is printed as wide as
it needs (the terminal wraps long lines; the text stays whole, and pastes whole).

A listing a script may read (:func:`print_rows`) is a table on a terminal and, when the output
is piped or redirected, plain tab-separated lines without a header, one row per line, like
other command lines do (``cut -f1`` gives the ids).

>>> print_rows(Console(), ("id", "split"), [("HumanEval/0", "heldout")])   # doctest: +SKIP
>>> print_table(Console(stderr=True), results_table(data), keys=())         # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

__all__ = ["Cell", "plain_row", "print_rows", "print_table"]

#: A cell: a plain string (never read as markup: ids may hold brackets), or styled Text.
Cell = str | Text

#: Wider than any table's keys; only bounds the measurement.
_UNBOUNDED = 1 << 16


def print_table(console: Console, table: Table, *, keys: Iterable[int] = (0,)) -> None:
    """Print ``table`` with nothing in it cut: the cells of the columns ``keys`` (indices) each
    on one line, the others wrapped between words, and the whole as wide as that needs (the
    table's columns are set for it: overflow, wrapping and least widths)."""
    key_set = set(keys)
    for i, column in enumerate(table.columns):
        column.overflow = "fold"
        column.no_wrap = i in key_set
        # Rich shrinks columns evenly when a table is too wide, below their longest word; a
        # column's min_width is the one floor it keeps.
        widest = _widest(console, [column.header, *column.cells], whole=i in key_set)
        column.min_width = max(column.min_width or 0, widest)
    options = console.options.update(max_width=_UNBOUNDED)
    needed = Measurement.get(console, options, table).minimum
    width = console.width
    if needed > width:
        console.width = needed
    try:
        console.print(table, soft_wrap=False, crop=False)
    finally:
        console.width = width


def _widest(console: Console, cells: Iterable[object], *, whole: bool) -> int:
    """The widest line (``whole``) or word among the cells that are text."""
    widest = 0
    for cell in cells:
        if isinstance(cell, str):
            cell = console.render_str(cell)
        if not isinstance(cell, Text):
            continue  # another renderable measures itself
        parts = cell.plain.splitlines() if whole else cell.plain.split()
        widest = max([widest, *(cell_len(p) for p in parts)])
    return widest


def plain_row(cells: Sequence[Cell]) -> str:
    """One row as tab-separated plain text (tabs and line breaks inside a cell become spaces)."""
    texts = (c.plain if isinstance(c, Text) else c for c in cells)
    return "\t".join(" ".join(t.split("\t")).replace("\n", " ") for t in texts)


def print_rows(
    console: Console,
    header: Sequence[str],
    rows: Iterable[Sequence[Cell]],
    *,
    keys: Iterable[int] = (0,),
) -> None:
    """A listing: a table (see :func:`print_table`) on a terminal; piped or redirected, one
    tab-separated line per row and no header, for scripts."""
    if not console.is_terminal:
        for row in rows:
            console.file.write(plain_row(row) + "\n")
        console.file.flush()
        return
    table = Table(*header)
    for row in rows:
        table.add_row(*(Text(c) if isinstance(c, str) else c for c in row))
    print_table(console, table, keys=keys)
