"""``referee tasks calibrate``'s library: rates per model in the task file, the learning zone,
and the pseudo-outcomes a curriculum starts from."""

from __future__ import annotations

from typing import Any

import pytest

from referee.errors import ConfigError
from referee.rollout.calibrate import calibrate, calibrated_outcomes, parse_keep, rate_key
from tests.rollout.batch_policy import BatchPolicy, list_ops_tasks


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    return list_ops_tasks(tmp_path_factory.mktemp("tasks"))


def test_calibration_records_each_rate_under_the_model_and_keeps_the_zone(tasks):
    policy = BatchPolicy(tasks, good={2, 4})
    result = calibrate(policy, tasks, model="pkg:m", samples=2, temperature=0.7, max_tokens=64)
    assert [result.rates[t.id] for t in tasks] == [0.0, 0.0, 1.0, 0.0, 1.0]
    for t in result.tasks:
        assert t.difficulty.features[f"{rate_key('pkg:m')}:samples"] == 2.0
        # calibration does not change what a task is
        assert t.content_hash == next(x for x in tasks if x.id == t.id).content_hash
    assert [t.id for t in result.kept((0.5, 1.0))] == [tasks[2].id, tasks[4].id]
    outcomes = calibrated_outcomes(result.tasks, "pkg:m")
    assert outcomes[tasks[2].id] == [1.0, 1.0] and outcomes[tasks[0].id] == [0.0, 0.0]
    assert calibrated_outcomes(result.tasks, "another-model") == {}


@pytest.mark.parametrize("text", ["0.9..0.1", "a..b", "0.5", "0..1.5"])
def test_a_bad_keep_range_is_refused(text):
    with pytest.raises(ConfigError, match=r"--keep must be LO\.\.HI"):
        parse_keep(text)
