"""The laboratory: the budget holds, refusals are free, noise is fresh per run and replays
exactly, and nothing it says carries the hidden law."""

import json
import math

import pytest

from referee.domains import generate_family
from referee.domains.lab.laboratory import Laboratory


@pytest.fixture
def task():
    return generate_family("lab-kinetics", count=1, difficulty=1.0, seed=4)[0]


RUN = {"A0": 1.0, "T": 305.0, "times": [2.0, 10.0, 30.0]}


def test_the_budget_holds_and_refusals_cost_nothing(task):
    lab = Laboratory(task)
    assert lab.run({**RUN, "T": 400.0}) == (False, "T must be between 290 and 320 K")
    assert lab.budget_left == 4
    replies = [lab.run(RUN) for _ in range(6)]
    assert [ok for ok, _ in replies] == [True] * 4 + [False] * 2
    assert replies[-1][1] == "the budget of 4 experiments is spent; submit your model"
    assert len(lab.observations) == 4 and lab.refused == 3


def test_a_repeated_run_draws_fresh_noise_and_a_replayed_episode_the_same(task):
    first, second = Laboratory(task), Laboratory(task)
    a = [json.loads(first.run(RUN)[1])["values"] for _ in range(3)]
    b = [json.loads(second.run(RUN)[1])["values"] for _ in range(3)]
    assert a == b  # the same episode, the same numbers
    assert a[0] != a[1] != a[2]  # the same experiment again, other noise


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"seed": 0}, "unknown argument(s) seed"),
        ({"noise": 0}, "unknown argument(s) noise"),
        ({"A0": math.nan}, "A0 must be between"),
        ({"A0": math.inf}, "A0 must be between"),
        ({"A0": "1"}, "A0 must be a number"),
        ({"A0": True}, "A0 must be a number"),
        ({"times": []}, "times must be a list of 1 to 8"),
        ({"times": list(range(1, 10))}, "times must be a list of 1 to 8"),
        ({"times": [-1]}, "each time must be between 0 and 60 min"),
        ({"times": [1e308]}, "each time must be between 0 and 60 min"),
        ({"times": [math.nan]}, "each time must be between 0 and 60 min"),
        ({"times": ["5"]}, "times must be numbers"),
    ],
)
def test_bad_arguments_are_refused_with_the_reason(task, change, why):
    ok, text = Laboratory(task).run({**RUN, **change})
    assert not ok and text.startswith(why)


def test_missing_arguments_are_named(task):
    assert Laboratory(task).run({"A0": 1.0}) == (False, "missing argument(s) T, times")


def test_no_reply_carries_a_hidden_number_or_name(task):
    lab = Laboratory(task)
    texts = [lab.run(RUN)[1], lab.run({**RUN, "seed": 1})[1], lab.run({**RUN, "A0": -1})[1]]
    texts += [lab.run(RUN)[1] for _ in range(5)]
    secrets = [task.hidden["noise_seed"], task.hidden["law"]]
    secrets += [f"{v:.6g}" for v in task.hidden["params"].values()]
    for text in texts:
        assert not any(s in text for s in secrets), text
