"""What a verilog task holds, read and checked once: ports, clock, reset, stimulus plan.

A task of kind ``verilog`` keeps in ``payload`` what the candidate is told (``top``, the module's
name; ``module_header``, its port list as Verilog; ``ports``, the same as data; ``clock`` and
``reset``, the names of those ports or null; ``reset_active``, 1 or 0) and in ``hidden`` what
only the grader sees (``reference``, a complete module named ``top``; ``stimulus``, the plan of
the hidden stimulus: ``seed``, ``segments``, ``cycles`` per segment, ``reset_cycles``, and
optionally ``reset_rate`` (the chance of a reset pulse per cycle), ``bias`` (1-bit input ->
chance of a 1, in the odd segments and the long one) and ``long_cycles`` (one more segment
that long, with no reset after its start: a wide counter must wrap somewhere), ``motifs``
(1-bit input -> bit strings played on it after resets and at random points)).

>>> spec = VerilogSpec("t", "inv", (Port("a", "input", 1), Port("y", "output", 1)),
...                    None, None, 1, "module inv(input a, output y); assign y = ~a; endmodule",
...                    Stimulus(seed=1, segments=2, cycles=8, reset_cycles=0))
>>> [p.name for p in spec.data_inputs], spec.input_bits, spec.total_cycles
(['a'], 1, 16)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from referee.errors import TaskError
from referee.tasks.model import Task

__all__ = ["Port", "Stimulus", "VerilogSpec", "check_control", "port_list", "verilog_spec"]

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Bounds that keep one verification cheap (a wide bus or a long run is a task error). 1024
#: bits: VerilogEval's widest ports (a 256-to-1 multiplexer of 4-bit words, 512-cell automata).
MAX_WIDTH = 1024
MAX_CYCLES = 20_000


@dataclass(frozen=True)
class Port:
    """One port of the module: its name, ``input`` or ``output``, and its width in bits."""

    name: str
    direction: str
    width: int

    def declaration(self) -> str:
        """The port as it appears in an ANSI header, e.g. ``input [3:0] a``."""
        rng = f" [{self.width - 1}:0]" if self.width > 1 else ""
        return f"{self.direction}{rng} {self.name}"


@dataclass(frozen=True)
class Stimulus:
    """The hidden stimulus plan: ``segments`` runs of ``cycles`` cycles, each starting with
    ``reset_cycles`` cycles of reset (none without a reset port), inputs drawn from ``seed``."""

    seed: int
    segments: int = 8
    cycles: int = 32
    reset_cycles: int = 2
    reset_rate: float = 0.025
    bias: tuple[tuple[str, float], ...] = ()
    long_cycles: int = 0
    #: 1-bit input -> bit strings played on it now and then (after a reset, and at random
    #: points): a detector's pattern must occur, also right after a reset.
    motifs: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def bounds(self) -> list[tuple[int, int]]:
        """Each segment's (first cycle, end): the short ones, then the long one if any.

        >>> Stimulus(seed=0, segments=2, cycles=4, long_cycles=10).bounds()
        [(0, 4), (4, 8), (8, 18)]
        """
        out = [(k * self.cycles, (k + 1) * self.cycles) for k in range(self.segments)]
        if self.long_cycles:
            start = self.segments * self.cycles
            out.append((start, start + self.long_cycles))
        return out


@dataclass(frozen=True)
class VerilogSpec:
    task_id: str
    top: str
    ports: tuple[Port, ...]
    clock: str | None
    reset: str | None
    reset_active: int
    reference: str
    stimulus: Stimulus

    @property
    def inputs(self) -> list[Port]:
        return [p for p in self.ports if p.direction == "input"]

    @property
    def outputs(self) -> list[Port]:
        return [p for p in self.ports if p.direction == "output"]

    @property
    def data_inputs(self) -> list[Port]:
        """The inputs the stimulus drives (all but the clock), in port order."""
        return [p for p in self.inputs if p.name != self.clock]

    @property
    def input_bits(self) -> int:
        return sum(p.width for p in self.data_inputs)

    @property
    def total_cycles(self) -> int:
        return self.stimulus.segments * self.stimulus.cycles + self.stimulus.long_cycles


def port_list(ports: Any, where: str) -> tuple[Port, ...]:
    """``ports`` (a list of ``{"name", "direction", "width"}``) checked; a :class:`TaskError`
    naming ``where`` and the field otherwise."""
    if not isinstance(ports, list) or not ports:
        raise TaskError(f"{where}: 'ports' must be a non-empty list of {{name, direction, width}}")
    out: list[Port] = []
    for i, p in enumerate(ports):
        if not isinstance(p, dict):
            raise TaskError(f"{where}: ports[{i}] must be an object {{name, direction, width}}")
        name, direction, width = p.get("name"), p.get("direction"), p.get("width", 1)
        if not isinstance(name, str) or not _IDENT.match(name):
            raise TaskError(f"{where}: ports[{i}].name must be a Verilog identifier, got {name!r}")
        if direction not in ("input", "output"):
            raise TaskError(f"{where}: ports[{i}].direction must be 'input' or 'output'")
        if not isinstance(width, int) or isinstance(width, bool) or not 1 <= width <= MAX_WIDTH:
            raise TaskError(f"{where}: ports[{i}].width must be an integer in 1..{MAX_WIDTH}")
        out.append(Port(name, direction, width))
    names = [p.name for p in out]
    if len(set(names)) != len(names):
        raise TaskError(f"{where}: port names repeat: {names}")
    if not any(p.direction == "output" for p in out):
        raise TaskError(f"{where}: the module needs at least one output port to be judged")
    return tuple(out)


def _int(value: Any, what: str, where: str, lo: int, hi: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise TaskError(f"{where}: {what} must be an integer in {lo}..{hi}, got {value!r}")
    return value


def _rate(value: Any, what: str, where: str) -> float:
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value <= 1:
        raise TaskError(f"{where}: {what} must be a number in [0, 1], got {value!r}")
    return float(value)


def _bias(value: Any, ports: tuple[Port, ...], where: str) -> tuple[tuple[str, float], ...]:
    if not isinstance(value, dict):
        raise TaskError(f"{where}: hidden.stimulus.bias must map 1-bit inputs to chances")
    ones = {p.name for p in ports if p.direction == "input" and p.width == 1}
    for name in value:
        if name not in ones:
            raise TaskError(f"{where}: hidden.stimulus.bias names {name!r}, not a 1-bit input")
    return tuple(
        sorted((n, _rate(v, f"hidden.stimulus.bias.{n}", where)) for n, v in value.items())
    )


def _motifs(
    value: Any, ports: tuple[Port, ...], where: str
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    ones = {p.name for p in ports if p.direction == "input" and p.width == 1}
    ok = isinstance(value, dict) and all(
        name in ones
        and isinstance(bits, list)
        and all(isinstance(b, str) and b and set(b) <= {"0", "1"} for b in bits)
        for name, bits in value.items()
    )
    if not ok:
        raise TaskError(
            f"{where}: hidden.stimulus.motifs must map 1-bit inputs to lists of bit strings"
        )
    return tuple(sorted((name, tuple(bits)) for name, bits in value.items()))


def check_control(ports: tuple[Port, ...], clock: Any, reset: Any, where: str) -> None:
    """The clock and reset, when named, are 1-bit inputs of ``ports``."""
    by_name = {p.name: p for p in ports}
    for role, name in (("clock", clock), ("reset", reset)):
        if name is None:
            continue
        port = by_name.get(name) if isinstance(name, str) else None
        if port is None or port.direction != "input" or port.width != 1:
            raise TaskError(f"{where}: {role} {name!r} must name a 1-bit input port")
    if reset is not None and clock is None:
        raise TaskError(f"{where}: a reset port needs a clock port")


def verilog_spec(task: Task) -> VerilogSpec:
    """The spec of a verilog task; a :class:`TaskError` naming the task and field if broken."""
    where = f"task {task.id!r}"
    p, h = task.payload, task.hidden
    top = p.get("top")
    if not isinstance(top, str) or not _IDENT.match(top):
        raise TaskError(f"{where}: payload.top must be the module's name, got {top!r}")
    ports = port_list(p.get("ports"), f"{where} payload")
    clock, reset = p.get("clock"), p.get("reset")
    check_control(ports, clock, reset, f"{where} payload")
    active = p.get("reset_active", 1)
    if active not in (0, 1):
        raise TaskError(f"{where}: payload.reset_active must be 1 (active high) or 0 (active low)")
    reference = h.get("reference")
    if not isinstance(reference, str) or "module" not in reference:
        raise TaskError(f"{where}: hidden.reference must be the reference module's source")
    stim = h.get("stimulus")
    if not isinstance(stim, dict):
        raise TaskError(f"{where}: hidden.stimulus must be {{seed, segments, cycles}}")
    stimulus = Stimulus(
        seed=_int(stim.get("seed"), "hidden.stimulus.seed", where, 0, 2**63),
        segments=_int(stim.get("segments", 8), "hidden.stimulus.segments", where, 1, 256),
        cycles=_int(stim.get("cycles", 32), "hidden.stimulus.cycles", where, 1, MAX_CYCLES),
        reset_cycles=_int(
            stim.get("reset_cycles", 2), "hidden.stimulus.reset_cycles", where, 0, 16
        ),
        reset_rate=_rate(stim.get("reset_rate", 0.025), "hidden.stimulus.reset_rate", where),
        bias=_bias(stim.get("bias", {}), ports, where),
        long_cycles=_int(
            stim.get("long_cycles", 0), "hidden.stimulus.long_cycles", where, 0, MAX_CYCLES
        ),
    )
    stimulus = replace(stimulus, motifs=_motifs(stim.get("motifs", {}), ports, where))
    if stimulus.segments * stimulus.cycles + stimulus.long_cycles > MAX_CYCLES:
        raise TaskError(f"{where}: hidden.stimulus runs more than {MAX_CYCLES} cycles in all")
    return VerilogSpec(
        task_id=task.id,
        top=top,
        ports=ports,
        clock=clock,
        reset=reset,
        reset_active=int(active),
        reference=reference,
        stimulus=stimulus,
    )
