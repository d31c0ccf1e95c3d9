"""The verifier's judgement: wrong answers, order, tolerance, malformed tasks, runner parity."""

from __future__ import annotations

import datetime
import decimal

from referee.domains.sql.compare import same_result
from referee.domains.sql.families import make_task
from referee.domains.sql.sandbox_runner import plain as runner_plain
from referee.domains.sql.values import plain
from referee.domains.sql.verifier import SqlVerifier
from referee.tasks.model import Task


def test_a_mutant_fails_and_says_why(sql_verifier: SqlVerifier, sqlite_task: Task) -> None:
    wrong = sqlite_task.hidden["reference"].replace("SELECT DISTINCT", "SELECT")
    v = sql_verifier.verify(sqlite_task, wrong)
    assert v.reward == 0.0 and not v.passed
    assert any(t.status == "failed" and "rows" in t.detail for t in v.tests)


def test_duckdb_gold_passes_and_a_reversed_order_fails(
    sql_verifier: SqlVerifier, duckdb_task: Task
) -> None:
    gold = duckdb_task.hidden["reference"]
    assert sql_verifier.verify(duckdb_task, gold).passed
    reversed_order = gold[: gold.rindex("ORDER BY month")] + "ORDER BY month DESC"
    assert not sql_verifier.verify(duckdb_task, reversed_order).passed


def test_a_syntax_error_is_an_error_not_an_infra_fault(
    sql_verifier: SqlVerifier, sqlite_task: Task
) -> None:
    v = sql_verifier.verify(sqlite_task, "SELEC nothing")
    assert v.infra_error is None and v.reward == 0.0
    assert v.tests[0].status == "error" and [t.status for t in v.tests[1:]] == ["skipped"] * 3


def test_a_malformed_task_is_an_infra_verdict(sql_verifier: SqlVerifier, sqlite_task: Task) -> None:
    broken = sqlite_task.revised(hidden={**sqlite_task.hidden, "expected": []})
    v = sql_verifier.verify(broken, "SELECT 1")
    assert v.infra_error and "expected" in v.infra_error and not v.passed


def test_comparison_rules() -> None:
    assert same_result([[1, 2.0000000001]], [[1.0, 2]], ordered=True)[0]
    assert not same_result([[None]], [[0]], ordered=False)[0]
    assert not same_result([["1"]], [[1]], ordered=False)[0]
    assert same_result([[1], [1], [2]], [[2], [1], [1]], ordered=False)[0]
    assert not same_result([[1], [2], [2]], [[2], [1], [1]], ordered=False)[0]
    assert not same_result([[1, 2]], [[1]], ordered=False)[0]


def test_the_runner_and_the_host_write_cells_alike() -> None:
    cells = [None, True, 3, 2.5, float("nan"), "x", datetime.date(2024, 1, 2),
             decimal.Decimal("1.25"), b"\x01"]  # fmt: skip
    assert [runner_plain(c) for c in cells] == [plain(c) for c in cells]


def test_an_outer_join_for_an_inner_one_fails(sql_verifier: SqlVerifier) -> None:
    # Hidden orders of customers not on record tell LEFT JOIN from JOIN.
    task = make_task("sql-join", 0.0, 0)
    assert task.provenance.unit == "sql:sql-join/shipped-orders"
    outer = task.hidden["reference"].replace(" JOIN ", " LEFT JOIN ", 1)
    assert not sql_verifier.verify(task, outer).passed


def test_a_table_outside_the_task_is_refused(
    sql_verifier: SqlVerifier, sqlite_task: Task, duckdb_task: Task
) -> None:
    for task in (sqlite_task, duckdb_task):
        narrowed = Task.create(
            name=task.id,
            prompt=task.prompt,
            domain="sql",
            kind="sql",
            payload={**task.payload, "tables": ["orders", "order_items"]},
            hidden={**task.hidden, "expected": [{"rows": [[1]]}] * len(task.hidden["instances"])},
        )
        v = sql_verifier.verify(narrowed, "SELECT count(*) FROM customers")
        assert v.tests[0].status == "error", (task.payload["engine"], v.tests[0])
        assert "customers" in v.tests[0].detail or "not authorized" in v.tests[0].detail
