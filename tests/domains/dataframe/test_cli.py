"""The command line round trip: generate a family's tasks, take their references as samples,
verify them; and the domain's parts are reachable by name."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from referee.cli import app
from referee.domains import family_names
from referee.domains.dataframe.families import FAMILIES, draft_for, plan_for
from referee.tasks.model import read_tasks
from referee.tasks.sources import source_names


def test_generate_gold_verify_round_trip(tmp_path: Path):
    runner = CliRunner()
    tasks = tmp_path / "tasks.jsonl"
    r = runner.invoke(
        app, ["tasks", "generate", "df-window", "--count", "2", "--seed", "5", "--out", str(tasks)]
    )
    assert r.exit_code == 0, r.output
    made = read_tasks(tasks)
    assert [t.kind.value for t in made] == ["dataframe", "dataframe"]
    assert [t.difficulty.estimate for t in made] == [0.0, 0.1]
    gold = runner.invoke(app, ["tasks", "gold", str(tasks)])
    assert gold.exit_code == 0, gold.output
    samples = tmp_path / "gold.jsonl"
    samples.write_text(gold.stdout)
    assert {json.loads(line)["task_id"] for line in gold.stdout.splitlines()} == {
        t.id for t in made
    }
    r = runner.invoke(
        app, ["verify", "--tasks", str(tasks), "--samples", str(samples), "--workers", "1"]
    )
    assert r.exit_code == 0, r.output
    assert "2 samples: 2 passed, 0 failed, 0 infra errors" in r.stdout


def test_families_are_seeded_and_the_knob_adds_steps():
    assert set(family_names("dataframe")) == set(FAMILIES)
    assert "dataframe-rows" in source_names()
    for family in FAMILIES:
        assert draft_for(family, 0.5, 11) == draft_for(family, 0.5, 11)
        assert draft_for(family, 0.5, 11).hidden_inputs != draft_for(family, 0.5, 12).hidden_inputs
        easy, hard = draft_for(family, 0.0, 11), draft_for(family, 1.0, 11)
        assert easy.features["rows"] < hard.features["rows"]
        assert easy.unit and easy.unit.startswith(family + "/")
    assert plan_for("df-window", 0.0, 1).steps < plan_for("df-window", 1.0, 1).steps
    assert plan_for("df-join-aggregate", 0.0, 1).steps < plan_for("df-join-aggregate", 1.0, 1).steps
