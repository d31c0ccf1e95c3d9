"""Contract: verifiers v1 loads referee's taskset by id and scores a rollout's trace with it.

Runs in the verifiers venv (scripts/run-trainer-tests.sh verifiers). Drives verifiers' own code:
``load_taskset`` (id -> top-level module ``referee_tasks`` -> its one exported Taskset),
``environment_class`` / ``SingleAgentEnv``, the taskset's views, and ``Task.score(trace)`` on a
``vf.Trace`` holding the prompt and the sampled reply, as an environment server does after a
rollout (no model, no runtime).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
import verifiers.v1 as vf
from verifiers.v1.errors import TaskError
from verifiers.v1.graph import MessageNode
from verifiers.v1.trace import AgentInfo, TraceTask
from verifiers.v1.utils.loaders import environment_class, load_taskset

from referee.tasks.model import read_tasks
from referee.train.prime import RefereeTaskset, RefereeTasksetConfig
from referee.verify.redteam import EXPLOITS

FIXTURE = Path(__file__).parent / "fixtures" / "he3.jsonl"
REFEREE = {t.id: t for t in read_tasks(FIXTURE)}
EXPLOIT = {e.name: e for e in EXPLOITS}
# The verifier's deadline, read when this process's runtime is made: a hung candidate costs 3 s.
os.environ["REFEREE_REWARD_DEADLINE_S"] = "3"


@pytest.fixture(autouse=True)
def task_file(monkeypatch):
    monkeypatch.setenv("REFEREE_TASKS", str(FIXTURE))


def trace_for(task, reply: str) -> vf.Trace:
    return vf.Trace(
        task=TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        agent=AgentInfo(config=vf.AgentConfig()),
        nodes=[
            MessageNode(message=vf.UserMessage(content=task.data.prompt_text)),
            MessageNode(parent=0, message=vf.AssistantMessage(content=reply), sampled=True),
        ],
    )


def score(task, reply: str) -> vf.Trace:
    trace = trace_for(task, reply)
    asyncio.run(task.score(trace))
    return trace


def gold(task_id: str) -> str:
    t = REFEREE[task_id]
    return "```python\n" + t.payload["code_prompt"] + t.hidden["reference"] + "```"


def test_load_by_id_gives_the_train_split_only():
    ts = load_taskset(vf.TasksetConfig(id="referee-tasks"))
    assert type(ts) is RefereeTaskset
    tasks = list(ts)
    assert [t.data.task_id for t in tasks] == ["HumanEval/0", "HumanEval/1", "HumanEval/2"]
    assert all(t.data.split == "train" for t in tasks)
    assert [t.data.idx for t in tasks] == [0, 1, 2]
    assert "def has_close_elements" in tasks[0].data.prompt_text
    # Views work on the durable key (the task id) and ids.
    assert [t.data.task_id for t in ts.exclude(ids=["HumanEval/1"])] == [
        "HumanEval/0",
        "HumanEval/2",
    ]
    assert environment_class("referee-tasks") is vf.SingleAgentEnv


def test_single_agent_env_builds_around_it():
    env = vf.SingleAgentEnv(vf.SingleAgentEnvConfig(taskset={"id": "referee-tasks"}))
    assert type(env.taskset).__name__ == "RefereeTaskset"


def test_gold_reply_scores_1():
    for task in load_taskset(vf.TasksetConfig(id="referee-tasks")):
        trace = score(task, "Sure.\n" + gold(task.data.task_id))
        assert trace.reward == 1.0, task.data.task_id
        assert trace.rewards["referee"].score == 1.0


@pytest.mark.parametrize("exploit", ["always-equal-object", "os-exit-at-import", "infinite-loop"])
def test_empty_and_exploit_replies_score_0(exploit):
    task = next(iter(load_taskset(vf.TasksetConfig(id="referee-tasks"))))
    assert score(task, "").reward == 0.0
    t = REFEREE[task.data.task_id]
    reply = "```python\n" + t.payload["code_prompt"] + EXPLOIT[exploit].completion(t) + "```"
    assert score(task, reply).reward == 0.0


def test_heldout_split_is_only_for_evaluation():
    config = RefereeTasksetConfig(id="referee-tasks", tasks=str(FIXTURE), split="heldout")
    [held] = list(load_taskset(config))
    assert held.data.task_id == "HumanEval/3"
    assert score(held, gold("HumanEval/3")).reward == 1.0
    # The same task scored by a training taskset's config is refused, not scored.
    train_cfg = next(iter(load_taskset(vf.TasksetConfig(id="referee-tasks")))).config
    smuggled = type(held)(held.data, train_cfg)
    with pytest.raises(TaskError, match="held out"):
        score(smuggled, gold("HumanEval/3"))


def test_unknown_task_is_an_error_not_a_zero():
    task = next(iter(load_taskset(vf.TasksetConfig(id="referee-tasks"))))
    ghost = task.with_data(task_id="no/such-task")
    with pytest.raises(TaskError, match="no/such-task"):
        score(ghost, gold("HumanEval/0"))
