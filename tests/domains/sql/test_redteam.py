"""Every exploit of the corpus scores no more than the empty answer; the gold passes.

The slow resource exploits (each runs into a limit) are covered by one sample here and all of
them by ``bench/domain_sql.py`` and ``referee redteam --verifier sql``."""

from __future__ import annotations

from referee.domains.sql.redteam import EXPLOITS, corpus_tasks, runs_on
from referee.domains.sql.verifier import SqlVerifier

#: Each runs into a time or memory limit (seconds each); one of them is tested below.
_SLOW = {"cross-join", "recursive-forever", "gigabyte-string", "gigabyte-string-sqlite"}


def test_every_exploit_is_held(sql_verifier: SqlVerifier) -> None:
    tasks = corpus_tasks()
    assert {"sqlite/empty-gold", "duckdb/empty-gold", "sqlite/constant-gold"} <= set(tasks)
    for key, task in tasks.items():
        assert sql_verifier.verify(task, task.hidden["reference"]).passed, key
        baseline = sql_verifier.verify(task, "").reward
        for x in EXPLOITS:
            if not runs_on(x, key) or x.name in _SLOW:
                continue
            v = sql_verifier.verify(task, x.query(task))
            assert v.infra_error is None, (x.name, key, v.infra_error)
            assert not v.passed and v.reward <= baseline, (x.name, key, v.tests)


def test_the_weak_golds_are_what_their_names_say() -> None:
    tasks = corpus_tasks()
    for engine in ("sqlite", "duckdb"):
        empty = tasks[f"{engine}/empty-gold"].hidden["expected"]
        assert all(e["rows"] == [] and len(e["columns"]) == 2 for e in empty)
        constant = tasks[f"{engine}/constant-gold"].hidden["expected"]
        assert all(e["rows"] == [[2]] for e in constant)


def test_every_exploit_runs_on_some_task() -> None:
    keys = corpus_tasks()
    assert all(any(runs_on(x, key) for key in keys) for x in EXPLOITS)


def test_the_time_limit_kills_a_query_that_never_ends(sql_verifier: SqlVerifier) -> None:
    task = corpus_tasks()["duckdb"]
    forever = next(x for x in EXPLOITS if x.name == "recursive-forever")
    v = sql_verifier.verify(task, forever.query(task))
    assert v.tests[0].status == "timeout" and v.reward == 0.0
    assert v.tests[0].detail == "query ran past 2s"
    # The limit is 2 s of CPU, which a busy machine stretches in wall time; what must hold at
    # any load is the wall-clock backstop (3 x limit + 1 s, and one retry at 4 x that when the
    # machine starved the query: docs/time-limits.md): the query is killed, never waited out.
    assert v.timings["run_s"] < 5 * (3 * 2 + 1), v.timings
