"""Import source ``verilogeval``: VerilogEval's problems, read from the installed
``nvidia-bigcode-eval`` package (``referee tasks import verilogeval --out tasks.jsonl``).

VerilogEval (Liu et al., ICCAD 2023) has two sets, *human* (156 problems, descriptions written
by people) and *machine* (143, descriptions written by a model); ``--subset human`` or
``machine`` takes one (default: both). Its files are
``bigcode_eval/tasks/datasets/verilog/VerilogEval_{Human,Machine}.jsonl`` (``task_id``,
``prompt``: the module header, ``canonical_solution``: the body, ``test``: the benchmark's
own testbench) and ``VerilogDescription_*.jsonl`` (``detail_description``).

Each problem becomes a ``verilog`` task (:func:`~.task.verilog_task`) judged by referee's own
simulation against the canonical solution, not by the benchmark's testbench (which decides
by parsing the simulation's stdout for ``Mismatches: 0``, a line a candidate can print):

* the prompt is the description, the benchmark's sentence on clocks ("Assume that signals are
  positive clock/clk edge triggered unless otherwise stated.") and the header as written
  (ranges such as ``[3:1]`` and ``output reg`` kept);
* the reference is the header followed by the canonical body; the top module is
  ``top_module``;
* a 1-bit input ``clk`` is the clock; ``reset``/``areset`` (active high) or
  ``resetn``/``aresetn`` (active low) is the reset, pulsed at each segment's start and at
  random (rate 0.05) after it;
* the stimulus: 8 segments of 64 cycles and, for clocked designs, one segment of 1000 cycles
  with no reset after its start (VerilogEval's testbenches run a few hundred to a thousand
  cycles: an error that shows only after a long run is reached); in a clocked design's odd
  segments and the long one, each 1-bit data input is 1 with chance 0.1 (a load, an enable,
  a bump held off for a while), uniform in the others;
* every problem is checked in the sandbox before it becomes a task (its reference must pass
  against itself, an empty module must fail: :func:`.imports.check_row`); a problem that
  fails is refused with a one-line reason naming the package file and line (``--skip-bad``
  reports it and goes on).

Ids are ``verilogeval/<subset>/<task_id>``; the unit held out whole is the problem (a human
and a machine description of one design share it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from referee.domains.verilog.imports import check_row, parse_header
from referee.domains.verilog.spec import Port, port_list
from referee.domains.verilog.task import verilog_task
from referee.domains.verilog.verifier import VerilogVerifier
from referee.errors import ConfigError, TaskError
from referee.tasks.imports.packaged import PackagedBenchmark
from referee.tasks.imports.rows import OnBadRow, Row, skipping
from referee.tasks.model import Provenance, Task

__all__ = ["BENCHMARK", "SUBSETS", "verilogeval_rows", "verilogeval_tasks"]

BENCHMARK = PackagedBenchmark("verilogeval", "nvidia-bigcode-eval", ">=26.3,<27", "26.3")
#: The sets and their files' name part.
SUBSETS = {"human": "Human", "machine": "Machine"}
_DATA = "bigcode_eval/tasks/datasets/verilog"
#: The benchmark's own sentence on clocks (bigcode_eval/tasks/verilog.py, get_prompt).
CLOCK_NOTE = "Assume that signals are positive clock/clk edge triggered unless otherwise stated."
TOP = "top_module"
#: Reset port names and their active level.
RESETS = {"reset": 1, "areset": 1, "resetn": 0, "aresetn": 0}
SEGMENTS, CYCLES, LONG_CYCLES, RESET_RATE = 8, 64, 1000, 0.05
#: The chance of a 1 on each 1-bit data input of a clocked design in the odd segments and the
#: long one (the even ones stay uniform): a load, an enable, a bump held off lets a design run
#: far from its last event (a lemming falls for more than 20 cycles).
QUIET_BIAS = 0.1


def _subsets(subset: str | None) -> list[str]:
    if subset is None:
        return list(SUBSETS)
    if subset not in SUBSETS:
        raise ConfigError(f"verilogeval has the subsets human and machine, not {subset!r}")
    return [subset]


def verilogeval_rows(subset: str) -> Iterator[Row]:
    """The problems of one set as rows (``task_id``, ``prompt``, ``canonical_solution``,
    ``test``, ``detail_description``), each naming its package file and line."""
    name = SUBSETS[subset]
    problems = BENCHMARK.file(f"{_DATA}/VerilogEval_{name}.jsonl")
    described = BENCHMARK.file(f"{_DATA}/VerilogDescription_{name}.jsonl")
    descriptions: dict[str, str] = {}
    for line in described.read_text(encoding="utf-8").splitlines():
        if line.strip():
            item = json.loads(line)
            descriptions[str(item.get("task_id"))] = str(item.get("detail_description", ""))
    for n, line in enumerate(problems.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            data: dict[str, Any] = json.loads(line)
            data["detail_description"] = descriptions.get(str(data.get("task_id")))
            yield Row(str(problems), n, data)


def _control(ports: tuple[Port, ...]) -> tuple[str | None, str | None, int]:
    inputs = {p.name: p for p in ports if p.direction == "input" and p.width == 1}
    clock = "clk" if "clk" in inputs else None
    if clock is None:
        return None, None, 1
    for name, active in RESETS.items():
        if name in inputs:
            return clock, name, active
    return clock, None, 1


def row_task(row: Row, subset: str, split: str = "heldout") -> Task:
    """The task of one VerilogEval problem (its fields checked, not yet simulated)."""
    rid = row.get("task_id", str)
    header = row.get("prompt", str)
    body = row.get("canonical_solution", str)
    description = row.get("detail_description", str)
    try:
        ports = parse_header(header, TOP)
    except ValueError as e:
        raise row.error("prompt", str(e)) from None
    try:
        port_list([{"name": p.name, "direction": p.direction, "width": p.width} for p in ports], "")
    except TaskError as e:
        raise row.error("prompt", str(e).removeprefix(": ")) from None
    clock, reset, active = _control(ports)
    quiet = {
        p.name: QUIET_BIAS
        for p in ports
        if clock is not None and p.direction == "input" and p.width == 1
        and p.name not in (clock, reset)
    }  # fmt: skip
    seed = int.from_bytes(hashlib.sha256(f"verilogeval:{rid}".encode()).digest()[:6], "big")
    return verilog_task(
        name=f"verilogeval/{subset}/{rid}",
        top=TOP,
        description=f"{description.strip()}\n\n{CLOCK_NOTE}",
        ports=ports,
        header=header,
        reference=f"{header.rstrip()}\n{body}",
        seed=seed,
        clock=clock,
        reset=reset,
        reset_active=active,
        segments=SEGMENTS,
        cycles=CYCLES,
        reset_rate=RESET_RATE if reset is not None else 0.0,
        long_cycles=LONG_CYCLES if clock is not None else 0,
        bias=quiet,
        provenance=Provenance(
            source="verilogeval",
            unit=f"verilogeval:{rid}",
            versions={BENCHMARK.distribution: BENCHMARK.version()},
        ),
        split=split,
        timing=False,
    )


def verilogeval_tasks(
    split: str, subset: str | None = None, on_bad_row: OnBadRow | None = None
) -> Iterator[Task]:
    """The VerilogEval tasks of ``subset`` (default: both), each checked in the sandbox; the
    first problem that fails its check stops the import (a :class:`RowError` naming the
    package file, the line and the field) unless ``on_bad_row`` takes it and goes on."""
    chosen = _subsets(subset)
    verifier: VerilogVerifier | None = None
    try:
        for name in chosen:
            for row in verilogeval_rows(name):
                with skipping(on_bad_row):
                    task = row_task(row, name, split)
                    verifier = verifier or VerilogVerifier()
                    check_row(verifier, row, task)
                    yield task
    finally:
        if verifier is not None:
            verifier.close()
