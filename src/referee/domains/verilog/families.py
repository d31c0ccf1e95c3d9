"""The verilog task families: seeded, reproducible, with a difficulty knob in [0, 1].

========== ======================================================== ==========================
family     designs                                                  difficulty grows
========== ======================================================== ==========================
v-comb     multiplexer, decoder, priority encoder, parity            inputs, width
v-arith    adder, subtractor, multiplier (unsigned/signed), ALU      width, ALU operations
v-counter  up, up/down, modulo-M counters, with enable and load      width, load, up/down
v-shift    shift registers (left/right, universal), Fibonacci LFSR   width, modes
v-fsm      sequence detector (overlapping or not), traffic light     pattern length, durations,
                                                                     pedestrian input
========== ======================================================== ==========================

Task ``i`` of ``generate(count, difficulty, seed)`` uses seed ``seed + i``; with no difficulty
the tasks spread over 0, 0.1, ..., 1. ``provenance.unit`` is the design's structure
(``verilog:v-counter/counter-updown``), which a held-out split keeps whole. Reset styles
(synchronous or asynchronous, active high or low) are drawn per task.

>>> [t.id for t in generate("v-arith", 2, 0.5, 3)]                      # doctest: +SKIP
['verilog/v-arith-d50-s3-v1', 'verilog/v-arith-d50-s4-v1']
"""

from __future__ import annotations

import random

from referee.domains.verilog import combinational, sequential
from referee.domains.verilog.task import verilog_task
from referee.errors import ConfigError
from referee.tasks.model import Provenance, Task

#: The designs of each family.
DESIGNS = {
    "v-comb": (
        combinational.mux,
        combinational.decoder,
        combinational.priority_encoder,
        combinational.parity,
    ),
    "v-arith": (
        combinational.adder,
        combinational.subtractor,
        combinational.multiplier,
        combinational.alu,
    ),
    "v-counter": (sequential.counter,),
    "v-shift": (sequential.shift_register, sequential.lfsr),
    "v-fsm": (sequential.sequence_detector, sequential.traffic_light),
}

__all__ = [
    "DESIGNS",
    "arith",
    "comb",
    "counter",
    "fsm",
    "generate",
    "shift",
]


def generate(family: str, count: int, difficulty: float | None, seed: int) -> list[Task]:
    """``count`` tasks of ``family`` (see the module docstring)."""
    if family not in DESIGNS:
        raise ConfigError(f"unknown verilog family {family!r}; use one of {', '.join(DESIGNS)}")
    tasks = []
    for i in range(count):
        s = seed + i
        d = difficulty if difficulty is not None else (i % 11) / 10
        rng = random.Random(f"{family}:{s}:{d:.3f}")
        design = rng.choice(DESIGNS[family])(rng, d)
        sequential = design.clock is not None
        # Longer runs for state machines: their behaviour shows over many cycles.
        cycles = 48 if family == "v-fsm" else 32 if sequential else 16
        tasks.append(
            verilog_task(
                name=f"verilog/{family}-d{round(d * 100)}-s{s}-v1",
                top=design.top,
                description=design.description,
                ports=design.ports,
                reference=design.reference,
                seed=rng.getrandbits(48),
                clock=design.clock,
                reset=design.reset.name if design.reset else None,
                reset_active=design.reset.active if design.reset else 1,
                reset_sync=design.reset.sync if design.reset else True,
                segments=8,
                cycles=cycles,
                **design.stimulus,  # type: ignore[arg-type]
                difficulty=d,
                features=dict(design.features),
                provenance=Provenance(
                    source="verilog",
                    generator=family,
                    seed=s,
                    unit=f"verilog:{family}/{design.variant}",
                ),
            )
        )
    return tasks


def comb(count: int, difficulty: float | None, seed: int) -> list[Task]:
    """The ``v-comb`` family."""
    return generate("v-comb", count, difficulty, seed)


def arith(count: int, difficulty: float | None, seed: int) -> list[Task]:
    """The ``v-arith`` family."""
    return generate("v-arith", count, difficulty, seed)


def counter(count: int, difficulty: float | None, seed: int) -> list[Task]:
    """The ``v-counter`` family."""
    return generate("v-counter", count, difficulty, seed)


def shift(count: int, difficulty: float | None, seed: int) -> list[Task]:
    """The ``v-shift`` family."""
    return generate("v-shift", count, difficulty, seed)


def fsm(count: int, difficulty: float | None, seed: int) -> list[Task]:
    """The ``v-fsm`` family."""
    return generate("v-fsm", count, difficulty, seed)
