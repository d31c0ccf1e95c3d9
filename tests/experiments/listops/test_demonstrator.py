"""The imperfect demonstrator: its draws, its proportions and its majority answer."""

from __future__ import annotations

import re

from referee.experiments.listops.demonstrator import MISCONCEPTIONS, Demonstrator
from referee.tasks.procedural import generate


def _task_with(name: str):
    pattern = MISCONCEPTIONS[name][0]
    for seed in range(2000):
        t = generate("list-ops", difficulty=0.0, seed=seed)
        if re.search(pattern, t.hidden["reference"]):
            return t
    raise AssertionError(f"no task with {name}")


def test_share_zero_writes_the_reference_and_share_one_every_misconception():
    for name in MISCONCEPTIONS:
        t = _task_with(name)
        assert Demonstrator(share=0.0).solve(t, draw=5) == t.hidden["reference"]
        wrong = Demonstrator(share=1.0).solve(t, draw=5)
        assert wrong != t.hidden["reference"]
        assert not re.search(MISCONCEPTIONS[name][0], wrong)
        assert name in Demonstrator(share=1.0).misconceptions(t, draw=5)


def test_draws_are_reproducible_and_differ_in_the_stated_proportion():
    demo = Demonstrator(share=0.65)
    t = _task_with("gt-includes-boundary")
    draws = [demo.solve(t, draw=d) for d in range(400)]
    assert draws == [demo.solve(t, draw=d) for d in range(400)]
    wrong = sum(d != t.hidden["reference"] for d in draws) / len(draws)
    # 400 Bernoulli(0.65) draws: a 5-sigma band is about +-0.12
    assert 0.53 < wrong < 0.77


def test_mode_is_the_majority_answer():
    t = _task_with("descending-forgotten")
    assert Demonstrator(share=0.65).mode(t) == Demonstrator(share=1.0).solve(t)
    assert Demonstrator(share=0.3).mode(t) == t.hidden["reference"]


def test_a_task_without_any_construct_is_always_demonstrated_right():
    demo = Demonstrator(share=1.0)
    for seed in range(300):
        t = generate("list-ops", difficulty=0.0, seed=seed)
        ref = t.hidden["reference"]
        if not any(re.search(p, ref) for p, _ in MISCONCEPTIONS.values()):
            assert demo.solve(t, draw=1) == ref
            assert demo.misconceptions(t) == []
            return
    raise AssertionError("no construct-free task in 300 seeds")
