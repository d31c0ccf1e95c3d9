"""The numeric environment: a scripted scientist runs a script, checks the visible set, and
submits, end to end through the RolloutRunner; a text answer ends an episode too."""

from __future__ import annotations

import json

from referee.envs import make_env
from referee.policy.scripted import ScriptedPolicy
from referee.rollout.runner import RolloutRunner


def _call(name: str, code: str, i: int = 0) -> dict:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": f"c{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps({"code": code})},
            }
        ],
    }


def test_scripted_episode_run_check_submit_is_judged_on_the_hidden_sets(tasks, numeric_box):
    task = tasks["num-root/kepler"]
    reference = task.hidden["reference"]
    wrong = "def solve(params):\n    return {'E': [0.0] * len(params['M'])}\n"
    policy = ScriptedPolicy(
        [
            _call("run_python", "import numpy, scipy\nprint('versions', numpy.__version__)", 0),
            _call("check", wrong, 1),
            _call("check", reference, 2),
            _call("submit", reference, 3),
        ]
    )
    runner = RolloutRunner(lambda: make_env("numeric", sandbox=numeric_box), policy)
    [traj] = runner.run_sync([task])
    assert traj.error is None, traj.error
    assert traj.end_reason == "submitted" and traj.passed and traj.reward == 1.0
    observed = [t.observations[0]["content"] for t in traj.turns]
    assert observed[0].startswith("exit status 0") and "versions" in observed[0]
    assert observed[1].startswith("failed:") and "differs" in observed[1]
    assert observed[2].startswith("matches the expected output")
    assert observed[3] == "submitted"


def test_a_text_answer_ends_the_episode_and_a_bad_call_is_an_observation(tasks, numeric_box):
    task = tasks["num-root/kepler"]
    policy = ScriptedPolicy(
        [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "x", "type": "function", "function": {"name": "nope", "arguments": "{}"}}
                ],
            },
            "Here it is:\n```python\ndef solve(params):\n    return {'E': params['M']}\n```\n",
        ]
    )
    runner = RolloutRunner(lambda: make_env("numeric", sandbox=numeric_box), policy)
    [traj] = runner.run_sync([task])
    assert traj.error is None, traj.error
    assert "unknown tool" in traj.turns[0].observations[0]["content"]
    assert traj.end_reason == "answered" and not traj.passed
    assert traj.verdict is not None and traj.verdict.infra_error is None
