"""Building a verilog task: the prompt the candidate reads and the data the grader keeps.

>>> from referee.domains.verilog.spec import Port
>>> t = verilog_task(name="demo/inv-v1", top="inv", description="y is the inverse of a.",
...                  ports=[Port("a", "input", 1), Port("y", "output", 1)],
...                  reference="module inv(input a, output y); assign y = ~a; endmodule",
...                  seed=7)
>>> t.kind.value, t.payload["module_header"]
('verilog', 'module inv(input a, output y);')
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.domains.verilog.spec import Port
from referee.tasks.model import Difficulty, Provenance, Task

__all__ = ["RULES", "module_header", "verilog_task"]

#: What every prompt says about the answer, so that a rejection is never a surprise.
RULES = (
    "Answer with the complete Verilog module in one ```verilog fenced block (helper modules "
    "may follow it in the same block). The module is simulated cycle by cycle against a hidden "
    "reference. Write synthesizable logic only: no system tasks or functions except $signed, "
    "$unsigned, $clog2 and $bits (no $display or $finish), no hierarchical references, no "
    "`include or `define, no packages or interfaces."
)


def module_header(top: str, ports: Sequence[Port]) -> str:
    """The ANSI module header, e.g. ``module inv(input a, output y);``."""
    return f"module {top}({', '.join(p.declaration() for p in ports)});"


def _timing(clock: str | None, reset: str | None, reset_active: int, reset_sync: bool) -> str:
    if clock is None:
        return "The module is purely combinational."
    text = f"All registers change on the rising edge of `{clock}`."
    if reset is not None:
        level = "high" if reset_active else "low"
        kind = "synchronous" if reset_sync else "asynchronous"
        text += f" `{reset}` is an active-{level}, {kind} reset."
    return text


def verilog_task(
    *,
    name: str | None,
    top: str,
    description: str,
    ports: Sequence[Port],
    reference: str,
    seed: int,
    clock: str | None = None,
    reset: str | None = None,
    reset_active: int = 1,
    reset_sync: bool = True,
    segments: int = 8,
    cycles: int = 32,
    reset_cycles: int = 2,
    reset_rate: float = 0.025,
    bias: dict[str, float] | None = None,
    long_cycles: int = 0,
    motifs: dict[str, list[str]] | None = None,
    difficulty: float | None = None,
    features: dict[str, float] | None = None,
    provenance: Provenance | None = None,
    split: str = "train",
    timing: bool = True,
    header: str | None = None,
) -> Task:
    """A verilog task. ``timing`` adds a sentence on the clock and reset to the description
    (imports whose description already says it pass False). ``header`` is the module header as
    a source wrote it (its ranges such as ``[3:1]``, ``output reg``), shown to the candidate
    instead of one made from ``ports`` (which must be the ports it declares)."""
    header = header.strip() if header is not None else module_header(top, ports)
    text = description.strip()
    if timing:
        text += " " + _timing(clock, reset, reset_active, reset_sync)
    prompt = f"Design the Verilog module `{top}`.\n\n{text}\n\nInterface:\n{header}\n\n{RULES}"
    payload: dict[str, Any] = {
        "top": top,
        "description": text,
        "module_header": header,
        "ports": [{"name": p.name, "direction": p.direction, "width": p.width} for p in ports],
        "clock": clock,
        "reset": reset,
        "reset_active": reset_active,
    }
    hidden = {
        "reference": reference,
        "stimulus": {
            "seed": seed,
            "segments": segments,
            "cycles": cycles,
            "reset_cycles": reset_cycles if reset is not None else 0,
            "reset_rate": reset_rate,
            "bias": dict(bias or {}),
            "long_cycles": long_cycles,
            "motifs": dict(motifs or {}),
        },
    }
    return Task.create(
        name=name,
        prompt=prompt,
        domain="verilog",
        kind="verilog",
        answer_format="code",
        payload=payload,
        hidden=hidden,
        difficulty=Difficulty(estimate=difficulty, features=features or {}),
        provenance=provenance or Provenance(source="verilog"),
        split=split,
    )
