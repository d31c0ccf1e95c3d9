"""Import source ``verilog-rows``: Verilog design problems from a JSONL (or JSON, Parquet) file.

A row::

    {"id": "adder8", "description": "An 8-bit adder ...",
     "module_header": "module adder8(input [7:0] a, input [7:0] b, output [8:0] s);",
     "reference": "module adder8(...); assign s = a + b; endmodule",
     "top": "adder8",
     "clock": "clk", "reset": "rst", "reset_active": 1,      # optional (sequential designs)
     "cycles": 32, "segments": 8,                             # optional: the stimulus
     "reset_rate": 0.025, "long_cycles": 0}                   # optional

``cycles`` per segment (each starts with a reset), ``segments``, ``reset_rate`` (the chance of a
reset pulse in each later cycle; 0: none, so a segment runs ``cycles`` cycles from one reset)
and ``long_cycles`` (one more segment that long, never reset after its start) size the hidden
stimulus: a counter wrong only after 300 cycles needs a row with ``"cycles": 500,
"reset_rate": 0`` (or ``"long_cycles": 500``); at most 20000 cycles in all.

The header is an ANSI port list with numeric ranges (``input [7:0] a``, ``output reg y``;
a direction carries over to the names after it). Every row is checked in the sandbox before it
becomes a task: the reference must compile and pass against itself, and an empty module body
(every output floating) must fail; otherwise the import stops with an error naming the file,
the row and the field, and writes nothing. Ids become ``verilog-rows/<id>``.

>>> parse_header("module m(input clk, input [3:0] a, b, output reg [4:0] y);", "m")
(Port(name='clk', direction='input', width=1), Port(name='a', direction='input', width=4), \
Port(name='b', direction='input', width=4), Port(name='y', direction='output', width=5))
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path

from referee.domains.kit import check_reference_and_empty
from referee.domains.verilog.spec import MAX_CYCLES, Port, check_control, port_list
from referee.domains.verilog.task import verilog_task
from referee.domains.verilog.verifier import VerilogVerifier
from referee.errors import TaskError
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.model import Provenance, Task

__all__ = ["check_row", "parse_header", "verilog_rows"]

_HEADER = re.compile(r"^\s*module\s+([A-Za-z_]\w*)\s*\((.*)\)\s*;?\s*$", re.S)
_ITEM = re.compile(
    r"^(?:(input|output|inout)\s+)?(?:(?:wire|reg|logic)\s+)?(?:signed\s+)?"
    r"(?:\[\s*(\d+)\s*:\s*(\d+)\s*\]\s*)?([A-Za-z_]\w*)$"
)


def parse_header(header: str, top: str) -> tuple[Port, ...]:
    """The ports of an ANSI module header; a ``ValueError`` saying what is wrong."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", header, flags=re.S)
    m = _HEADER.match(text)
    if m is None:
        raise ValueError("expected 'module NAME(port, port, ...);' with ANSI port declarations")
    if m.group(1) != top:
        raise ValueError(f"the header declares module {m.group(1)!r}, not top {top!r}")
    ports: list[Port] = []
    direction, width = "", 1
    for raw in m.group(2).split(","):
        item = " ".join(raw.split())
        im = _ITEM.match(item)
        if im is None:
            raise ValueError(
                f"cannot read port {item!r} (use numeric ranges: 'input [7:0] a'; "
                "parameters are not supported)"
            )
        if im.group(1) == "inout":
            raise ValueError(f"port {im.group(4)!r} is inout; only input and output are judged")
        if im.group(1):
            direction, width = im.group(1), 1
        elif not direction:
            raise ValueError(f"port {im.group(4)!r} has no direction")
        if im.group(2) is not None:
            width = abs(int(im.group(2)) - int(im.group(3))) + 1
        elif im.group(1):
            width = 1
        ports.append(Port(im.group(4), direction, width))
    return tuple(ports)


