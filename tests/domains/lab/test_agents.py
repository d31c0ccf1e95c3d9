"""The scripted agents: the reference scientist solves what the naive one cannot, within the
budget; the difficulty knob is what separates them."""

from referee.domains import generate_family
from referee.domains.lab.agents import play
from referee.domains.lab.env import LabEnv


def _mean(verdicts):
    return sum(v.reward for v in verdicts) / len(verdicts)


def test_the_reference_agent_passes_easy_tasks_within_the_budget():
    tasks = generate_family("lab-population", count=3, difficulty=0.0, seed=100)
    tasks += generate_family("lab-kinetics", count=2, difficulty=0.0, seed=100)
    for task in tasks:
        env = LabEnv()
        assert play(task, "gold", env).passed, task.id
        assert len(env.laboratory.observations) == task.payload["budget"]
        assert env.laboratory.refused == 0


def test_on_hard_tasks_the_reference_agent_beats_the_naive_one_and_guessing():
    tasks = generate_family("lab-kinetics", count=4, difficulty=1.0, seed=100)
    tasks += generate_family("lab-population", count=4, difficulty=1.0, seed=100)
    gold = [play(t, "gold") for t in tasks]
    naive = [play(t, "naive") for t in tasks]
    prior = [play(t, "prior") for t in tasks]
    assert _mean(gold) >= 0.9 and sum(v.passed for v in gold) >= 5
    assert _mean(naive) <= _mean(gold) - 0.15
    assert _mean(prior) <= 0.25


def test_on_easy_tasks_even_the_naive_agent_does_well():
    tasks = generate_family("lab-population", count=4, difficulty=0.0, seed=100)
    assert _mean([play(t, "naive") for t in tasks]) >= 0.9


def test_circuits_need_early_samples_and_the_second_law_at_the_hard_end():
    tasks = generate_family("lab-circuits", count=6, difficulty=1.0, seed=500)
    gold = [play(t, "gold") for t in tasks]
    naive = [play(t, "naive") for t in tasks]
    assert sum(v.passed for v in gold) >= 5
    assert _mean(naive) <= _mean(gold) - 0.3
