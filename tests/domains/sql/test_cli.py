"""The CLI round trip: generate, gold, verify (the sandbox behind each)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from referee.cli import app


def test_generate_gold_verify(tmp_path: Path) -> None:
    runner = CliRunner()
    tasks = tmp_path / "sql.jsonl"
    r = runner.invoke(app, ["tasks", "generate", "sql-nested", "--count", "2", "--seed", "3",
                            "--out", str(tasks)])  # fmt: skip
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["tasks", "gold", str(tasks)])
    assert r.exit_code == 0, r.output
    gold = tmp_path / "gold.jsonl"
    gold.write_text(r.stdout)
    r = runner.invoke(app, ["verify", "--tasks", str(tasks), "--samples", str(gold), "--json"])
    assert r.exit_code == 0, r.output
    verdicts = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    assert [v["reward"] for v in verdicts] == [1.0, 1.0]