def _row_task(row: Row, split: str) -> Task:
    rid = row.get("id", (str, int))
    top = row.get("top", str)
    header = row.get("module_header", str)
    try:
        ports = parse_header(header, top)
    except ValueError as e:
        raise row.error("module_header", str(e)) from None
    try:
        port_list([{"name": p.name, "direction": p.direction, "width": p.width} for p in ports], "")
    except TaskError as e:
        raise row.error("module_header", str(e).removeprefix(": ")) from None
    clock, reset = row.get("clock", str, None), row.get("reset", str, None)
    if reset is not None and clock is None:
        raise row.error("reset", "a reset port needs a clock port (give 'clock')")
    for field, named_reset in (("clock", None), ("reset", reset)):
        try:
            check_control(ports, clock, named_reset, "")
        except TaskError as e:
            raise row.error(field, str(e).removeprefix(": ")) from None
    active = row.get("reset_active", int, 1)
    if active not in (0, 1):
        raise row.error("reset_active", "must be 1 (active high) or 0 (active low)")
    cycles = row.get("cycles", int, 32 if clock else 16)
    segments = row.get("segments", int, 8)
    long_cycles = row.get("long_cycles", int, 0)
    for field, value, lo, hi in (
        ("cycles", cycles, 1, MAX_CYCLES),
        ("segments", segments, 1, 64),
        ("long_cycles", long_cycles, 0, MAX_CYCLES),
    ):
        if not lo <= value <= hi:
            raise row.error(field, f"must be in {lo}..{hi}")
    if segments * cycles + long_cycles > MAX_CYCLES:
        raise row.error("cycles", f"segments x cycles + long_cycles must be at most {MAX_CYCLES}")
    reset_rate = row.get("reset_rate", (int, float), 0.025)
    if isinstance(reset_rate, bool) or not 0 <= reset_rate <= 1:
        raise row.error("reset_rate", "must be a number in [0, 1] (0: no reset after the start)")
    reference = row.get("reference", str)
    if not re.search(rf"\bmodule\s+{re.escape(top)}\b", reference):
        raise row.error("reference", f"must declare the module {top!r}")
    seed = int.from_bytes(hashlib.sha256(f"verilog-rows:{rid}".encode()).digest()[:6], "big")
    return verilog_task(
        name=f"verilog-rows/{rid}",
        top=top,
        description=row.get("description", str),
        ports=ports,
        reference=reference,
        seed=seed,
        clock=clock,
        reset=reset,
        reset_active=active,
        segments=segments,
        cycles=cycles,
        reset_rate=float(reset_rate),
        long_cycles=long_cycles,
        provenance=Provenance(source="verilog-rows", unit=f"verilog-rows:{rid}"),
        split=split,
        timing=False,
    )


def verilog_rows(
    split: str, path: str | Path, on_bad_row: OnBadRow | None = None
) -> Iterator[Task]:
    """The tasks of a ``verilog-rows`` file, each checked in the sandbox (see the module
    docstring); a :class:`TaskError` naming file, row and field for the first bad row (each
    bad row given to ``on_bad_row`` and skipped, with one)."""
    verifier: VerilogVerifier | None = None  # made at the first well-formed row
    try:
        for row in iter_rows(path, on_bad_row):
            with skipping(on_bad_row):
                task = _row_task(row, split)
                verifier = verifier or VerilogVerifier()
                check_row(verifier, row, task)
                yield task
    finally:
        if verifier is not None:
            verifier.close()


def check_row(verifier: VerilogVerifier, row: Row, task: Task) -> None:
    """Refuse ``row`` (a :class:`~referee.tasks.imports.rows.RowError` on its ``reference``)
    unless its reference passes against itself and an empty module fails, in the sandbox."""
    check_reference_and_empty(
        row,
        verifier.verify,
        task,
        empty=f"{task.payload['module_header']}\nendmodule\n",
        reference_fails="the reference does not pass against itself",
        empty_passes="an empty module passes: the outputs never change under the stimulus, so "
        "nothing would be tested",
    )
