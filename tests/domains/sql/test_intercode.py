"""``referee tasks import intercode-sql``: InterCode's SQL questions and its MySQL dump of
Spider's databases, read from the installed intercode-bench package and converted to SQLite;
every question imported or refused by row, gold passing and empty and wrong answers failing."""

from __future__ import annotations

import importlib.util

import pytest

from referee.tasks.imports import import_tasks
from referee.tasks.model import read_tasks

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("intercode") is None,
    reason="intercode-bench is not installed: make bootstrap (requirements-benchmarks.lock)",
)


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("ics") / "sql.jsonl"
    summary = import_tasks("intercode-sql", None, out, skip_bad=True)
    return summary, {t.id: t for t in read_tasks(out)}


def test_every_question_is_imported_or_refused_with_its_reason(imported) -> None:
    summary, tasks = imported
    assert summary.count + len(summary.skipped) == 23
    assert summary.count == len(tasks) >= 18
    for line in summary.skipped:
        assert "sql_queries.csv: row " in line and "field 'gold_sql'" in line
    task = tasks["intercode-sql/2-v1"]  # dogs raised by female students: one count
    assert task.provenance.source == "intercode-sql"
    assert task.provenance.unit == "intercode-sql:pets_1"
    assert "Student" in task.payload["tables"] or "student" in task.payload["tables"]


def test_gold_passes_and_empty_and_wrong_answers_fail(imported, sql_verifier) -> None:
    _, tasks = imported
    for name in ("intercode-sql/2-v1", "intercode-sql/20-v1"):
        task = tasks[name]
        assert sql_verifier.verify(task, task.hidden["reference"]).passed, name
        assert not sql_verifier.verify(task, "").passed
    count = tasks["intercode-sql/2-v1"]
    wrong = count.hidden["reference"].replace("'F'", "'M'")
    assert wrong != count.hidden["reference"]
    assert not sql_verifier.verify(count, wrong).passed


def test_order_matters_only_where_the_gold_orders(imported) -> None:
    _, tasks = imported
    for task in tasks.values():
        ordered = "order by" in " ".join(task.hidden["reference"].lower().split())
        assert task.payload["order_matters"] is ordered
