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

from typing import Any

from referee.domains.registry import lazy, register_corpus, register_family
from referee.envs.registry import register_env
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.tasks.sources import register_source
from referee.verify.dispatch import VerifierSetup, register_kind

__all__: list[str] = []

_FAMILIES = {
    "v-comb": ("comb", "combinational Verilog: multiplexer, decoder, priority encoder, parity"),
    "v-arith": ("arith", "Verilog arithmetic: adder, subtractor, multiplier, ALU"),
    "v-counter": ("counter", "Verilog counters: up, up/down, modulo-M, enable, load, resets"),
    "v-shift": ("shift", "Verilog shift registers (serial, universal) and LFSRs"),
    "v-fsm": ("fsm", "Verilog FSMs: sequence detector, traffic-light controller"),
}


def _verifier(setup: VerifierSetup) -> Any:
    # Icarus Verilog must be in the sandbox's view: a sandbox of the verifier's own.
    from referee.domains.verilog.verifier import VerilogVerifier

    return VerilogVerifier()


def _segments(task: Task) -> int:
    from referee.domains.verilog.verifier import count_segments

    return count_segments(task)


def register() -> None:
    """Hardware modules in Verilog, simulated against the reference under a testbench."""
    for _name, (_function, _description) in _FAMILIES.items():
        register_family(
            _name,
            lazy(f"referee.domains.verilog.families:{_function}"),
            domain="verilog",
            description=_description,
        )
    register_kind(TaskKind.VERILOG, _verifier, _segments)
    register_env("verilog", lazy("referee.domains.verilog.env:VerilogEnv"))
    register_source(
        "verilog-rows",
        lazy("referee.domains.verilog.imports:verilog_rows"),
        description="Verilog design rows (JSONL: id, description, module_header, reference, top)",
        reads_file=True,
        skips_bad_rows=True,
    )
    register_source(
        "verilogeval",
        lazy("referee.domains.verilog.verilogeval:verilogeval_tasks"),
        description="VerilogEval human+machine (the nvidia-bigcode-eval package's files)",
        options=("subset",),
        skips_bad_rows=True,
    )
    register_corpus("verilog", lazy("referee.domains.verilog.redteam:run_corpus"))
