"""Tables that never cut an id or a path, and plain tab-separated text when piped."""

from __future__ import annotations

import io

from rich.console import Console
from rich.table import Table
from rich.text import Text

from referee.ui.tables import plain_row, print_rows, print_table

LONG_ID = "synth/minilib/bugfix-minilib-textutil.py-normalize_whitespace-3fa9c2b1d0-v1"


def console(*, terminal: bool, width: int = 80) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=width, force_terminal=terminal, color_system=None), buf


def test_a_table_at_80_columns_keeps_its_ids_whole_and_cuts_nothing():
    c, buf = console(terminal=True)
    table = Table("id", "split", "domain", "format", "a long header for the tests")
    for i in range(3):
        table.add_row(LONG_ID + "x" * i, "heldout", "code", "patch with some words", "12")
    print_table(c, table)
    out = buf.getvalue()
    assert "…" not in out
    for i in range(3):
        assert LONG_ID + "x" * i in out  # on one line: it can be pasted back
    assert "heldout" in out and "words" in out


def test_print_table_folds_other_columns_and_leaves_the_console_width_alone():
    c, buf = console(terminal=False, width=40)
    table = Table("name", "reported")
    table.add_row("forge-frames-via-frame-inspection", "exit 1 | " + "y" * 60)
    print_table(c, table, keys=(0,))
    out = buf.getvalue()
    assert "forge-frames-via-frame-inspection" in out and "…" not in out
    assert "".join(ch for ch in out if ch == "y") == "y" * 60  # folded, not dropped
    assert c.width == 40


def test_piped_rows_are_tab_separated_plain_text_without_a_header():
    c, buf = console(terminal=False)
    rows = [(LONG_ID, "train", Text("NO", style="red")), ("ns/[bold]odd-v1", "heldout", "x\ty")]
    print_rows(c, ("id", "split", "ok"), rows)
    assert buf.getvalue().splitlines() == [
        f"{LONG_ID}\ttrain\tNO",
        "ns/[bold]odd-v1\theldout\tx y",  # brackets are text, not markup; a tab is a space
    ]


def test_rows_on_a_terminal_are_a_table_with_whole_ids_and_literal_brackets():
    c, buf = console(terminal=True)
    print_rows(c, ("id", "split"), [(LONG_ID, "train"), ("ns/[bold]odd-v1", "heldout")])
    out = buf.getvalue()
    assert "┃ id" in out and LONG_ID in out and "ns/[bold]odd-v1" in out and "…" not in out


def test_plain_row_flattens_line_breaks():
    assert plain_row(["a\nb", Text("c")]) == "a b\tc"
