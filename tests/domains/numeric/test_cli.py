"""The CLI round trip: generate a family's tasks, take their references as samples, verify."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from referee.cli import app


def test_generate_gold_verify_round_trip(tmp_path):
    runner = CliRunner()
    tasks = tmp_path / "tasks.jsonl"
    r = runner.invoke(
        app,
        ["tasks", "generate", "num-root", "--count", "2", "--seed", "3", "--out", str(tasks)],
    )
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in tasks.read_text().splitlines()]
    assert [row["kind"] for row in rows] == ["numeric", "numeric"]
    assert {row["provenance"]["unit"] for row in rows} == {
        "num-root/kepler",
        "num-root/contraction-system",
    }
    r = runner.invoke(app, ["tasks", "gold", str(tasks)])
    assert r.exit_code == 0, r.output
    gold = tmp_path / "gold.jsonl"
    gold.write_text(r.stdout)
    r = runner.invoke(app, ["verify", "--tasks", str(tasks), "--samples", str(gold), "--json"])
    assert r.exit_code == 0, r.output
    verdicts = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert [v["passed"] for v in verdicts] == [True, True]
