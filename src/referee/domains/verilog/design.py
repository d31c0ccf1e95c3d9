"""What a design is: a description, a port list, a reference module, and the stimulus it wants;
and the small helpers the design modules (:mod:`.combinational`, :mod:`.sequential`) share.

A design function takes a seeded ``random.Random`` and a difficulty in [0, 1] (wider buses,
more operations, longer patterns, more states as it grows) and returns a :class:`Design`.
Sequential designs draw their reset style (synchronous or asynchronous, active high ``rst`` or
active low ``rst_n``) from the same generator, so a family exercises both.

>>> header("inv", (Port("a", "input", 1), Port("y", "output", 1)), regs=("y",)).strip()
'module inv(input a, output reg y);'
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from referee.domains.verilog.spec import Port

__all__ = ["Design", "Reset", "bits", "clog2", "draw_reset", "header", "scale", "seq_ports"]


@dataclass(frozen=True)
class Reset:
    """A reset style: the port, its active level, and whether it is synchronous."""

    name: str
    active: int
    sync: bool

    @property
    def sensitivity(self) -> str:
        """What the always block's event list adds for it (nothing when synchronous)."""
        if self.sync:
            return ""
        return f" or {'posedge' if self.active else 'negedge'} {self.name}"

    @property
    def asserted(self) -> str:
        return self.name if self.active else f"!{self.name}"


@dataclass(frozen=True)
class Design:
    variant: str
    top: str
    description: str
    ports: tuple[Port, ...]
    reference: str
    clock: str | None = None
    reset: Reset | None = None
    features: dict[str, float] = field(default_factory=dict)
    #: Stimulus settings of the design (``bias``, ``long_cycles``, ``reset_rate``: see
    #: :class:`~referee.domains.verilog.spec.Stimulus`).
    stimulus: dict[str, object] = field(default_factory=dict)


def scale(lo: int, hi: int, d: float) -> int:
    return lo + round(d * (hi - lo))


def draw_reset(rng: random.Random) -> Reset:
    active = rng.random() < 0.6
    return Reset("rst" if active else "rst_n", int(active), sync=rng.random() < 0.5)


def bits(w: int) -> str:
    return f"[{w - 1}:0] " if w > 1 else ""


def clog2(n: int) -> int:
    return max(1, (n - 1).bit_length())


def seq_ports(reset: Reset, *rest: Port) -> tuple[Port, ...]:
    return (Port("clk", "input", 1), Port(reset.name, "input", 1), *rest)


def header(top: str, ports: tuple[Port, ...], regs: tuple[str, ...] = ()) -> str:
    decls = []
    for p in ports:
        kind = f"{p.direction} reg" if p.name in regs else p.direction
        decls.append(f"{kind} {bits(p.width)}{p.name}".replace("  ", " "))
    return f"module {top}({', '.join(decls)});\n"
