"""The ``tau2-airline`` import on a few real tau2 tasks: the gold actions pass, doing nothing
fails, leaving out what must be said fails (tau2's COMMUNICATE), and a task that tau2's own
judge would pass on an empty episode is refused with the reason."""

from __future__ import annotations

import doctest
import json

import referee.domains.toolworld.tau2 as tau2
from referee.domains.toolworld.bench_api import BenchApiVerifier
from referee.domains.toolworld.tau2 import tau2_airline_tasks
from referee.tasks.imports.rows import RowError


def test_airline_tasks_gold_passes_empty_fails_and_what_is_said_counts():
    bad: list[RowError] = []
    tasks = list(tau2_airline_tasks(on_bad_row=bad.append, ids={"0", "3"}))
    assert [t.id for t in tasks] == ["tau2/airline/3"]
    assert len(bad) == 1 and "an empty episode passes tau2's own judge" in str(bad[0])
    (task,) = tasks
    ref = json.loads(task.hidden["reference"])
    assert task.hidden["communicate_info"] == ["4"]
    with BenchApiVerifier() as v:
        assert v.verify(task, task.hidden["reference"]).passed
        assert not v.verify(task, "").passed
        silent = v.verify(task, json.dumps({"turns": ref["turns"], "messages": []}))
        assert not silent.passed and "not said to the customer" in silent.tests[1].detail
        said = v.verify(task, json.dumps({"turns": ref["turns"], "messages": ["You have 4."]}))
        assert said.passed


def test_docstrings():
    assert doctest.testmod(tau2).failed == 0


def test_an_episode_in_the_environment():
    import asyncio

    from referee.domains.toolworld.bench_env import BenchApiEnv

    (task,) = tau2_airline_tasks(ids={"7"})
    gold = json.loads(task.hidden["reference"])

    async def episode(say: list[str]) -> bool:
        env = BenchApiEnv()
        try:
            await env.reset(task)
            names = {t["function"]["name"] for t in env.tools()}
            assert {"get_user_details", "cancel_reservation"} <= names
            calls = [
                {
                    "id": f"c{i}",
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
                }
                for i, c in enumerate(gold["turns"][0])
            ]
            step = await env.step({"role": "assistant", "content": "", "tool_calls": calls})
            assert not step.done and len(step.observations) == len(calls)
            step = await env.step({"role": "assistant", "content": " ".join(say)})
            assert step.done and step.reason == "answered"
            return (await env.verify()).passed
        finally:
            await env.close()

    assert asyncio.run(episode(gold["messages"]))
    assert not asyncio.run(episode(["All done."]))  # its communicate_info is not said
