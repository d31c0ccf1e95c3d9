"""issue 33: ``referee eval`` judges a domain's tasks with any policy (not only a local model),
each answer by its task's own verifier; a kind nothing can judge is refused up front."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import PolicyError
from referee.policy.base import Generation, Sampling
from referee.rollout.batched import judge_batched
from referee.tasks.model import Task, read_tasks, write_tasks


def _run(*args: str):
    return CliRunner().invoke(app, list(args))


@pytest.fixture(scope="module")
def sql(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Task]]:
    path = tmp_path_factory.mktemp("sql") / "sql.jsonl"
    made = _run("tasks", "generate", "sql-filter", "--count", "2", "--out", str(path))
    assert made.exit_code == 0, made.output
    return path, read_tasks(path)


def test_a_scripted_policy_on_sql_tasks_is_judged_by_the_sql_verifier(sql):
    path, tasks = sql
    right = str(tasks[0].hidden["reference"])  # the first task's query: wrong for the second
    r = _run("eval", "--policy", f"scripted:{right}", "--tasks", str(path), "--split", "all",
             "--json")  # fmt: skip
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["pass_at_1"] == 0.5 and data["infra_errors"] == 0
    assert data["solved"] == [tasks[0].id]


def test_a_kind_without_a_verifier_is_refused_before_any_work(tmp_path):
    custom = Task.create(name="c/1", kind="custom", prompt="do it", answer_format="text")
    path = tmp_path / "custom.jsonl"
    write_tasks(path, [custom])
    r = _run("eval", "--policy", "scripted:x", "--tasks", str(path), "--split", "all")
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and "cannot evaluate task 'c/1'" in lines[0]
    assert "no verifier is registered for task kind 'custom'" in lines[0]


class _Failing:
    """A policy whose every request fails, as a server that is down."""

    name = "failing"

    async def generate(self, messages, *, tools=None, sampling=Sampling()) -> Generation:
        raise PolicyError("connection refused")


def test_a_failed_request_is_that_answers_infra_error_not_a_verdict(sql):
    _, tasks = sql
    judged = judge_batched(_Failing(), tasks, Sampling(temperature=0.0))
    assert [row[0].infra_error for row in judged] == ["policy: connection refused"] * 2
    assert not any(row[0].passed for row in judged)
