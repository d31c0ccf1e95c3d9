"""The command line round trip: generate a family's tasks, take their references as samples,
verify them (all pass), and verify empty answers (none pass)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from referee.cli import app


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(app, list(args))


def test_generate_gold_verify_round_trip(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    r = invoke(
        "tasks", "generate", "ops-logrotate", "--count", "2", "--seed", "5", "--out", str(tasks)
    )
    assert r.exit_code == 0, r.output
    assert len(tasks.read_text().splitlines()) == 2
    r = invoke("tasks", "gold", str(tasks))
    assert r.exit_code == 0, r.output
    gold = tmp_path / "gold.jsonl"
    gold.write_text(r.stdout)
    samples = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(samples) == 2 and all("mv app.log" in s["completion"] for s in samples)
    r = invoke("verify", "--tasks", str(tasks), "--samples", str(gold), "--json")
    assert r.exit_code == 0, r.output
    verdicts = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert [v["passed"] for v in verdicts] == [True, True]
    empty = tmp_path / "empty.jsonl"
    empty.write_text(
        "".join(json.dumps({"task_id": s["task_id"], "completion": ""}) + "\n" for s in samples)
    )
    r = invoke("verify", "--tasks", str(tasks), "--samples", str(empty), "--json")
    verdicts = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert [v["passed"] for v in verdicts] == [False, False]
    assert all(v["infra_error"] is None for v in verdicts)
