"""CLI round trip: generate a family, take its gold samples, verify them."""

import json

from typer.testing import CliRunner

from referee.cli import app


def test_generate_gold_verify_round_trip(tmp_path):
    tasks, gold = tmp_path / "t.jsonl", tmp_path / "gold.jsonl"
    run = CliRunner().invoke
    r = run(
        app,
        ["tasks", "generate", "shop-cancel", "--count", "3", "--seed", "4", "--out", str(tasks)],
    )
    assert r.exit_code == 0, r.output
    r = run(app, ["tasks", "gold", str(tasks)])
    assert r.exit_code == 0, r.output
    gold.write_text(r.stdout)
    assert len(gold.read_text().splitlines()) == 3
    r = run(app, ["verify", "--tasks", str(tasks), "--samples", str(gold), "--json"])
    assert r.exit_code == 0, r.output
    verdicts = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert len(verdicts) == 3 and all(v["passed"] for v in verdicts)
