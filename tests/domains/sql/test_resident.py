"""SQL samples on resident runners: limits, refusals and fresh databases, sample after sample.

Each test uses one verifier of its own on the warm path (``warm=True``) and compares with the
fork path (``warm=False``, a fork per sample) where the verdicts must be the same."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from referee.domains.sql.redteam import EXPLOITS, SqlExploit, corpus_tasks
from referee.domains.sql.spec import SqlSpec
from referee.domains.sql.verifier import (
    ResidentRunner,
    SqlVerifier,
    resident_runner,
    run_query_resident,
)
from referee.tasks.model import Task
from referee.verify.verdict import Verdict


@pytest.fixture(scope="module")
def warm() -> Iterator[SqlVerifier]:
    with SqlVerifier(warm=True) as v:
        yield v


@pytest.fixture(scope="module")
def fork() -> Iterator[SqlVerifier]:
    with SqlVerifier(warm=False) as v:
        yield v


def _key(v: Verdict) -> tuple[object, ...]:
    return (v.reward, v.infra_error, [t.status for t in v.tests], sorted(f.kind for f in v.flags))


def _exploit(name: str) -> SqlExploit:
    return next(x for x in EXPLOITS if x.name == name)


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_a_query_that_never_ends_is_stopped_and_the_next_sample_is_judged_right(
    warm: SqlVerifier, engine: str
) -> None:
    task = corpus_tasks()[engine]
    gold = task.hidden["reference"]
    assert warm.verify(task, gold).passed
    starts = sum(r.starts for r in warm.residents)
    forever = warm.verify(task, _exploit("recursive-forever").query(task))
    assert forever.tests[0].status == "timeout" and forever.reward == 0.0, forever.tests
    again = warm.verify(task, gold)
    assert again.passed, again.tests
    # stopped by the runner's own clock: the same runner, not a new one
    assert sum(r.starts for r in warm.residents) == starts


@pytest.mark.parametrize("engine", ["sqlite", "duckdb"])
def test_attach_writes_files_and_extensions_are_refused_as_on_the_fork_path(
    warm: SqlVerifier, fork: SqlVerifier, engine: str
) -> None:
    tasks = corpus_tasks()
    task = tasks[engine]
    names = {
        "sqlite": ["attach-instance", "load-extension", "insert", "create-table", "pragma-writable"],
        "duckdb": ["attach-instance-duckdb", "read-csv", "copy-out", "install-extension",
                   "set-external-access", "insert", "file-as-table"],
    }[engine]  # fmt: skip
    for name in names:
        query = _exploit(name).query(task)
        a, b = warm.verify(task, query), fork.verify(task, query)
        assert a.reward == 0.0 and not a.passed and a.infra_error is None, (name, a.tests)
        assert _key(a) == _key(b), (name, a.tests, b.tests)
    assert warm.verify(task, task.hidden["reference"]).passed


def _rows(runner: ResidentRunner, task: Task, query: str) -> list[list[object]]:
    spec = SqlSpec.of_task(task)
    data = [json.dumps(db.to_json()).encode() for db in spec.instances]  # DuckDB's form
    outcomes, r = run_query_resident(
        runner, spec.engine, query, data, spec.tables, time_limit_s=spec.time_limit_s
    )
    assert r.ok and outcomes[0] is not None and "rows" in outcomes[0], (r, outcomes)
    return outcomes[0]["rows"]  # type: ignore[no-any-return]


def test_no_duckdb_database_outlives_its_sample(warm: SqlVerifier) -> None:
    runner = resident_runner(warm.sandbox)
    task = corpus_tasks()["duckdb"]
    tables = sorted(SqlSpec.of_task(task).tables)
    query = "SELECT database_name, schema_name, table_name FROM duckdb_tables() ORDER BY 1, 3"
    seen = []
    for _ in range(3):
        rows = _rows(runner, task, query)
        assert sorted(r[2] for r in rows) == tables, rows  # the sample's tables, nothing else
        assert len({r[0] for r in rows}) == 1  # in one database: its own
        seen.append(rows[0][0])
        databases = _rows(runner, task, "SELECT count(*) FROM duckdb_databases()")
        assert databases == _rows(runner, task, "SELECT count(*) FROM duckdb_databases()")
    assert len(set(seen)) == 3  # a fresh database each time
    runner.resident.close()


def test_sqlite_state_does_not_carry_from_one_sample_to_the_next(
    warm: SqlVerifier, fork: SqlVerifier
) -> None:
    task = corpus_tasks()["sqlite"]
    made = warm.verify(task, "CREATE TEMP TABLE carry AS SELECT * FROM customers")
    assert made.tests[0].status == "error", made.tests
    used = warm.verify(task, "SELECT * FROM carry")
    assert used.tests[0].status == "error" and "carry" in used.tests[0].detail, used.tests
    assert _key(used) == _key(fork.verify(task, "SELECT * FROM carry"))
