"""Families: reproducible, both engines, gold passes and the empty answer earns 0."""

from __future__ import annotations

from typing import Any

import pytest

from referee.domains import family_names, generate_family
from referee.domains.sql import families
from referee.domains.sql.database import Database, Engine
from referee.domains.sql.families import FAMILY_NAMES, make_task
from referee.domains.sql.verifier import SqlVerifier
from referee.errors import ConfigError, TaskError
from referee.tasks.model import Task


def test_the_families_are_registered_under_the_sql_domain() -> None:
    assert set(FAMILY_NAMES) <= set(family_names("sql"))
    assert len(FAMILY_NAMES) == 5


def test_generation_is_seeded_and_reproducible() -> None:
    a = generate_family("sql-filter", count=2, seed=5, difficulty=0.3)
    b = generate_family("sql-filter", count=1, seed=5, difficulty=0.3)
    assert a[0].content_hash == b[0].content_hash
    assert [t.payload["engine"] for t in a] == ["duckdb", "sqlite"]  # odd seed: DuckDB
    assert a[0].provenance.unit == "sql:sql-filter/price-range"
    assert a[0].kind.value == "sql" and a[0].domain == "sql"


def test_hidden_instances_differ_from_the_sample_and_each_other(sqlite_task: Task) -> None:
    instances = sqlite_task.hidden["instances"]
    assert len(instances) == 4
    assert sqlite_task.payload["sample"] not in instances
    answers = [str(e["rows"]) for e in sqlite_task.hidden["expected"]]
    assert len(set(answers)) > 1
    # Nothing hidden reaches the prompt.
    assert sqlite_task.hidden["reference"] not in sqlite_task.user_prompt


def test_a_difficulty_outside_0_1_is_refused() -> None:
    with pytest.raises(ConfigError, match="difficulty"):
        generate_family("sql-join", count=1, difficulty=1.5)


def test_gold_passes_and_empty_scores_zero(sql_verifier: SqlVerifier) -> None:
    # One task per family, the engines alternating (seed parity), the difficulty spread; the
    # bench runs every shape of every family on both engines.
    for i, family in enumerate(FAMILY_NAMES):
        task = generate_family(family, count=1, seed=i, difficulty=i / 4)[0]
        gold = sql_verifier.verify(task, f"Here it is:\n```sql\n{task.hidden['reference']}\n```")
        assert gold.passed and gold.reward == 1.0, (task.id, gold.tests, gold.infra_error)
        empty = sql_verifier.verify(task, "")
        assert empty.reward == 0.0 and not empty.passed and empty.infra_error is None


def _empty_for(draws: int, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the reference return no rows on the hidden databases of the first ``draws`` draws
    (each draw runs it on the sample, then on the 4 instances); the count of draws made."""
    real = families.reference_result
    calls = [0]

    def fake(sql: str, db: Database, engine: Engine) -> dict[str, Any]:
        calls[0] += 1
        result = real(sql, db, engine)
        draw, at = divmod(calls[0] - 1, 1 + families.HIDDEN_INSTANCES)
        if draw < draws and at > 0:  # a hidden database's result: emptied
            return {**result, "rows": []}
        return result

    monkeypatch.setattr(families, "reference_result", fake)
    return calls


def test_a_gold_empty_on_every_hidden_database_is_never_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every one of the usual 12 draws comes back empty on the hidden databases: drawing goes on.
    _empty_for(12, monkeypatch)
    task = make_task("sql-aggregate", 0.7, 0)
    assert any(e["rows"] for e in task.hidden["expected"])


def test_a_family_that_only_draws_empty_golds_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    _empty_for(10_000, monkeypatch)
    with pytest.raises(TaskError, match=r"sql-aggregate.*no rows on any hidden database"):
        make_task("sql-aggregate", 0.7, 0)


def test_generated_golds_are_never_empty_everywhere() -> None:
    for i, family in enumerate(FAMILY_NAMES):
        for task in generate_family(family, count=3, seed=10 * i, difficulty=None):
            assert any(e["rows"] for e in task.hidden["expected"]), task.id
            if task.payload["engine"] == "duckdb":  # DuckDB reports the gold's column types
                assert all(len(e["types"]) == len(e["columns"]) for e in task.hidden["expected"])
