"""The dataframe environment end to end: a scripted policy explores with the tools, submits,
and the rollout runner records the verdict."""

from __future__ import annotations

import json
from typing import Any

from referee.domains.dataframe.env import DataframeEnv
from referee.domains.dataframe.verifier import DataframeVerifier
from referee.envs import make_env
from referee.policy import ScriptedPolicy
from referee.rollout import RolloutRunner
from referee.tasks.model import Task


def _call(tool: str, **args: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"c-{tool}",
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(args)},
            }
        ],
    }


def test_a_scripted_episode_explores_then_submits(
    df_verifier: DataframeVerifier, df_tasks: dict[str, Task]
):
    task = df_tasks["df-join-aggregate"]
    seen: list[str] = []

    def reply(messages: list[dict[str, Any]], tools: Any) -> Any:
        if messages[-1]["role"] == "tool":
            seen.append(str(messages[-1]["content"]))
        turn = sum(m["role"] == "assistant" for m in messages)
        script = [
            _call("list_tables"),
            _call("preview_table", name="orders", rows=3),
            _call("run_python", code="print(tables['orders'].dtypes['amount'], len(tables))"),
            _call("nope"),
            _call("submit", code=f"```python\n{task.hidden['reference']}```"),
        ]
        return script[turn]

    runner = RolloutRunner(
        lambda: DataframeEnv(df_verifier), ScriptedPolicy(reply), max_infra_retries=0
    )
    [traj] = runner.run_sync([task])
    assert traj.error is None, traj.error
    assert traj.reward == 1.0 and traj.end_reason == "submitted"
    assert seen[0].startswith("orders:") and "customers:" in seen[0]
    assert seen[1].startswith("types: order_id (int)") and seen[1].count("\n") == 4
    assert seen[2].split() == ["float64", "2"]
    assert "unknown tool" in seen[3]


def test_a_text_answer_is_a_submission_and_is_judged(
    df_verifier: DataframeVerifier, df_tasks: dict[str, Task]
):
    task = df_tasks["df-clean"]
    runner = RolloutRunner(
        lambda: DataframeEnv(df_verifier),
        ScriptedPolicy(
            ["I think:\n```python\ndef transform(tables):\n    return tables['orders']\n```"]
        ),
        max_infra_retries=0,
    )
    [traj] = runner.run_sync([task])
    assert traj.error is None and traj.reward == 0.0 and traj.end_reason == "submitted"


def test_the_environment_is_registered():
    env = make_env("dataframe")
    assert isinstance(env, DataframeEnv)
    assert {t["function"]["name"] for t in env.tools()} == {
        "list_tables",
        "preview_table",
        "run_python",
        "submit",
    }
