"""The sql environment end to end: a scripted policy explores, then submits, through RolloutRunner."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from referee.domains.sql.verifier import SqlVerifier
from referee.envs import make_env
from referee.envs.base import EpisodeLimits
from referee.policy import ScriptedPolicy
from referee.rollout.runner import RolloutRunner
from referee.tasks.model import Task


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": f"c-{name}", "type": "function",
             "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
    }  # fmt: skip


def test_a_scripted_episode_explores_then_submits(
    sql_verifier: SqlVerifier, sqlite_task: Task
) -> None:
    gold = sqlite_task.hidden["reference"]
    seen: list[str] = []

    def reply(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
        if messages[-1]["role"] == "tool":
            seen.append(str(messages[-1]["content"]))
        turn = sum(m["role"] == "assistant" for m in messages)
        script = [
            _call("show_schema"),
            _call("run_query", query="SELECT count(*) FROM orders"),
            _call("run_query", query="DELETE FROM orders"),
            _call("submit", query=gold),
        ]
        return script[turn]

    runner = RolloutRunner(
        lambda: make_env("sql", verifier=sql_verifier),
        ScriptedPolicy(reply),
        limits=EpisodeLimits(max_turns=6),
        max_infra_retries=0,
    )
    [traj] = runner.run_sync([sqlite_task])
    assert traj.error is None, traj.error
    assert traj.reward == 1.0 and traj.end_reason == "submitted"
    assert "CREATE TABLE customers" in seen[0]
    n_orders = len(sqlite_task.payload["sample"]["tables"][2]["rows"])
    assert seen[1].splitlines()[1] == str(n_orders)  # the visible sample, not a hidden instance
    assert seen[2].startswith("error:") and "not authorized" in seen[2]


def test_a_text_answer_ends_the_episode_and_is_judged(
    sql_verifier: SqlVerifier, sqlite_task: Task
) -> None:
    async def episode() -> tuple[bool, float, list[str]]:
        env = make_env("sql", verifier=sql_verifier)
        messages = await env.reset(sqlite_task)
        tools = [t["function"]["name"] for t in env.tools()]
        step = await env.step({"role": "assistant", "content": "```sql\nSELECT 1\n```"})
        verdict = await env.verify()
        await env.close()
        assert messages[0]["role"] == "system"
        return step.done, verdict.reward, tools

    assert asyncio.run(episode()) == (True, 0.0, ["run_query", "show_schema", "submit"])
