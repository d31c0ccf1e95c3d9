"""Formal equivalence of a candidate with the reference: Yosys's SAT solver on a miter, in the
sandbox.

Both modules are read by Yosys (``read_verilog -sv``, ``prep -flatten``: helper modules are
inlined), renamed, and joined in a miter (``miter -equiv -make_outputs -ignore_gold_x``): its
``trigger`` output is 1 when any output differs (an ``x`` in the reference matches anything).
``sat -verify -prove trigger 0`` then looks for inputs that set it:

* a **combinational** design (no clock): one step, a proof over every input value; a design
  without a clock that still holds state (a latch) is left undecided (:data:`STATE_CELLS`);
* a **sequential** design: bounded model checking, ``depth`` steps (one a clock cycle) from
  registers at zero, the reset held for the stimulus's reset cycles and free afterwards (the
  solver may pulse it), outputs compared from the step after the reset; asynchronous resets
  are modelled as synchronous ones (``async2sync``), and the clock input is free in each step
  (its level when the outputs are read), so an output that reads the clock is caught.

A model found is a **counterexample**: the inputs of each step up to the first difference and
the outputs that differ there, which the verdict's feedback shows. No model is **proved**
(for a sequential design: no difference within ``depth`` cycles, not an unbounded proof).
Anything else (a construct Yosys cannot read, the solver's or the sandbox's time or memory
limit) is **inconclusive**, which decides nothing.

Yosys runs in the sandbox like the simulator (the candidate's source is untrusted; ``yosys``
is a Debian package under ``/usr``, which the sandbox's view binds), in a fresh workspace
holding the two sources and the script. The candidate has passed the static check before
(:mod:`.source`): no ``include``, no system task, so reading it reads nothing else.

>>> parse_setting("bmc:30"), parse_setting(True), parse_setting(False)
(30, 20, None)
"""

from __future__ import annotations

import re
import secrets
import shutil
import time
from dataclasses import dataclass
from typing import Any, Literal

from referee.domains.verilog.spec import VerilogSpec
from referee.errors import TaskError
from referee.sandbox import Limits, Sandbox

__all__ = [
    "DEFAULT_DEPTH",
    "FormalResult",
    "formal_script",
    "have_yosys",
    "parse_counterexample",
    "parse_setting",
    "prove",
]

#: Bounded model checking depth (clock cycles) of ``formal: true`` for a sequential design.
DEFAULT_DEPTH = 20
MAX_DEPTH = 200
#: The solver's own time limit (Yosys's ``sat -timeout``) and the sandbox's, in seconds.
SOLVER_TIMEOUT_S = 20
TIMEOUT_S = 30.0
MEMORY_MB = 1024
GOLD_FILE, GATE_FILE, SCRIPT_FILE, LOG_FILE = "gold.v", "design.v", "formal.ys", "sat.log"
#: Cells that hold state (latches, flip-flops), which a design without a clock must not have:
#: its one-step proof would leave what each copy holds free, and so find a counterexample to a
#: reference against itself (VerilogEval's ``circuit8``, a latch on ``clock``). Yosys's
#: ``select -assert-none`` on them fails, and the proof is inconclusive.
STATE_CELLS = "t:$*latch* t:$*dff* t:$*sr"
#: Steps of a counterexample shown (the last ones, up to the difference).
SHOWN_STEPS = 6

Status = Literal["proved", "counterexample", "inconclusive"]


@dataclass(frozen=True)
class FormalResult:
    """The check's outcome, what the model is told (``detail``), the depth (1: a
    combinational proof) and the wall seconds of the Yosys run."""

    status: Status
    detail: str
    depth: int
    seconds: float = 0.0


def have_yosys() -> bool:
    return shutil.which("yosys") is not None


def parse_setting(value: Any, where: str = "formal") -> int | None:
    """``false``/None: off; ``true``: on (bounded to :data:`DEFAULT_DEPTH` cycles for a
    sequential design); ``"bmc:N"``: on, bounded to N cycles. A :class:`TaskError` otherwise."""
    if value is None or value is False:
        return None
    if value is True:
        return DEFAULT_DEPTH
    if isinstance(value, str) and (m := re.fullmatch(r"bmc:(\d+)", value.strip())):
        depth = int(m.group(1))
        if 1 <= depth <= MAX_DEPTH:
            return depth
    raise TaskError(
        f"{where} must be true, false or 'bmc:N' (N cycles, 1..{MAX_DEPTH}), got {value!r}"
    )


