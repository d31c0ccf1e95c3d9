"""Formal equivalence beside simulation: wrong answers simulation lets through that the proof
catches, and what the proof costs.

    PYTHONPATH=src .venv/bin/python bench/verilog_formal.py [--seeds 1]
        [--out bench/results/verilog_formal.json]

Every family at difficulty 0, 0.5 and 1 (``--seeds`` tasks each); the candidates are the
reference and its mutants (``bench/domain_verilog.py``'s operators: an operator flipped, a
constant off by one, a register narrower, a reset value, an enable dropped, an FSM transition,
a comparison, the reset style, and the clock phase: an output inverted while the clock is
high), and a **rare trigger**: the reference's logic with its outputs inverted when every data
input equals one random value (a hard-coded case, wrong on one input among 2^W).
Each is judged by simulation alone and by simulation + formal (``formal: true``: a
SAT proof for a combinational design, bounded model checking to 20 cycles for a sequential
one). Reported: mutants accepted by simulation, those the proof then rejects (with its
counterexample) or leaves undecided, references proved, and seconds per task (median wall
time of a verdict on the reference, the reference's trace cached, each way).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine
from domain_verilog import FAMILIES, mutants
from referee.domains.verilog.families import generate
from referee.domains.verilog.redteam import EXPLOITS
from referee.domains.verilog.verifier import VerilogVerifier
from referee.tasks.model import Task


def _rare_trigger(task: Task, rng: random.Random) -> tuple[str, str]:
    """The reference (renamed, as a helper) with its outputs inverted when every data input
    (not the clock, not the reset) holds one value drawn here."""
    ports = task.payload["ports"]
    skip = {task.payload["clock"], task.payload["reset"]}
    data = [p for p in ports if p["direction"] == "input" and p["name"] not in skip]
    conds = [f"({p['name']} == {p['width']}'d{rng.getrandbits(p['width'])})" for p in data]
    cond = " && ".join(conds) or "1'b0"
    src = EXPLOITS["clock-high-inverted"][1](task).replace("```verilog\n", "").replace("```", "")
    clock = task.payload["clock"]
    src = src.replace(f" = {clock or chr(49) + chr(39) + 'b1'} ? ~", f" = ({cond}) ? ~")
    return src, f"outputs inverted when {cond}"


def _timed(v: VerilogVerifier, task: Task, answer: str, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        v.verify(task, answer)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "verilog_formal.json"))
    args = ap.parse_args()
    tasks: list[Task] = []
    for family in FAMILIES:
        for d in (0.0, 0.5, 1.0):
            tasks += generate(family, args.seeds, d, 100)
    phase = EXPLOITS["clock-high-inverted"][1]
    per_family: dict[str, Counter[str]] = {f: Counter() for f in FAMILIES}
    caught: list[dict[str, str]] = []
    undecided: list[dict[str, str]] = []
    cost: dict[str, list[tuple[float, float]]] = {f: [] for f in FAMILIES}
    t_start = time.perf_counter()
    with VerilogVerifier() as sim, VerilogVerifier(sim.sandbox, formal=True) as both:
        for task in tasks:
            fam = task.provenance.generator or "?"
            c = per_family[fam]
            ref = task.hidden["reference"]
            gold = both.verify(task, ref)
            c["tasks"] += 1
            c["references_proved"] += gold.tests[-1].status == "passed"
            c["references_passed"] += gold.passed
            cost[fam].append(
                (_timed(sim, task, ref, args.rounds), _timed(both, task, ref, args.rounds))
            )
            cands = list(mutants(ref))
            if task.payload["clock"]:
                cands.append(("clock-phase", phase(task), "outputs inverted while clk is 1"))
            cands.append(("rare-trigger", *_rare_trigger(task, random.Random(task.id))))
            for op, source, change in cands:
                s = sim.verify(task, source)
                if s.infra_error:
                    raise SystemExit(f"{task.id} {op}: {s.infra_error}")
                c["mutants"] += 1
                if not s.passed:
                    c["rejected_by_simulation"] += 1
                    continue
                f = both.verify(task, source)
                status = f.tests[-1].status
                row = {"task": task.id, "unit": task.provenance.unit or "", "operator": op,
                       "change": change, "formal": f.tests[-1].detail}  # fmt: skip
                if status == "failed":
                    c["caught_by_formal"] += 1
                    caught.append(row)
                elif status == "skipped":
                    c["undecided"] += 1
                    undecided.append(row)
                else:
                    c["proved_equivalent"] += 1
    elapsed = time.perf_counter() - t_start
    families = {}
    for fam in FAMILIES:
        sim_s = statistics.median(x[0] for x in cost[fam])
        both_s = statistics.median(x[1] for x in cost[fam])
        families[fam] = {**per_family[fam], "sim_s_per_task": round(sim_s, 3),
                         "sim_formal_s_per_task": round(both_s, 3)}  # fmt: skip
    total = sum((per_family[f] for f in FAMILIES), Counter())
    result = {
        "date": "2026-12-07",
        "command": f"PYTHONPATH=src .venv/bin/python bench/verilog_formal.py --seeds {args.seeds} "
        f"--rounds {args.rounds}",
        "machine": {**machine(), "note": "2 cores shared with other jobs"},
        "elapsed_s": round(elapsed, 1),
        "totals": dict(total),
        "families": families,
        "caught_by_formal": caught,
        "undecided": undecided,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: result[k] for k in ("totals", "families", "elapsed_s")}, indent=1))


if __name__ == "__main__":
    main()
