"""The SQL domain measured: gold, exploits, verification cost, mutants of the references.

    PYTHONPATH=src python bench/domain_sql.py [--seeds 2] [--repeats 5]

* every shape of every family (difficulty 0, 1/3, 2/3, 1), ``--seeds`` seeds each (even seeds
  SQLite, odd DuckDB): the gold's pass rate and the empty answer's reward;
* the red-team corpus (``referee.domains.sql.redteam``): every exploit's reward against the
  empty answer's;
* the time to verify one sample (the candidate's query in the sandbox on the four hidden
  databases, the rows compared on the host) against running the reference alone on the same
  databases on the host (engine files opened read-only, the query run and fetched): medians
  of ``--repeats`` runs each, interleaved in the same run;
* mutants of each reference (:mod:`referee.domains.sql.mutants`): the share the verifier
  rejects, the share a judge of the visible sample alone would reject, and which it accepts.

Writes ``bench/results/sql.md`` and prints it.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from referee.domains.sql.compare import same_result
from referee.domains.sql.database import database_file, run_trusted
from referee.domains.sql.families import FAMILY_NAMES, make_task
from referee.domains.sql.mutants import mutants
from referee.domains.sql.redteam import run_corpus
from referee.domains.sql.spec import SqlSpec
from referee.domains.sql.values import plain_rows
from referee.domains.sql.verifier import SqlVerifier
from referee.tasks.model import Task

DIFFICULTIES = (0.0, 1 / 3, 2 / 3, 1.0)


def reference_alone(spec: SqlSpec, paths: list[str]) -> float:
    """Seconds to run the reference on each hidden database's engine file, on the host."""
    t0 = time.perf_counter()
    for path in paths:
        if spec.engine == "sqlite":
            con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
            con.execute(spec.reference).fetchall()
            con.close()
        else:
            import duckdb

            dcon = duckdb.connect(path, read_only=True, config={"threads": 1})
            dcon.execute(spec.reference).fetchall()
            dcon.close()
    return time.perf_counter() - t0


