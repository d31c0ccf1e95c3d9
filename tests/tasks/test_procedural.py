import pytest

from referee.errors import ConfigError
from referee.tasks.procedural import FAMILIES, generate, generate_many


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_same_seed_same_task_other_seed_other_task(family):
    a = generate(family, difficulty=0.4, seed=11)
    assert a == generate(family, difficulty=0.4, seed=11)
    assert a.content_hash != generate(family, difficulty=0.4, seed=12).content_hash
    assert a.id == f"proc/{family}-d40-s11-v1"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_difficulty_scales_the_features(family):
    easy = generate(family, difficulty=0.0, seed=1).difficulty
    hard = generate(family, difficulty=1.0, seed=1).difficulty
    assert easy.estimate == 0.0 and hard.estimate == 1.0
    assert sum(hard.features.values()) > sum(easy.features.values())


def test_unlimited_variants_are_distinct():
    hashes = {t.content_hash for t in generate_many("list-pipeline", count=200)}
    assert len(hashes) == 200


def test_bad_arguments_are_config_errors():
    with pytest.raises(ConfigError, match="available"):
        generate("nope", difficulty=0.5, seed=0)
    with pytest.raises(ConfigError, match="between 0 and 1"):
        generate("recurrence", difficulty=2, seed=0)


def test_recorded_tasks_verify_their_gold_and_reject_wrong_answers(harness_sb, verifier):
    from referee.verify.record import record_function_tasks

    drafts = [
        generate(f, difficulty=d, seed=s) for f in FAMILIES for d in (0.0, 0.5, 1.0) for s in (1, 2)
    ]
    tasks = record_function_tasks(harness_sb, drafts)
    assert all("Examples:" in t.user_prompt and len(t.hidden["inputs"]) >= 20 for t in tasks)
    gold = verifier.verify_many([(t, t.hidden["reference"]) for t in tasks])
    assert all(v.passed for v in gold), [v.task_id for v in gold if not v.passed]
    wrong = verifier.verify_many([(t, "    return None\n") for t in tasks])
    assert not any(v.passed for v in wrong)
