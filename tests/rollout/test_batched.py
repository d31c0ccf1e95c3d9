"""The batched single-turn route: fixed chunks in the tasks' order, seeds per sample, every
answer read as a single-turn episode reads it and judged by the task's own verifier."""

from __future__ import annotations

from typing import Any

import pytest

from referee.policy.base import Sampling
from referee.rollout.batched import generate_batched, judge_batched
from referee.rollout.evaluate import evaluate_batched
from tests.rollout.batch_policy import BatchPolicy, list_ops_tasks


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    return list_ops_tasks(tmp_path_factory.mktemp("tasks"))


def test_chunks_are_fixed_in_the_tasks_order_and_seeds_follow_the_sample(tasks):
    policy = BatchPolicy(tasks, good=set())
    gens = generate_batched(policy, tasks, Sampling(seed=10), samples=2, batch=2)
    assert [len(g) for g in gens] == [2] * 5
    assert policy.batches == [
        ([0, 1], 10),
        ([0, 1], 11),
        ([2, 3], 10),
        ([2, 3], 11),
        ([4], 10),
        ([4], 11),
    ]


def test_answers_are_judged_by_the_tasks_verifier_and_prose_never_ran(tasks):
    policy = BatchPolicy(tasks, good={0, 3})
    judged = judge_batched(policy, tasks, Sampling(temperature=0.0), batch=4)
    assert [row[0].passed for row in judged] == [True, False, False, True, False]
    # the reference ran and passed; prose never reached a test
    assert [row[0].ran for row in judged] == [True, False, False, True, False]
    assert all(row[0].infra_error is None for row in judged)


def test_evaluate_batched_reports_pass_at_1_the_format_share_and_pass_at_k(tasks):
    policy = BatchPolicy(tasks, good={1})
    result = evaluate_batched(policy, tasks, samples=2, batch=3)
    assert result.pass_at_1 == pytest.approx(0.2) and result.solved == [tasks[1].id]
    assert result.ran == [False, True, False, False, False]
    assert result.pass_at_k[1] == pytest.approx(0.2) and result.pass_at_k[2] == pytest.approx(0.2)