def sample_rejects(spec: SqlSpec, sql: str) -> bool:
    """Whether a judge of the visible sample alone would reject ``sql`` (our own mutant: it
    runs on the host)."""
    try:
        _, got = run_trusted(sql, spec.sample, spec.engine)
    except Exception:
        return True
    _, want = run_trusted(spec.reference, spec.sample, spec.engine)
    return not same_result(plain_rows(got), plain_rows(want), ordered=spec.order_matters)[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "sql.md"))
    args = ap.parse_args()

    t0 = time.perf_counter()
    tasks: list[Task] = [
        make_task(f, d, s) for f in FAMILY_NAMES for d in DIFFICULTIES for s in range(args.seeds)
    ]
    gen_s = (time.perf_counter() - t0) / len(tasks)
    lines: list[str] = []
    with SqlVerifier() as v, tempfile.TemporaryDirectory() as tmp:
        gold_ok, empty_rewards, infra = 0, [], 0
        verify_s: dict[str, list[float]] = defaultdict(list)
        alone_s: dict[str, list[float]] = defaultdict(list)
        by_family: Counter[str] = Counter()
        for task in tasks:
            spec = SqlSpec.of_task(task)
            paths = []
            for i, db in enumerate(spec.instances):
                path = os.path.join(tmp, f"{len(os.listdir(tmp))}-{i}.{spec.engine}")
                Path(path).write_bytes(database_file(db, spec.engine))
                paths.append(path)
            first = v.verify(task, spec.reference)  # builds and caches the engine files
            gold_ok += first.passed
            infra += first.infra_error is not None
            by_family[task.provenance.unit or ""] += first.passed
            empty_rewards.append(v.verify(task, "").reward)
            a, b = [], []
            for _ in range(args.repeats):
                s = time.perf_counter()
                v.verify(task, spec.reference)
                a.append(time.perf_counter() - s)
                b.append(reference_alone(spec, paths))
            verify_s[spec.engine].append(statistics.median(a))
            alone_s[spec.engine].append(statistics.median(b))

        corpus = run_corpus(v)

        killed: Counter[str] = Counter()
        total: Counter[str] = Counter()
        invalid: Counter[str] = Counter()
        sample_killed: Counter[str] = Counter()
        accepted: list[tuple[str, str, str]] = []
        for task in tasks:
            spec = SqlSpec.of_task(task)
            for m in mutants(spec.reference):
                verdict = v.verify(task, m.sql)
                if verdict.tests and verdict.tests[0].status == "error":
                    invalid[m.operator] += 1
                    continue
                total[m.operator] += 1
                if verdict.passed:
                    accepted.append((task.provenance.unit or task.id, m.operator, m.sql))
                else:
                    killed[m.operator] += 1
                sample_killed[m.operator] += sample_rejects(spec, m.sql)

    n = len(tasks)
    lines.append("## SQL domain (`bench/domain_sql.py`)\n")
    lines.append(
        f"Date 2026-12-02. Command: `PYTHONPATH=src python bench/domain_sql.py --seeds "
        f"{args.seeds} --repeats {args.repeats}`. Machine: {os.cpu_count()} cores, shared "
        "with other jobs (timings are medians, not best cases).\n"
    )
    lines.append(
        f"**Tasks**: {len(FAMILY_NAMES)} families x 4 shapes (difficulty 0, 1/3, 2/3, 1) x "
        f"{args.seeds} seeds = {n} tasks, SQLite and DuckDB alternating; generation "
        f"{gen_s * 1000:.0f} ms per task (reference on 5 databases, on the host).\n"
    )
    lines.append(
        f"**Gold**: {gold_ok}/{n} pass ({100 * gold_ok / n:.0f}%), {infra} infra errors; the "
        f"empty answer earns {max(empty_rewards):g} on every task.\n"
    )
    lines.append("| engine | verify one sample (median) | reference alone on the host | ratio |")
    lines.append("|---|---|---|---|")
    for engine in sorted(verify_s):
        a = statistics.median(verify_s[engine]) * 1000
        b = statistics.median(alone_s[engine]) * 1000
        lines.append(f"| {engine} | {a:.1f} ms | {b:.1f} ms | {a / b:.1f}x |")
    lines.append("")
    held = sum(o.held for o in corpus)
    lines.append(
        f"**Exploits**: {held}/{len(corpus)} held (reward no more than the empty answer's, "
        "never a pass):\n"
    )
    lines.append("| exploit | class | reward | empty | held | flags |")
    lines.append("|---|---|---|---|---|---|")
    for o in corpus:
        lines.append(
            f"| {o.name} | {o.klass} | {o.reward:g} | {o.baseline:g} | "
            f"{'yes' if o.held else '**NO**'} | {', '.join(o.flags)} |"
        )
    lines.append("")
    t_all, k_all, s_all = sum(total.values()), sum(killed.values()), sum(sample_killed.values())
    lines.append(
        f"**Mutants** of the references: {t_all} that run (plus {sum(invalid.values())} that "
        f"fail to run, not counted); the verifier rejects {k_all}/{t_all} "
        f"({100 * k_all / max(1, t_all):.0f}%); a judge of the visible sample alone would "
        f"reject {s_all}/{t_all} ({100 * s_all / max(1, t_all):.0f}%).\n"
    )
    lines.append("| operator | mutants | rejected | rejected on the sample alone |")
    lines.append("|---|---|---|---|")
    for op in sorted(total):
        lines.append(f"| {op} | {total[op]} | {killed[op]} | {sample_killed[op]} |")
    lines.append("")
    if accepted:
        lines.append(
            "Accepted mutants (the verifier cannot tell them from the reference). Most are "
            "equivalent to it on every database: a LEFT JOIN whose NULL rows a later inner join "
            "or WHERE on the same table removes again; an ORDER BY dropped where the window "
            "function already returns the rows in that order (in both engines, though SQL "
            "does not promise it); `c.city IS NOT NULL` dropped where `m.city = n.city` "
            "already drops NULL cities; a LEFT JOIN adding orders without lines, whose NULLs "
            "SUM ignores. The others need a row the hidden databases happened not to hold: a "
            "price or a spend exactly equal to an average (`>` against `>=`), a month of "
            "line-less orders only, more rows to put out of order.\n"
        )
        for unit, op, sql in accepted:
            lines.append(f"- `{unit}` {op}: `{sql}`")
        lines.append("")
    text = "\n".join(lines)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
