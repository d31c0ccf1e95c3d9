"""The verilog domain: gold pass rate, exploits, cost per sample, and mutants of the references.

    PYTHONPATH=src .venv/bin/python bench/domain_verilog.py [--seeds 2] [--rounds 5]
        [--out bench/results/verilog.md]

* **gold**: every family at difficulty 0, 0.5 and 1, ``--seeds`` tasks each; the reference as
  the answer must pass; the empty module (the interface, nothing inside) must earn 0.
* **exploits**: the red-team corpus (:mod:`referee.domains.verilog.redteam`), held or not.
* **cost**: per sample, the verifier's whole path for a candidate (static check, compile with
  the testbench, simulate, compare; the reference's trace cached) against compiling and
  simulating the reference alone under the same testbench, medians of ``--rounds`` runs,
  measured side by side in this run.
* **mutants**: small wrong variants of each reference (an operator flipped, a constant off by
  one, a register one bit narrower, a wrong reset value, a missing enable, an FSM transition
  swapped, a comparison changed, the reset made (a)synchronous); the share the verifier
  rejects, and the list of those it accepts (some are equivalent; the others are blind spots
  of the stimulus).
"""

from __future__ import annotations

import argparse
import functools
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from referee.domains.verilog.families import generate
from referee.domains.verilog.redteam import run_corpus
from referee.domains.verilog.simulate import simulate
from referee.domains.verilog.spec import verilog_spec
from referee.domains.verilog.testbench import stimulus_vectors
from referee.domains.verilog.verifier import VerilogVerifier
from referee.tasks.model import Task

FAMILIES = ("v-comb", "v-arith", "v-counter", "v-shift", "v-fsm")

#: (operator, pattern, replacement): applied at each match in turn, one mutant per match
#: (at most ``_PER_OPERATOR``).
_OPERATORS: list[tuple[str, str, object]] = [
    ("flip-op", r"(?<=[\w\)\]] )\+(?= )", "-"),
    ("flip-op", r"(?<=[\w\)\]] )-(?= )", "+"),
    ("flip-op", r"(?<=[\w\)\]] )&(?= )", "|"),
    ("flip-op", r"(?<=[\w\)\]] )\|(?= )", "&"),
    ("flip-op", r"(?<=[\w\)\]] )\^(?= )", "&"),
    ("flip-op", r"= \^data", "= ~^data"),
    ("flip-op", r"= ~\^data", "= ^data"),
    ("compare", r" == ", " != "),
    ("compare", r" < ", " <= "),
    ("compare", r" >= ", " > "),
    ("off-by-one", r"(\d+)'d(\d+)", lambda m: f"{m.group(1)}'d{int(m.group(2)) + 1}"),
    ("narrow-width", r"reg \[(\d+):0\]", lambda m: f"reg [{max(0, int(m.group(1)) - 1)}:0]"),
    ("narrow-width", r"output \[(\d+):0\]",
     lambda m: f"output [{max(0, int(m.group(1)) - 1)}:0]"),
    ("reset-value", r"(if \(!?rst(?:_n)?\) [\w\[\]:]+ <= \d+'d)(\d+)",
     lambda m: f"{m.group(1)}{int(m.group(2)) ^ 1}"),
    ("reset-value", r"(hist <= \d+'d)0", r"\g<1>1"),
    ("missing-enable", r"if \(en\)", "if (1'b1)"),
    ("missing-load", r"if \(load\)", "if (1'b0)"),
    ("fsm-transition", r"state <= YELLOW", "state <= RED"),
    ("fsm-transition", r"state <= RED", "state <= GREEN"),
    ("fsm-transition", r"cnt <= (\d+)'d(\d+);",
     lambda m: f"cnt <= {m.group(1)}'d{int(m.group(2)) ^ 1};"),
    ("fsm-pattern", r"(nxt == \d+'b)([01])",
     lambda m: f"{m.group(1)}{'1' if m.group(2) == '0' else '0'}"),
    ("reset-style", r" or (pos|neg)edge rst(_n)?\)", ")"),
    ("reset-style", r"always @\(posedge clk\)", "always @(posedge clk or posedge rst)"),
    ("shift-direction", r"\{q\[(\d+):0\], (sin|q)",
     lambda m: f"{{q[{m.group(1)}:1], {m.group(2)}"),
    ("case-arm", r"(\d+)'d1: y = ", lambda m: f"{m.group(1)}'d0: y = "),
]  # fmt: skip
_PER_OPERATOR = 3


def mutants(reference: str) -> Iterator[tuple[str, str, str]]:
    """(operator, mutated source, what changed) for each operator and each of its first
    matches."""
    body = reference
    seen = {reference}
    for op, pattern, repl in _OPERATORS:
        for k, m in enumerate(re.finditer(pattern, body)):
            if k >= _PER_OPERATOR:
                break
            new = m.expand(repl) if isinstance(repl, str) else repl(m)  # type: ignore[operator]
            source = body[: m.start()] + new + body[m.end() :]
            if source not in seen:
                seen.add(source)
                yield op, source, f"`{m.group(0).strip()}` -> `{new.strip()}`"


