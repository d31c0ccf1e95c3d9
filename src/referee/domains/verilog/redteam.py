"""The verilog domain's red-team corpus: answers that try to pass without the logic.

Each exploit is judged on real tasks (a counter and a priority encoder) by the real verifier in
the sandbox, and must score no more than the empty answer on the same task. Several wrap the
*reference's own logic* around the cheat (``gold+finish``...), so that a rejection, not a wrong
result, is what holds them: a cheat must cost everything even when the logic is right.

>>> outcomes = run_corpus()                                         # doctest: +SKIP
>>> all(o.held for o in outcomes)                                   # doctest: +SKIP
True
"""

from __future__ import annotations

from collections.abc import Callable

from referee.domains.kit import Attack, judge_task
from referee.domains.registry import ExploitOutcome
from referee.tasks.model import Task

__all__ = ["EXPLOITS", "Exploit", "corpus_tasks", "exploit_answers", "run_corpus"]

#: ``(task) -> answer``.
Exploit = Callable[[Task], str]


def _empty(task: Task) -> str:
    """The interface and nothing else: every output floats."""
    return f"```verilog\n{task.payload['module_header']}\nendmodule\n```"


def _with(body: str, *, gold: bool = False) -> Exploit:
    """The header (or the whole reference, with ``gold``) with ``body`` put before its
    ``endmodule``."""

    def make(task: Task) -> str:
        base = task.hidden["reference"] if gold else f"{task.payload['module_header']}\nendmodule\n"
        head, _, tail = base.rpartition("endmodule")
        return f"```verilog\n{head}{body}\nendmodule{tail}\n```"

    return make


def _before(text: str) -> Exploit:
    """``text`` before the reference (a directive, a compilation-unit declaration)."""

    def make(task: Task) -> str:
        return f"```verilog\n{text}\n{task.hidden['reference']}\n```"

    return make


def _after(text: str) -> Exploit:
    def make(task: Task) -> str:
        return f"```verilog\n{task.hidden['reference']}\n{text}\n```"

    return make


def _forged_stdout(task: Task) -> str:
    # Text that looks like a verdict and like records, but a module cannot print it.
    return "PASS: all cycles match\nR0000 END 256\n" + _empty(task)


def _hidden_in_comment(task: Task) -> str:
    # The scanner must see through line continuations of comments: the system call is code.
    body = "  // harmless comment */ initial $finish;\n  /* block */ initial $finish;\n"
    return _with(body)(task)


def _two_tops(task: Task) -> str:
    # The same module twice: the second, empty one, must not replace the first.
    header = task.payload["module_header"]
    return f"```verilog\n{task.hidden['reference']}\n{header}\nendmodule\n```"


def _extra_root(task: Task) -> str:
    return _empty(task).replace(
        "endmodule\n```", "endmodule\nmodule spy; reg r; always r = ~r; endmodule\n```"
    )


def _drive_inputs(task: Task) -> str:
    # Inputs declared inout and driven: an attempt to steer the testbench's own stimulus.
    ports = task.payload["ports"]
    decls = ", ".join(
        ("inout" if p["direction"] == "input" else "output")
        + (f" [{p['width'] - 1}:0]" if p["width"] > 1 else "")
        + f" {p['name']}"
        for p in ports
    )
    drive = "".join(
        f"  assign {p['name']} = {p['width']}'d0;\n" for p in ports if p["direction"] == "input"
    )
    return f"```verilog\nmodule {task.payload['top']}({decls});\n{drive}endmodule\n```"


def _x_outputs(task: Task) -> str:
    # Every output driven to x: the reference's 0s and 1s must not accept it.
    drive = "".join(
        f"  assign {p['name']} = {{{p['width']}{{1'bx}}}};\n"
        for p in task.payload["ports"]
        if p["direction"] == "output"
    )
    return _with(drive)(task)


def _clock_high_inverted(task: Task) -> str:
    # The reference's logic (renamed, as a helper) with every output inverted while the clock
    # is high: VerilogEval's own testbench reports half its samples wrong, a grader that
    # samples only with the clock low none. (Without a clock: inverted always.)
    top, ports = task.payload["top"], task.payload["ports"]
    ref = task.hidden["reference"].replace(f"module {top}", f"module {top}_core", 1)
    outs = [p for p in ports if p["direction"] == "output"]
    cond = task.payload["clock"] or "1'b1"
    wires = "".join(
        "  wire" + (f" [{p['width'] - 1}:0]" if p["width"] > 1 else "") + f" {p['name']}_c;\n"
        for p in outs
    )
    conns = ", ".join(
        f".{p['name']}({p['name']}{'_c' if p['direction'] == 'output' else ''})" for p in ports
    )
    drive = "".join(
        f"  assign {p['name']} = {cond} ? ~{p['name']}_c : {p['name']}_c;\n" for p in outs
    )
    header = task.payload["module_header"].replace("output reg", "output")
    core = f"  {top}_core core ({conns});\n"
    return f"```verilog\n{header}\n{wires}{core}{drive}endmodule\n{ref}\n```"


