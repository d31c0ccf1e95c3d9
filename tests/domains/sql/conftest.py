"""One SQL verifier (and its sandbox) for the whole module set, and a few generated tasks."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from referee.domains.sql.families import make_task
from referee.domains.sql.verifier import SqlVerifier
from referee.tasks.model import Task


@pytest.fixture(scope="package")
def sql_verifier() -> Iterator[SqlVerifier]:
    with SqlVerifier() as v:
        yield v


@pytest.fixture(scope="package")
def sqlite_task() -> Task:
    return make_task("sql-join", 0.7, 0)  # category-buyers, SQLite


@pytest.fixture(scope="package")
def duckdb_task() -> Task:
    return make_task("sql-window", 1.0, 1)  # running-revenue, DuckDB