def _longer(task: Task) -> Task:
    """``task`` with 32 times the segments (four times as long each) and another seed."""
    stim = dict(task.hidden["stimulus"])
    stim.update(seed=stim["seed"] + 1, segments=64, cycles=4 * stim["cycles"])
    return task.revised(hidden={**task.hidden, "stimulus": stim})


def median_s(fn, rounds: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "verilog.md"))
    args = ap.parse_args()
    tasks: list[Task] = []
    for family in FAMILIES:
        for d in (0.0, 0.5, 1.0):
            tasks += generate(family, args.seeds, d, 100)
    rows: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    cost: dict[str, list[tuple[float, float]]] = defaultdict(list)
    killed: Counter[str] = Counter()
    total: Counter[str] = Counter()
    accepted: list[str] = []
    blind: Counter[str] = Counter()
    t_start = time.perf_counter()
    with VerilogVerifier() as v:
        for task in tasks:
            fam = task.provenance.generator or "?"
            spec = verilog_spec(task)
            gold = v.verify(task, task.hidden["reference"])
            empty = v.verify(task, f"{task.payload['module_header']}\nendmodule\n")
            r = rows[fam]
            r["tasks"] += 1
            r["gold_passed"] += gold.passed
            r["empty_reward"] += empty.reward
            r["cycles"] += spec.total_cycles
            vectors = stimulus_vectors(spec)
            ref_alone = median_s(
                functools.partial(
                    simulate, v.sandbox, spec, spec.reference, nonce="n", vectors=vectors
                ),
                args.rounds,
            )
            verify_s = median_s(
                functools.partial(v.verify, task, task.hidden["reference"]), args.rounds
            )
            cost[fam].append((verify_s, ref_alone))
            for op, source, change in mutants(task.hidden["reference"]):
                verdict = v.verify(task, source)
                if verdict.infra_error:
                    raise SystemExit(f"{task.id} {op}: {verdict.infra_error}")
                total[op] += 1
                if verdict.passed:
                    # Judged again under a 32x longer stimulus of another seed: a mutant that
                    # fails there is a blind spot of the task's stimulus; one that passes
                    # is most likely equivalent.
                    longer = v.verify(_longer(task), source)
                    why = (
                        "killed by a 32x longer stimulus: a blind spot"
                        if not longer.passed
                        else "survives a 32x longer stimulus: likely equivalent"
                    )
                    blind[op] += not longer.passed
                    accepted.append(f"{task.id} ({task.provenance.unit}): {op} {change}; {why}")
                else:
                    killed[op] += 1
    corpus = run_corpus()
    elapsed = time.perf_counter() - t_start
    lines = [
        "## Verilog domain (`bench/domain_verilog.py`)",
        "",
        f"2026-12-02, `PYTHONPATH=src .venv/bin/python bench/domain_verilog.py --seeds "
        f"{args.seeds} --rounds {args.rounds}`; Icarus Verilog 11.0 in the bubblewrap sandbox; "
        f"{machine()['cores']} cores shared with other jobs (times are noisy: compare the "
        f"ratio); whole run {elapsed:.0f} s.",
        "",
        "| family | tasks | gold passed | empty reward | cycles/task | verify (ms, median) "
        "| reference alone (ms) | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for fam in FAMILIES:
        r = rows[fam]
        n = int(r["tasks"])
        vs = statistics.median(c[0] for c in cost[fam]) * 1000
        rs = statistics.median(c[1] for c in cost[fam]) * 1000
        lines.append(
            f"| {fam} | {n} | {int(r['gold_passed'])}/{n} | {r['empty_reward'] / n:.2f} | "
            f"{int(r['cycles'] / n)} | {vs:.0f} | {rs:.0f} | {vs / rs:.2f} |"
        )
    held = sum(o.held for o in corpus)
    classes = Counter(o.klass for o in corpus)
    lines += [
        "",
        f"Exploits: {held}/{len(corpus)} held (scored no more than the empty module, none "
        f"passed) over {len(corpus) // max(1, len(set(o.name.split('@')[1] for o in corpus)))}"
        f" exploits x 2 tasks; classes: "
        + ", ".join(f"{k} {n}" for k, n in sorted(classes.items()))
        + ".",
    ]
    if held < len(corpus):
        lines.append("Not held: " + ", ".join(o.name for o in corpus if not o.held))
    all_total = sum(total.values())
    all_killed = sum(killed.values())
    lines += [
        "",
        f"Mutants of the references: {all_killed}/{all_total} rejected "
        f"({100 * all_killed / max(1, all_total):.1f}%).",
        "",
        "| operator | mutants | rejected | accepted, killed by a 32x longer stimulus |",
        "|---|---|---|---|",
    ]
    for op in sorted(total):
        lines.append(f"| {op} | {total[op]} | {killed[op]} | {blind[op]} |")
    if accepted:
        lines += ["", "Accepted mutants (equivalent, or wrong only where the stimulus never goes):"]
        lines += [f"- {a}" for a in accepted]
    text = "\n".join(lines) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    save("domain_verilog", {"markdown": text, "machine": machine()})
    print(text)


if __name__ == "__main__":
    main()
