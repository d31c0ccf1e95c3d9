"""referee's OpenRLHF agent without openrlhf (its contract test runs in the openrlhf venv:
tests/trainers/test_openrlhf_contract.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from referee.errors import ConfigError
from referee.tasks.model import read_tasks
from referee.train import lookup
from referee.train.openrlhf import RefereeAgent, openrlhf_row
from referee.verify.redteam import EXPLOITS

FIXTURE = Path(__file__).parents[1] / "trainers" / "fixtures" / "he3.jsonl"
TASKS = read_tasks(FIXTURE)
TRAIN = [t for t in TASKS if t.split == "train"]
HELDOUT = next(t for t in TASKS if t.split != "train")
EXPLOIT = {e.name: e for e in EXPLOITS}


@pytest.fixture(autouse=True)
def task_file(monkeypatch):
    monkeypatch.setenv(lookup.TASKS_ENV, str(FIXTURE))


def episode(label, text):
    async def go():
        agent = RefereeAgent()
        assert (await agent.reset({"observation": "P", "label": label}))["observation"] == "P"
        return await agent.step({"action_text": text, "sampling_params": None})

    return asyncio.run(go())


def test_gold_1_empty_and_exploit_0():
    t = TRAIN[0]
    good = "```python\n" + t.payload["code_prompt"] + t.hidden["reference"] + "```"
    out = episode(t.id, good)
    assert out["rewards"].item() == 1.0 and out["done"] and out["environment_feedback"] == ""
    bad = "```python\n" + t.payload["code_prompt"] + EXPLOIT["mock-any"].completion(t) + "```"
    assert episode(f'{{"task_id": "{t.id}"}}', bad)["rewards"].item() == 0.0
    assert episode(t.id, "")["rewards"].item() == 0.0


def test_heldout_refused_and_unknown_task_is_an_error():
    with pytest.raises(ConfigError, match="held out"):
        episode(HELDOUT.id, "x")
    with pytest.raises(ConfigError, match="not in"):
        episode("no/such", "x")


def test_rows_never_carry_hidden_data():
    row = openrlhf_row(TRAIN[0])
    assert row["task_id"] == TRAIN[0].id and TRAIN[0].hidden["reference"].strip() not in str(row)
