"""reasoning-gym's datasets as families: every dataset is offered or left out with a reason,
the difficulty knob drives the dataset's curriculum, tasks are reproducible, and the verifier
dispatch judges them (gold passes, empty fails)."""

from __future__ import annotations

import pytest

pytest.importorskip("reasoning_gym", reason="the reasoning extra (requirements.lock has it)")

from referee.domains import family_names, generate_family
from referee.domains.reasoning.catalog import DATASETS, EXCLUDED
from referee.errors import ConfigError
from referee.verify.dispatch import VerifierSet


def test_every_reasoning_gym_dataset_is_offered_or_left_out_with_a_reason():
    import reasoning_gym

    names = set(reasoning_gym.factory.DATASETS)
    assert set(DATASETS).isdisjoint(EXCLUDED)
    assert set(DATASETS) | set(EXCLUDED) == names
    assert all(len(why) > 20 for why in EXCLUDED.values())
    assert {f"rg-{n}" for n in DATASETS} <= set(family_names("reasoning"))


def test_difficulty_sets_the_curriculum_levels_and_tasks_repeat():
    easy, hard = (generate_family("rg-chain_sum", count=1, difficulty=d, seed=5)[0] for d in (0, 1))
    assert set(easy.difficulty.features.values()) == {0.0}
    assert min(hard.difficulty.features.values()) > 0
    assert hard.payload["config"]["max_terms"] > easy.payload["config"]["max_terms"]
    again = generate_family("rg-chain_sum", count=1, difficulty=1, seed=5)[0]
    assert again.content_hash == hard.content_hash and again.id == "rg/chain_sum-d100-s5-v1"
    assert hard.kind.value == "reasoning" and hard.answer_format == "text"
    assert hard.hidden["answer"] not in hard.user_prompt.split("=")[-1]


def test_a_left_out_dataset_is_refused_naming_why():
    from referee.domains.reasoning.families import generate

    with pytest.raises(ConfigError, match=r"countdown.*sympy\.parse_expr"):
        generate("countdown")


@pytest.mark.parametrize("family", ["rg-gcd", "rg-n_queens", "rg-word_sorting", "rg-coin_flip"])
def test_gold_passes_and_empty_fails_through_the_dispatch(family):
    tasks = generate_family(family, count=3, seed=11)
    with VerifierSet() as verifiers:
        gold = list(verifiers.verify_many([(t, t.hidden["reference"]) for t in tasks]))
        empty = list(verifiers.verify_many([(t, "") for t in tasks]))
    assert all(v.passed and v.reward == 1.0 for v in gold)
    assert not any(v.passed or v.reward for v in empty)
    assert all(v.tests[0].status == "missing" for v in empty)
