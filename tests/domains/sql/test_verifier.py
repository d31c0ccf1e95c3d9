"""The verifier's judgement: wrong answers, order, tolerance, malformed tasks, runner parity."""

from __future__ import annotations

import datetime
import decimal

from referee.domains.sql.compare import same_columns, same_result, type_class
from referee.domains.sql.families import make_task, reference_result
from referee.domains.sql.sandbox_runner import plain as runner_plain
from referee.domains.sql.spec import SqlSpec
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


def test_columns_are_compared_even_when_no_rows_come_back() -> None:
    assert same_columns(["a", "b", "c"], ["x", "y"]) == (False, "3 columns, expected 2")
    assert same_columns([], ["x"]) == (False, "0 columns, expected 1")
    assert same_columns(["a"], ["x"], ["VARCHAR"], ["INTEGER"]) == (
        False,
        "column 1 is text, expected a number",
    )
    assert same_columns(["a"], ["x"], ["DATE"], ["VARCHAR"])[0]  # dates reach the grader as text
    assert same_columns(["a"], ["x"], ['"NULL"'], ["BIGINT"])[0]  # a NULL column matches both
    assert same_columns(["a"], ["x"], None, ["BIGINT"])[0]  # SQLite: no types to compare
    assert type_class("DECIMAL(18,3)") == "number" and type_class("BOOLEAN") == "number"


def _gold(task: Task, reference: str) -> Task:
    spec = SqlSpec.of_task(task)
    expected = [reference_result(reference, db, spec.engine) for db in spec.instances]
    return task.revised(hidden={**task.hidden, "reference": reference, "expected": expected})


def test_an_empty_result_with_other_columns_fails_an_empty_gold(
    sql_verifier: SqlVerifier, sqlite_task: Task, duckdb_task: Task
) -> None:
    for task in (sqlite_task, duckdb_task):
        empty = _gold(task, "SELECT id, customer_id FROM orders WHERE id < 0")
        assert all(e["rows"] == [] for e in empty.hidden["expected"])
        assert sql_verifier.verify(empty, "SELECT id, id FROM orders WHERE 1 = 0").passed
        v = sql_verifier.verify(empty, "SELECT id, id, id FROM orders WHERE 1 = 0")
        assert not v.passed and v.tests[0].detail == "3 columns, expected 2", v.tests
    # DuckDB reports column types: text where the gold has numbers fails there
    empty = _gold(duckdb_task, "SELECT id, customer_id FROM orders WHERE id < 0")
    assert [type_class(t) for t in empty.hidden["expected"][0]["types"]] == ["number"] * 2
    v = sql_verifier.verify(empty, "SELECT status, status FROM orders WHERE 1 = 0")
    assert not v.passed and v.tests[0].detail == "column 1 is text, expected a number"
    # SQLite's result columns have no type: the same answer is beyond it (documented)
    empty = _gold(sqlite_task, "SELECT id, customer_id FROM orders WHERE id < 0")
    assert sql_verifier.verify(empty, "SELECT status, status FROM orders WHERE 1 = 0").passed


def test_a_query_that_reads_no_table_fails_and_is_flagged(
    sql_verifier: SqlVerifier, sqlite_task: Task, duckdb_task: Task
) -> None:
    two = "SELECT count(*) FROM (SELECT id FROM customers ORDER BY id LIMIT 2) AS two"
    for task in (sqlite_task, duckdb_task):
        constant = _gold(task, two)
        assert all(e["rows"] == [[2]] for e in constant.hidden["expected"])
        assert sql_verifier.verify(constant, two).passed
        for guess in ("SELECT 2", "WITH s AS (SELECT 2 AS n) SELECT n FROM s",
                      "SELECT 'x0', 'x1', 'x2' WHERE 1 = 0"):  # fmt: skip
            v = sql_verifier.verify(constant, guess)
            assert not v.passed, (task.id, guess)
            assert v.tests[0].detail == "the query reads none of the task's tables"
            assert [f.kind for f in v.flags] == ["constant-query"]
