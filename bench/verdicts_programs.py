"""Verdicts on the gold and exploit corpora of programs and Verilog, to compare two trees.

    PYTHONPATH=<tree>/src .venv/bin/python bench/verdicts_programs.py OUT.json
    python bench/verdicts_programs.py --compare BEFORE.json AFTER.json

Every program exploit (:mod:`referee.verify.program.redteam`) on its task, and the gold and
empty answer of each language; every Verilog exploit on the corpus tasks
(:mod:`referee.domains.verilog.redteam`), their references and empty modules, and each
family's reference. A verdict is kept as its reward, pass, infra error and each test's status
with the first words of its detail (the judge's reason, without the seconds a timeout took,
which depend on load): issue 32 must leave every one of them as it was.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any


def _summary(v: Any) -> dict[str, Any]:
    return {
        "reward": round(v.reward, 6),
        "passed": v.passed,
        "infra": bool(v.infra_error),
        "tests": [
            [t.name, t.status, re.split(r"[(:0-9]", t.detail, maxsplit=1)[0].strip()]
            for t in v.tests
        ],
    }


def collect() -> dict[str, Any]:
    from referee.domains.verilog.families import generate
    from referee.domains.verilog.redteam import corpus_tasks, exploit_answers
    from referee.domains.verilog.verifier import VerilogVerifier
    from referee.verify.program import ProgramVerifier
    from referee.verify.program.redteam import EMPTY, EXPLOITS, GOLD, SUM_TASK

    out: dict[str, Any] = {}
    with ProgramVerifier() as v:
        for e in EXPLOITS:
            out[f"program/{e.language}/{e.name}"] = _summary(v.verify(e.task or SUM_TASK, e.answer))
        for lang in GOLD:
            for what, code in (("gold", GOLD[lang]), ("empty", EMPTY[lang])):
                answer = f"```{lang}\n{code}```\n"
                out[f"program/{lang}/{what}"] = _summary(v.verify(SUM_TASK, answer))
    with VerilogVerifier() as v:
        for task in corpus_tasks():
            for name, (_, answer) in exploit_answers(task).items():
                out[f"verilog/{task.id}/{name}"] = _summary(v.verify(task, answer))
            header = f"{task.payload['module_header']}\nendmodule\n"
            out[f"verilog/{task.id}/empty"] = _summary(v.verify(task, header))
        for family in ("v-comb", "v-arith", "v-counter", "v-shift", "v-fsm"):
            for task in generate(family, 1, 0.5, 100):
                out[f"verilog/{task.id}/reference"] = _summary(
                    v.verify(task, task.hidden["reference"])
                )
    return out


def compare(before: Path, after: Path) -> int:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
    for k in differ:
        print(f"DIFFERS {k}\n  before {a.get(k)}\n  after  {b.get(k)}")
    print(f"{len(a)} verdicts before, {len(b)} after, {len(differ)} differ")
    return 1 if differ else 0


def main() -> int:
    if sys.argv[1:2] == ["--compare"]:
        return compare(Path(sys.argv[2]), Path(sys.argv[3]))
    Path(sys.argv[1]).write_text(json.dumps(collect(), indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
