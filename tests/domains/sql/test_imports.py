"""The text-to-sql import: a SQLite file and inline DDL rows make tasks; a bad row writes nothing."""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import referee
from referee.domains.sql.verifier import SqlVerifier
from referee.errors import TaskError
from referee.tasks.imports import import_tasks
from referee.tasks.model import read_tasks

_DDL = "CREATE TABLE singer (id INTEGER, name TEXT, age INTEGER, country TEXT);"
_INSERTS = [
    f"INSERT INTO singer VALUES ({i}, 'S{i}', {20 + (i * 7) % 30}, '{c}')"
    for i, c in enumerate(["FR", "US", "FR", "NL", "US", "FR"] * 8)
]


def _write(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    db = tmp_path / "dbs" / "concert.sqlite"
    db.parent.mkdir(exist_ok=True)
    if not db.exists():
        con = sqlite3.connect(db)
        con.executescript(_DDL + ";\n".join(_INSERTS) + ";")
        con.commit()
        con.close()
    path = tmp_path / "t2s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_good_file_imports_and_its_gold_passes(tmp_path: Path, sql_verifier: SqlVerifier) -> None:
    path = _write(
        tmp_path,
        [
            {"id": "q1", "question": "How many singers are from France?", "db": "dbs/concert.sqlite",
             "gold_sql": "SELECT count(*) FROM singer WHERE country = 'FR'"},
            {"id": "q2", "question": "Names of the singers older than 40, oldest first.",
             "ddl": _DDL, "inserts": _INSERTS, "order_matters": True, "evidence": "older: age > 40",
             "column_names_matter": True,
             "gold_sql": "SELECT name FROM singer WHERE age > 40 ORDER BY age DESC, id"},
        ],
    )  # fmt: skip
    out = tmp_path / "tasks.jsonl"
    summary = import_tasks("text-to-sql", path, out, split="train")
    assert summary.count == 2
    tasks = read_tasks(out)
    assert [t.id for t in tasks] == ["text-to-sql/q1-v1", "text-to-sql/q2-v1"]
    assert tasks[0].provenance.unit == "text-to-sql:concert"
    assert len(tasks[0].hidden["instances"]) == 2  # the database and a row-shuffled copy
    assert "Hint: older" in tasks[1].user_prompt
    for t in tasks:
        assert sql_verifier.verify(t, t.hidden["reference"]).passed
        assert sql_verifier.verify(t, "").reward == 0.0
    # LIMIT without ORDER BY reads rows in stored order: the shuffled copy catches it.
    v = sql_verifier.verify(tasks[1], "SELECT name FROM singer WHERE age > 40 ORDER BY age DESC")
    assert not v.passed
    # The question asks for named columns: the name counts, its case does not.
    assert "Name the columns name" in tasks[1].user_prompt
    renamed = "SELECT name AS who FROM singer WHERE age > 40 ORDER BY age DESC, id"
    assert not sql_verifier.verify(tasks[1], renamed).passed
    assert sql_verifier.verify(tasks[1], renamed.replace("AS who", "AS NAME")).passed


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"question": "q", "db": "dbs/none.sqlite", "gold_sql": "SELECT 1"}, "db"),
        (
            {"question": "q", "db": "dbs/concert.sqlite", "gold_sql": "SELECT nope FROM singer"},
            "gold_sql",
        ),
        ({"question": "q", "ddl": _DDL, "gold_sql": "SELECT 1"}, "db"),
        (
            {"question": "q", "ddl": "ATTACH 'x.db' AS e", "inserts": "", "gold_sql": "SELECT 1"},
            "ddl",
        ),
        ({"db": "dbs/concert.sqlite", "gold_sql": "SELECT 1"}, "question"),
        (
            {"question": "q", "db": "dbs/concert.sqlite", "gold_sql": "DELETE FROM singer"},
            "gold_sql",
        ),
    ],
)
def test_a_malformed_row_names_file_row_and_field(
    tmp_path: Path, row: dict[str, object], field: str
) -> None:
    good = {"question": "q", "db": "dbs/concert.sqlite", "gold_sql": "SELECT 1"}
    path = _write(tmp_path, [good, row])
    out = tmp_path / "tasks.jsonl"
    with pytest.raises(TaskError, match=rf"t2s.jsonl:2: field '{field}'"):
        import_tasks("text-to-sql", path, out, split="train")
    assert not out.exists()


def test_a_gold_query_that_never_ends_is_interrupted_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from referee.domains.sql import database

    monkeypatch.setattr(database, "TRUSTED_TIMEOUT_S", 0.5)
    endless = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
    )
    row = {"question": "q", "db": "dbs/concert.sqlite", "gold_sql": endless}
    path = _write(tmp_path, [row])
    out = tmp_path / "tasks.jsonl"
    with pytest.raises(TaskError, match=r"t2s.jsonl:1: field 'gold_sql'.*interrupted"):
        import_tasks("text-to-sql", path, out, split="train")
    assert not out.exists()


def test_a_gold_with_no_rows_is_imported_with_a_warning_naming_the_task(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, sql_verifier: SqlVerifier
) -> None:
    path = _write(
        tmp_path,
        [
            {"id": "q9", "question": "Singers older than 90?", "db": "dbs/concert.sqlite",
             "gold_sql": "SELECT name, age FROM singer WHERE age > 90"},
            {"id": "q1", "question": "How many singers are from France?", "db": "dbs/concert.sqlite",
             "gold_sql": "SELECT count(*) FROM singer WHERE country = 'FR'"},
        ],
    )  # fmt: skip
    out = tmp_path / "tasks.jsonl"
    with caplog.at_level(logging.WARNING, logger="referee.domains.sql.imports"):
        import_tasks("text-to-sql", path, out, split="train")
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "\n" not in warned[0]
    assert "'text-to-sql/q9-v1'" in warned[0] and f"{path}:1" in warned[0]
    assert "returns no rows" in warned[0] and "2 column(s)" in warned[0]
    # imported all the same; an empty result with other columns fails it
    task = read_tasks(out)[0]
    assert sql_verifier.verify(task, task.hidden["reference"]).passed
    assert not sql_verifier.verify(task, "SELECT name FROM singer WHERE age > 90").passed


def test_tasks_import_prints_the_warning_on_one_line(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"id": "q9", "question": "q", "db": "dbs/concert.sqlite",
                              "gold_sql": "SELECT name FROM singer WHERE 0"}])  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(Path(referee.__file__).parents[1])}
    p = subprocess.run(
        [sys.executable, "-m", "referee", "tasks", "import", "text-to-sql", str(path),
         "--out", str(tmp_path / "t.jsonl")],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stderr.splitlines() if "q9" in ln]
    assert len(lines) == 1 and "returns no rows" in lines[0], p.stderr
