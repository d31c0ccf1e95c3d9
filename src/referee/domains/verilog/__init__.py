"""The verilog domain: hardware modules designed from a description and a port list, judged by
simulating them (Icarus Verilog, in the sandbox) against a hidden reference, cycle by cycle.

Importing this package registers, lazily (nothing of it loads until used):

* the families ``v-comb``, ``v-arith``, ``v-counter``, ``v-shift``, ``v-fsm``
  (:mod:`.families`; ``referee tasks generate v-counter --count 4``);
* the verifier of :attr:`~referee.tasks.kinds.TaskKind.VERILOG` (:mod:`.verifier`);
* the environment ``verilog`` (:mod:`.env`: compile, simulate with your own testbench,
  submit);
* the import sources ``verilog-rows`` (:mod:`.imports`: JSONL rows with a reference module)
  and ``verilogeval`` (:mod:`.verilogeval`: VerilogEval, read from its package);
* the red-team corpus ``verilog`` (:mod:`.redteam`).

``docs/domains/verilog.md`` says how tasks are judged and what a candidate may not write.
"""

from __future__ import annotations

from referee.domains.kit import Domain, FamilyPart, Source
from referee.tasks.kinds import TaskKind

__all__ = ["DOMAIN", "register"]

#: Each family, the function of :mod:`.families` that makes it, and what it asks for.
_FAMILIES = {
    "v-comb": ("comb", "combinational Verilog: multiplexer, decoder, priority encoder, parity"),
    "v-arith": ("arith", "Verilog arithmetic: adder, subtractor, multiplier, ALU"),
    "v-counter": ("counter", "Verilog counters: up, up/down, modulo-M, enable, load, resets"),
    "v-shift": ("shift", "Verilog shift registers (serial, universal) and LFSRs"),
    "v-fsm": ("fsm", "Verilog FSMs: sequence detector, traffic-light controller"),
}

DOMAIN = Domain(
    "verilog",
    package=__name__,
    kind=TaskKind.VERILOG,
    families={
        name: FamilyPart(f"families:{function}", about)
        for name, (function, about) in _FAMILIES.items()
    },
    verifier="verifier:make_verifier",
    count_tests="verifier:count_segments",
    env="env:VerilogEnv",
    sources=(
        Source(
            "verilog-rows",
            "imports:verilog_rows",
            "Verilog design rows (JSONL: id, description, module_header, reference, top)",
        ),
        Source(
            "verilogeval",
            "verilogeval:verilogeval_tasks",
            "VerilogEval human+machine (the nvidia-bigcode-eval package's files)",
            reads_file=False,
            options=("subset",),
        ),
    ),
    corpus="redteam:run_corpus",
)


def register() -> None:
    """Hardware modules in Verilog, simulated against the reference under a testbench."""
    DOMAIN.register()
