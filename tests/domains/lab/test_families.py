"""The families: seeded, reproducible, the knob at work, the hidden data out of the prompt."""

import json
import re

import pytest

from referee.domains import generate_family
from referee.domains.lab.families import HOLDOUT, PILOT, SYSTEMS, system_of
from referee.domains.lab.system import Settings

FAMILIES = ["lab-kinetics", "lab-population", "lab-pharmacology", "lab-circuits"]


@pytest.mark.parametrize("family", FAMILIES)
def test_a_seed_makes_the_same_task_and_another_seed_another(family):
    a = generate_family(family, count=2, difficulty=0.7, seed=5)
    b = generate_family(family, count=2, difficulty=0.7, seed=5)
    assert [t.content_hash for t in a] == [t.content_hash for t in b]
    assert a[0].hidden["params"] != a[1].hidden["params"]
    assert a[0].kind.value == "lab" and a[0].answer_format == "text"


@pytest.mark.parametrize("family", FAMILIES)
def test_the_knob_sets_budget_noise_laws_and_how_far_the_held_out_runs_go(family):
    easy = generate_family(family, count=6, difficulty=0.0, seed=1)
    hard = generate_family(family, count=6, difficulty=1.0, seed=1)
    system = system_of(easy[0])
    assert {t.payload["budget"] for t in easy} == {8} and {t.payload["budget"] for t in hard} == {4}
    assert all(t.payload["laws"] == [system.simple_law] for t in easy)
    assert all(t.hidden["law"] == system.simple_law for t in easy)
    assert all(t.payload["laws"] == sorted(system.laws) for t in hard)
    assert {t.hidden["law"] for t in hard} == set(system.laws)  # both laws drawn in six

    def outside(task):
        return sum(
            not c.choices and not c.lo <= q["conditions"][c.name] <= c.hi
            for q in task.hidden["holdout"]
            for c in system.conditions
        )

    assert sum(map(outside, easy)) == 0 and sum(map(outside, hard)) > 6
    assert all(
        len(t.hidden["holdout"]) == HOLDOUT and len(t.payload["pilot"]) == PILOT for t in hard
    )


@pytest.mark.parametrize("family", FAMILIES)
def test_the_prompt_states_the_task_and_none_of_its_hidden_numbers(family):
    for task in generate_family(family, count=4, difficulty=None, seed=9):
        prompt = task.prompt[0].content
        settings = Settings.at(task.difficulty.estimate)
        assert f"run {settings.budget} more experiments" in prompt
        assert all(law in prompt for law in task.payload["laws"])
        for value in task.hidden["params"].values():
            assert repr(value) not in prompt and f"{value:.6g}" not in prompt
        assert task.hidden["noise_seed"] not in prompt
        assert json.dumps(task.hidden["holdout"][0]["conditions"]) not in prompt
        # The family is named by its system, not by its hidden law.
        law = re.compile(rf"(?<![a-z]){re.escape(task.hidden['law'])}(?![a-z])")
        assert not law.search(task.id) and not law.search(str(task.provenance))


def test_every_system_has_a_family():
    assert {f"lab-{name}" for name in SYSTEMS} == set(FAMILIES)