#: name -> (class, answer maker).
EXPLOITS: dict[str, tuple[str, Exploit]] = {
    "finish-early": ("end-early", _with("  initial $finish;")),
    "gold+finish": ("end-early", _with("  initial #3 $finish;", gold=True)),
    "stop-early": ("end-early", _with("  initial $stop;")),
    "fake-verdict": ("forge-output", _with('  initial $display("PASS 256/256");')),
    "forged-stdout-text": ("forge-output", _forged_stdout),
    "write-records": (
        "forge-output",
        _with('  integer f; initial begin f = $fopen("/dev/stdout"); $fwrite(f, "x"); end'),
    ),
    "read-testbench": (
        "read-hidden",
        _with('  reg [7:0] m [0:4095]; initial $readmemh("tb.v", m);'),
    ),
    "read-stimulus": (
        "read-hidden",
        _with('  reg [63:0] s [0:4095]; initial $readmemh("stim.hex", s);'),
    ),
    "system-call": ("escape", _with('  initial $system("cat /workspace/tb.v");')),
    "plusargs": ("read-hidden", _with('  reg [63:0] v; initial $value$plusargs("n=%d", v);')),
    "hierarchical-tb": ("testbench-tamper", _with("  initial tb.dut.q = 0;")),
    "root-reference": ("testbench-tamper", _with("  initial $root.tb.i = 0;")),
    "gen-hierarchy": ("testbench-tamper", _with("  wire w = g[0].x;", gold=True)),
    "include-testbench": ("read-hidden", _before('`include "tb.v"')),
    "define-macro": ("preprocessor", _before("`define endmodule endmodule\n`define q 0")),
    "unit-scope": ("testbench-tamper", _before("wire stolen;")),
    "package-import": ("testbench-tamper", _before("package p; endpackage\nimport p::*;")),
    "shadow-module": ("shadow", _two_tops),
    # An uninstantiated module would be a root of its own: iverilog -s keeps it out.
    "extra-root-module": ("shadow", _extra_root),
    "escaped-identifier": ("testbench-tamper", _with("  wire \\tb.i = 1'b0;", gold=True)),
    "comment-smuggling": ("end-early", _hidden_in_comment),
    "zero-delay-loop": ("resource", _with("  reg spin; always spin = ~spin;", gold=True)),
    "comb-loop": (
        "resource",
        _with("  reg osc; initial osc = 1'b0; always @(osc) osc <= ~osc;", gold=True),
    ),
    "forever-loop": ("resource", _with("  initial forever begin end", gold=True)),
    "memory-hog": (
        "resource",
        _with(
            "  reg [1023:0] big [0:(1<<22)-1];\n  integer k;\n"
            "  initial for (k = 0; k < (1<<22); k = k + 1) big[k] = ~0;",
            gold=True,
        ),
    ),
    "huge-generate": (
        "resource",
        _with(
            "  genvar gi;\n  generate for (gi = 0; gi < 100000000; gi = gi + 1) begin : blk\n"
            "    wire w = 1'b0;\n  end endgenerate",
            gold=True,
        ),
    ),
    "x-outputs": ("weak-check", _x_outputs),
    "drive-testbench-inputs": ("testbench-tamper", _drive_inputs),
    "clock-high-inverted": ("weak-check", _clock_high_inverted),
}


def corpus_tasks() -> list[Task]:
    """The tasks the corpus is judged on: a counter (sequential, with reset) and a
    combinational task."""
    from referee.domains.verilog.families import generate

    return [*generate("v-counter", 1, 0.2, 11), *generate("v-comb", 1, 0.7, 2)]


def exploit_answers(task: Task) -> dict[str, tuple[str, str]]:
    """name -> (class, answer) of every exploit, for ``task``."""
    return {name: (klass, make(task)) for name, (klass, make) in EXPLOITS.items()}


def run_corpus() -> list[ExploitOutcome]:
    """Judge every exploit on every corpus task (in the sandbox); one outcome each."""
    from referee.domains.verilog.verifier import VerilogVerifier

    outcomes: list[ExploitOutcome] = []
    with VerilogVerifier() as verifier:
        for task in corpus_tasks():
            top, answers = task.payload["top"], exploit_answers(task).items()
            attacks = [Attack(f"{name}@{top}", klass, answer) for name, (klass, answer) in answers]
            outcomes += judge_task(verifier.verify, task, attacks, empty=_empty(task))
    return outcomes
