"""RolloutRunner: concurrency, groups, order, limits, fault isolation and retries."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from referee.envs.base import EpisodeLimits
from referee.errors import PolicyError
from referee.policy import Generation, PolicyOutputError, Sampling, ScriptedPolicy
from referee.rollout import RolloutRunner, Trajectory
from tests.rollout.fakes import AnswerEnv, Tracker, task


def answer_right(messages, tools):  # type: ignore[no-untyped-def]
    return "42"


def runner(policy: Any = None, tracker: Tracker | None = None, **kw: Any) -> RolloutRunner:
    kw.setdefault("retry_backoff_s", 0.0)
    return RolloutRunner(lambda: AnswerEnv(tracker), policy or ScriptedPolicy(answer_right), **kw)


@dataclass
class Recorder:
    """A policy that records what it was asked with."""

    tokens: int = 0
    name: str = "recorder"
    samplings: list[Sampling] = field(default_factory=list)

    async def generate(self, messages, *, tools=None, sampling=Sampling()):  # type: ignore[no-untyped-def]
        self.samplings.append(sampling)
        return Generation(
            message={"role": "assistant", "content": "42"},
            token_ids=[1] * self.tokens,
            logprobs=[-0.1] * self.tokens,
            completion_tokens=self.tokens,
        )


def test_results_come_back_in_input_order_with_turn_data() -> None:
    tasks = [task(f"t/{i}", answer="42" if i % 2 == 0 else "7") for i in range(10)]
    # Later tasks answer sooner, so completion order is the reverse of input order.
    slow_first = ScriptedPolicy(answer_right, delay_s=lambda i: 0.002 * (10 - i))
    out = runner(slow_first, concurrency=10).run_sync(tasks)
    assert [t.task_id for t in out] == [t.id for t in tasks]
    assert [t.reward for t in out] == [1.0 if i % 2 == 0 else 0.0 for i in range(10)]
    t = out[0]
    assert t.ok and t.error is None and t.attempts == 1 and t.end_reason == "answered"
    assert t.policy == "scripted" and t.env == "answer" and t.split == "train"
    assert t.messages == [{"role": "user", "content": "What is the answer to t/0?"}]
    assert len(t.turns) == 1 and t.turns[0].assistant == {"role": "assistant", "content": "42"}
    assert set(t.timings) == {"reset_s", "policy_s", "env_s", "verify_s", "total_s"}
    assert t.timings["total_s"] >= t.timings["policy_s"] + t.timings["env_s"]
    assert t.finished_at >= t.started_at > 0


def test_concurrency_is_bounded_and_every_env_is_closed() -> None:
    tracker = Tracker()
    r = RolloutRunner(
        lambda: AnswerEnv(tracker, step_delay_s=0.02), ScriptedPolicy(answer_right), concurrency=3
    )
    out = r.run_sync([task(f"c/{i}") for i in range(12)])
    assert all(t.passed for t in out)
    assert tracker.max_live == 3
    assert tracker.created == tracker.closed == 12 and tracker.live == 0


def test_groups_share_a_group_id_and_have_g_members() -> None:
    tasks = [task(f"g/{i}") for i in range(3)]
    groups = asyncio.run(runner(concurrency=4).run_groups(tasks, 4, step=7))
    assert [len(g) for g in groups] == [4, 4, 4]
    for t, g in zip(tasks, groups, strict=True):
        assert {x.task_id for x in g} == {t.id}
        assert len({x.group_id for x in g}) == 1 and g[0].group_id is not None
        assert [x.sample_index for x in g] == [0, 1, 2, 3] and {x.step for x in g} == {7}
    assert len({g[0].group_id for g in groups}) == 3
    flat = runner(group_size=2).run_sync(tasks)
    assert [(t.task_id, t.sample_index) for t in flat] == [
        (t.id, i) for t in tasks for i in range(2)
    ]


def test_samples_of_a_group_get_distinct_seeds() -> None:
    rec = Recorder()
    asyncio.run(runner(rec, sampling=Sampling(seed=100)).run_groups([task("s/0")], 3))
    assert sorted(s.seed for s in rec.samplings) == [100, 101, 102]


def test_a_crashing_env_is_an_infra_error_retried_while_others_succeed() -> None:
    tracker = Tracker()
    tasks = [task("ok/0"), task("bad/step", payload={"fault": "step"}), task("ok/1")]
    out = runner(tracker=tracker, max_infra_retries=2).run_sync(tasks)
    good0, bad, good1 = out
    assert good0.passed and good1.passed and good0.attempts == good1.attempts == 1
    assert bad.error is not None and bad.error.kind == "infra" and bad.error.where == "env.step"
    assert "RuntimeError: sandbox died" in bad.error.message
    assert bad.attempts == 3 and not bad.ok and bad.reward is None
    # The message the environment choked on is kept.
    assert bad.turns[0].assistant["content"] == "42" and bad.turns[0].observations == []
    assert tracker.created == tracker.closed == 2 + 3


def test_a_passing_fault_is_retried_to_success() -> None:
    AnswerEnv.attempts.clear()
    (t,) = runner().run_sync([task("once/0", payload={"fault": "once"})])
    assert t.passed and t.error is None and t.attempts == 2


@pytest.mark.parametrize(
    "fault, where, text",
    [
        ("reset", "env.reset", "OSError: no workspace"),
        ("verify", "env.verify", "ValueError: verifier crashed"),
        ("infra-verdict", "verifier", "the sandbox was lost"),
        ("tools", "env", "KeyError"),
    ],
)
def test_every_env_fault_is_recorded_where_it_happened(fault: str, where: str, text: str) -> None:
    tracker = Tracker()
    t_ok, t_bad = runner(tracker=tracker, max_infra_retries=1).run_sync(
        [task("ok"), task("bad", payload={"fault": fault})]
    )
    assert t_ok.passed
    assert t_bad.error is not None and (t_bad.error.kind, t_bad.error.where) == ("infra", where)
    assert text in t_bad.error.message and t_bad.attempts == 2 and t_bad.reward is None
    assert tracker.live == 0
    if fault == "infra-verdict":
        assert t_bad.verdict is not None and t_bad.verdict.infra_error == "the sandbox was lost"


def test_an_env_factory_that_raises_is_an_infra_error() -> None:
    def factory() -> AnswerEnv:
        raise RuntimeError("no sandbox")

    (t,) = RolloutRunner(factory, ScriptedPolicy(answer_right), retry_backoff_s=0).run_sync(
        [task("f")]
    )
    assert t.error is not None and (t.error.where, t.attempts) == ("env.factory", 3)


def test_a_close_that_fails_does_not_spoil_the_result() -> None:
    (t,) = runner().run_sync([task("close", payload={"fault": "close"})])
    assert t.passed and t.error is None


def test_policy_errors_are_infra_and_retried_while_others_succeed() -> None:
    def flaky(messages, tools):  # type: ignore[no-untyped-def]
        if "down" in messages[0]["content"]:
            raise PolicyError("http://x/v1/chat/completions timed out")
        return "42"

    policy = ScriptedPolicy(flaky)
    out = runner(policy, max_infra_retries=2).run_sync(
        [task("p/ok"), task("p/down"), task("p/ok2")]
    )
    assert out[0].passed and out[2].passed
    err = out[1].error
    assert (
        err is not None
        and (err.kind, err.where) == ("infra", "policy")
        and "timed out" in err.message
    )
    assert out[1].attempts == 3 and out[1].turns == []
    assert policy.calls == 2 + 3


@pytest.mark.parametrize(
    "reply",
    [
        {"role": "assistant", "content": None},
        {"role": "user", "content": "42"},
        PolicyOutputError("the server returned no choices"),
    ],
)
def test_no_usable_message_is_a_model_error_and_not_retried(reply: Any) -> None:
    policy = ScriptedPolicy([reply])
    (t,) = runner(policy).run_sync([task("m")])
    assert t.error is not None and (t.error.kind, t.error.where) == ("model", "policy")
    assert t.attempts == 1 and t.ok and t.reward is None and policy.calls == 1


def test_a_hanging_step_is_cut_by_the_watchdog() -> None:
    limits = EpisodeLimits(step_timeout_s=0.1)
    start = time.perf_counter()
    (t,) = runner(limits=limits, grace_s=0.1, max_infra_retries=1).run_sync(
        [task("h", payload={"fault": "hang"})]
    )
    assert time.perf_counter() - start < 2
    assert t.error is not None and (t.error.kind, t.error.where) == ("infra", "env.step")
    assert "0.2s" in t.error.message and t.attempts == 2


def test_a_hanging_policy_is_cut_by_the_watchdog() -> None:
    policy = ScriptedPolicy(answer_right, delay_s=30)
    (t,) = runner(
        policy, sampling=Sampling(timeout_s=0.1), grace_s=0.1, max_infra_retries=0
    ).run_sync([task("hp")])
    assert t.error is not None and (t.error.kind, t.error.where) == ("infra", "policy")


def test_turn_and_token_limits_end_the_episode_normally() -> None:
    endless = task("e", payload={"fault": "endless"})
    (t,) = runner(limits=EpisodeLimits(max_turns=3)).run_sync([endless])
    assert (t.end_reason, len(t.turns), t.error) == ("max_turns", 3, None)
    assert t.verdict is not None and t.passed
    assert t.turns[0].observations == [{"role": "user", "content": "again"}]

    rec = Recorder(tokens=10)
    (t,) = runner(rec, limits=EpisodeLimits(max_turns=100, max_tokens=25)).run_sync([endless])
    assert (t.end_reason, len(t.turns), t.completion_tokens) == ("max_tokens", 3, 30)
    # The episode's remaining budget caps each request.
    assert [s.max_tokens for s in rec.samplings] == [25, 15, 5]
    assert t.turns[0].token_ids == [1] * 10 and t.turns[0].logprobs == [-0.1] * 10


def test_the_episode_timeout_ends_the_episode_and_it_is_still_verified() -> None:
    policy = ScriptedPolicy(answer_right, delay_s=0.05)
    limits = EpisodeLimits(max_turns=1000, episode_timeout_s=0.3)
    (t,) = runner(policy, limits=limits).run_sync([task("slow", payload={"fault": "endless"})])
    assert t.end_reason == "timeout" and t.error is None and t.verdict is not None
    assert 2 <= len(t.turns) <= 6 and t.timings["total_s"] < 1.0


def test_run_sync_works_where_a_loop_is_already_running() -> None:
    async def inside() -> list[Trajectory]:
        return runner().run_sync([task("nb")])

    (t,) = asyncio.run(inside())
    assert t.passed


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        runner(concurrency=0)
