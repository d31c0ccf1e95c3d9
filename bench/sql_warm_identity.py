"""Verdicts of the resident SQL runner against the fork path's, sample by sample (issue 32).

    PYTHONPATH=src python bench/sql_warm_identity.py [--seeds 2] [--out FILE]

Every shape of every family (difficulty 0, 1/3, 2/3, 1), ``--seeds`` seeds each (even seeds
SQLite, odd DuckDB); for each task the gold, the empty answer and every mutant of the reference
(:mod:`referee.domains.sql.mutants`); then the red-team corpus
(:func:`referee.domains.sql.redteam.run_corpus`). Each answer is judged by
``SqlVerifier(warm=True)`` (resident runners) and ``SqlVerifier(warm=False)`` (a fork per
sample, the path before issue 32). Identical = the same reward, passed, infra error or not,
every test's status, and the flags; a test's detail (an engine's error text) is compared too
and its differences counted apart.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from referee.domains.sql.families import FAMILY_NAMES, make_task
from referee.domains.sql.mutants import mutants
from referee.domains.sql.redteam import run_corpus
from referee.domains.sql.spec import SqlSpec
from referee.domains.sql.verifier import SqlVerifier
from referee.verify.verdict import Verdict

DIFFICULTIES = (0.0, 1 / 3, 2 / 3, 1.0)


def key(v: Verdict) -> tuple[Any, ...]:
    return (
        v.reward,
        v.passed,
        v.infra_error is None,
        tuple(t.status for t in v.tests),
        tuple(sorted(f.kind for f in v.flags)),
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--out", default="bench/results/floor/sql_warm_identity.json")
    args = ap.parse_args()
    t0 = time.time()
    tasks = [
        make_task(f, d, s) for f in FAMILY_NAMES for d in DIFFICULTIES for s in range(args.seeds)
    ]
    counts = {"answers": 0, "identical": 0, "detail_differs": 0, "gold_passed": 0}
    by_engine: dict[str, int] = {}
    diffs: list[dict[str, Any]] = []
    with SqlVerifier(warm=True) as warm, SqlVerifier(warm=False) as fork:
        for task in tasks:
            spec = SqlSpec.of_task(task)
            answers = [("gold", spec.reference), ("empty", "")]
            answers += [(f"mutant:{m.operator}", m.sql) for m in mutants(spec.reference)]
            for what, answer in answers:
                a, b = warm.verify(task, answer), fork.verify(task, answer)
                counts["answers"] += 1
                by_engine[spec.engine] = by_engine.get(spec.engine, 0) + 1
                if what == "gold":
                    counts["gold_passed"] += a.passed and b.passed
                if key(a) == key(b):
                    counts["identical"] += 1
                    if [t.detail for t in a.tests] != [t.detail for t in b.tests]:
                        counts["detail_differs"] += 1
                else:
                    diffs.append({"task": task.id, "answer": what, "warm": key(a), "fork": key(b)})
        corpus_warm = run_corpus(warm)
        corpus_fork = run_corpus(fork)
    corpus = [
        {
            "name": a.name,
            "warm": [a.reward, a.held, sorted(a.flags)],
            "fork": [b.reward, b.held, sorted(b.flags)],
        }
        for a, b in zip(corpus_warm, corpus_fork, strict=True)
    ]
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "tasks": len(tasks),
        "answers_by_engine": by_engine,
        **counts,
        "differences": diffs,
        "corpus": {
            "exploits": len(corpus),
            "identical": sum(c["warm"] == c["fork"] for c in corpus),
            "held_warm": sum(a.held for a in corpus_warm),
            "held_fork": sum(b.held for b in corpus_fork),
            "rows": corpus,
        },
        "minutes": round((time.time() - t0) / 60, 1),
        "loadavg": Path("/proc/loadavg").read_text().split()[:3],
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k not in ("corpus",)}, indent=1))
    c = result["corpus"]
    print(
        f"corpus: {c['identical']}/{c['exploits']} identical; held warm "
        f"{c['held_warm']}, fork {c['held_fork']}"
    )


if __name__ == "__main__":
    main()
