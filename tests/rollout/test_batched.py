"""The batched single-turn route: fixed chunks in the tasks' order, seeds per sample, every
answer read as a single-turn episode reads it and judged by the task's own verifier."""

from __future__ import annotations

from typing import Any

import pytest

from referee.errors import ConfigError
from referee.policy.base import Generation, Sampling
from referee.rollout.batched import generate_batched, judge_batched
from referee.rollout.calibrate import calibrate, calibrated_outcomes, parse_keep, rate_key
from referee.rollout.evaluate import evaluate_batched


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    from typer.testing import CliRunner

    from referee.cli import app
    from referee.tasks.model import read_tasks

    out = tmp_path_factory.mktemp("tasks") / "tasks.jsonl"
    r = CliRunner().invoke(
        app, ["tasks", "generate", "list-ops", "--out", str(out), "--count", "5"]
    )
    assert r.exit_code == 0, r.output
    return read_tasks(out)


class BatchPolicy:
    """Answers with each task's reference in a chat-style fence (the whole function, then a
    usage block after it, as small chat models write) where ``good`` says so, else prose; it
    records every batch it was asked for."""

    def __init__(self, tasks: list[Any], good: set[int]) -> None:
        self.by_prompt = {t.prompt[-1].content: (i, t) for i, t in enumerate(tasks)}
        self.good = good
        self.batches: list[tuple[list[int], int | None]] = []

    async def generate_batch(self, conversations: list[Any], sampling: Sampling) -> list[Any]:
        indices, out = [], []
        for messages in conversations:
            i, task = self.by_prompt[messages[-1]["content"]]
            indices.append(i)
            if i in self.good:
                code = task.payload["code_prompt"] + task.hidden["reference"]
                text = f"Here it is:\n```python\n{code}```\n"
            else:
                text = "I am not sure how to write this."
            out.append(Generation(message={"role": "assistant", "content": text},
                                  completion_tokens=len(text.split())))  # fmt: skip
        self.batches.append((indices, sampling.seed))
        return out


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
    with pytest.raises(ConfigError, match="--keep must be LO..HI"):
        parse_keep(text)