def formal_script(spec: VerilogSpec, depth: int, nonce: str) -> str:
    """The Yosys script proving ``design.v``'s ``spec.top`` equivalent to ``gold.v``'s."""
    gold, gate, miter = f"gold_{nonce}", f"gate_{nonce}", f"miter_{nonce}"
    lines = []
    for name, file in ((gold, GOLD_FILE), (gate, GATE_FILE)):
        lines += [f"read_verilog -sv {file}", f"prep -flatten -top {spec.top}"]
        if not spec.clock:  # one step is sound only for logic that holds no state
            lines.append(f"select -assert-none {STATE_CELLS}")
        lines += [f"rename {spec.top} {name}", f"design -stash {name}"]
    lines += [
        f"design -copy-from {gold} -as {gold} {gold}",
        f"design -copy-from {gate} -as {gate} {gate}",
        f"miter -equiv -flatten -make_outputs -ignore_gold_x {gold} {gate} {miter}",
        f"hierarchy -top {miter}",
        "async2sync",
        "opt -fast",
    ]
    sat = ["sat", "-verify", "-prove", "trigger", "0", "-show-inputs", "-show-outputs"]
    sat += ["-timeout", str(SOLVER_TIMEOUT_S)]
    sat += ["-seq", str(depth)] if not spec.clock else []
    if spec.clock:
        reset_steps = spec.stimulus.reset_cycles if spec.reset else 0
        sat += ["-seq", str(depth), "-set-init-zero", "-prove-skip", str(max(1, reset_steps))]
        for step in range(1, reset_steps + 1):
            sat += ["-set-at", str(step), f"in_{spec.reset}", str(spec.reset_active)]
    lines.append(f"tee -o {LOG_FILE} " + " ".join(sat) + f" {miter}")
    return "\n".join(lines) + "\n"


_ROW = re.compile(r"^\s*(\d+)\s+\\(\S+)\s+(?:\S+\s+)*?([01xz]+)\s*$")


def parse_counterexample(log: str, spec: VerilogSpec) -> str:
    """What a model found says: each step's inputs up to the first step whose outputs differ
    (the last :data:`SHOWN_STEPS`), and the outputs that differ there."""
    steps: dict[int, dict[str, str]] = {}
    for line in log.splitlines():
        m = _ROW.match(line)
        if m:
            steps.setdefault(int(m.group(1)), {})[m.group(2)] = m.group(3)
    bad = next((k for k in sorted(steps) if steps[k].get("trigger") == "1"), None)
    if bad is None:
        return "a counterexample was found (its values could not be read)"
    ins = [p.name for p in spec.inputs]
    shown = [k for k in sorted(steps) if k <= bad][-SHOWN_STEPS:]
    parts = []
    for k in shown:
        values = " ".join(f"{n}={steps[k].get(f'in_{n}', '?')}" for n in ins)
        parts.append(f"step {k}: {values}")
    diffs = [
        f"{p.name} expected {steps[bad].get(f'gold_{p.name}', '?')} "
        f"got {steps[bad].get(f'gate_{p.name}', '?')}"
        for p in spec.outputs
        if steps[bad].get(f"gold_{p.name}") != steps[bad].get(f"gate_{p.name}")
    ]
    where = f"at step {bad}" if spec.clock else "for the inputs"
    return "; ".join(parts) + f" -> {where}: " + "; ".join(diffs)


def prove(sandbox: Sandbox, spec: VerilogSpec, design: str, depth: int) -> FormalResult:
    """Run the equivalence check of ``design`` against ``spec.reference`` in the sandbox."""
    steps = depth if spec.clock else 1
    script = formal_script(spec, steps, "F" + secrets.token_hex(6))
    files = {GOLD_FILE: spec.reference, GATE_FILE: design, SCRIPT_FILE: script}
    limits = Limits(
        timeout_s=TIMEOUT_S,
        memory_mb=MEMORY_MB,
        max_processes=8,
        max_file_mb=16,
        stdout_bytes=1 << 21,
        stderr_bytes=1 << 16,
    )
    t0 = time.perf_counter()
    with sandbox.workspace() as ws:
        r = sandbox.run(
            ["yosys", "-q", "-s", SCRIPT_FILE], files=files, limits=limits, workspace=ws
        )
        # The solver's report, written by Yosys's ``tee`` (stdout is not a file it can open).
        log = sandbox.run(["cat", LOG_FILE], limits=limits, workspace=ws)
    seconds = time.perf_counter() - t0
    out = log.stdout
    kind = f"bounded to {steps} cycles" if spec.clock else "combinational"
    if "SUCCESS!" in out and "FAIL!" not in out:
        return FormalResult("proved", f"proved equivalent ({kind})", steps, seconds)
    if "model found: FAIL!" in out:
        cex = parse_counterexample(out, spec)
        return FormalResult("counterexample", f"counterexample ({kind}): {cex}", steps, seconds)
    if r.timed_out or "TIMEOUT" in out or "cpu-limit" in r.violations:
        why = "the solver's time limit"
    elif r.memory_exceeded:
        why = f"the memory limit ({MEMORY_MB} MB)"
    elif "selection is not empty" in r.stderr + out:
        why = "the design holds state (a latch) but has no clock, so one step cannot judge it"
    else:
        errors = [ln.strip() for ln in (r.stderr + out).splitlines() if "ERROR" in ln]
        why = (errors[0] if errors else r.summary())[:300]
    return FormalResult("inconclusive", f"not decided ({kind}): {why}", steps, seconds)
