"""Toolworld families: seeded and reproducible, gold passes, doing nothing fails."""

import json

import pytest

from referee.domains import family_names, generate_family
from referee.domains.toolworld.verifier import ToolworldVerifier

FAMILIES = [
    "calendar-schedule",
    "mail-followup",
    "shop-cancel",
    "shop-exchange",
    "shop-refund",
    "ticket-triage",
]


def test_the_six_families_are_registered_under_the_domain():
    assert family_names("toolworld") == FAMILIES


@pytest.mark.parametrize("family", FAMILIES)
def test_gold_passes_and_empty_fails_across_the_difficulty_range(family):
    tasks = generate_family(family, count=3, seed=5) + generate_family(
        family, count=1, difficulty=1.0, seed=9
    )
    verifier = ToolworldVerifier()
    for t in tasks:
        assert t.kind.value == "toolworld" and t.answer_format == "tool-state"
        assert t.provenance.unit.startswith(f"toolworld:{family}:")
        gold = verifier.verify(t, t.hidden["reference"])
        assert gold.passed and gold.reward == 1.0, gold.tests
        empty = verifier.verify(t, "")
        assert not empty.passed and empty.reward == 0.0


def test_same_seed_same_task_and_difficulty_adds_steps():
    a = generate_family("shop-refund", count=2, difficulty=0.9, seed=3)
    b = generate_family("shop-refund", count=2, difficulty=0.9, seed=3)
    assert [t.id for t in a] == [t.id for t in b]
    easy = generate_family("ticket-triage", count=1, difficulty=0.0, seed=3)[0]
    hard = generate_family("ticket-triage", count=1, difficulty=1.0, seed=3)[0]
    assert hard.difficulty.features["steps"] > easy.difficulty.features["steps"]
    assert easy.difficulty.estimate == 0.0 and hard.difficulty.estimate == 1.0


def test_the_reference_is_a_json_plan_and_the_seeded_store_is_plain_sql():
    t = generate_family("mail-followup", count=1, difficulty=0.6, seed=1)[0]
    plan = json.loads(t.hidden["reference"])
    assert all(set(c) == {"name", "arguments"} for c in plan)
    assert "CREATE TABLE mail" in t.payload["init_sql"]
    assert t.hidden["free_text"] == {"mail": ["body"]}
