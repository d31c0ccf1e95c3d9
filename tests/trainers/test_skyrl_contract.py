"""Contract: SkyRL's registry makes referee's environment and SkyRL's env calls step it.

Runs in the skyrl-gym venv (scripts/run-trainer-tests.sh skyrl-gym). The SkyRL trainer itself
(skyrl 0.4.0) needs Python 3.12 and torch, so its generator is not imported: ``agent_loop`` below
replays the env calls of ``SkyRLGymGenerator.agent_loop`` (skyrl/train/generators/
skyrl_gym_generator.py: ``env_extras["max_turns"] = max_turns``; ``skyrl_gym.make(env_class,
env_config=getattr(cfg, env_class, {}), extras=env_extras)``; ``init`` / ``step`` / ``close`` in
a 32-thread ``ThreadPoolExecutor`` via ``loop.run_in_executor``), on rows as
:func:`referee.train.skyrl.skyrl_row` and ``referee export --format skyrl`` write them.
"""

from __future__ import annotations

import asyncio
import copy
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import skyrl_gym
from skyrl_gym.envs.registration import registry

from referee.errors import ConfigError
from referee.tasks.model import read_tasks
from referee.train import skyrl as adapter
from referee.verify.redteam import EXPLOITS

FIXTURE = Path(__file__).parent / "fixtures" / "he3.jsonl"
TASKS = read_tasks(FIXTURE)
TRAIN = [t for t in TASKS if t.split == "train"]
HELDOUT = next(t for t in TASKS if t.split != "train")
EXPLOIT = {e.name: e for e in EXPLOITS}


@pytest.fixture(scope="module", autouse=True)
def registered():
    adapter.register(tasks=str(FIXTURE), replace=True)
    yield
    for name in ("referee", "referee-eval"):
        registry.pop(name, None)


@pytest.fixture(scope="module")
def pool():
    with ThreadPoolExecutor(32, thread_name_prefix="skyrl-gym-env-") as p:
        yield p


def gold(task) -> str:
    return (
        "Here it is:\n```python\n" + task.payload["code_prompt"] + task.hidden["reference"] + "```"
    )


async def agent_loop(row, actions, max_turns, executor):
    """SkyRLGymGenerator.agent_loop's env calls, with canned model outputs."""
    row = copy.deepcopy(row)
    prompt, env_class = row.pop("prompt"), row.pop("env_class")
    env_extras = dict(row, max_turns=max_turns)
    env = skyrl_gym.make(env_class, env_config={}, extras=env_extras)
    loop = asyncio.get_running_loop()

    async def call(fn, *a):
        return await loop.run_in_executor(executor, fn, *a)

    chat, _ = await call(env.init, copy.deepcopy(prompt))
    rewards, done, i, outs = [], False, 0, []
    while not done:
        out = await call(env.step, actions[i])
        i += 1
        outs.append(out)
        rewards.append(out["reward"])
        done = out["done"]
        chat += [{"role": "assistant", "content": actions[i - 1]}, *out["observations"]]
    metrics = env.get_metrics()
    await call(env.close)
    return {"rewards": rewards, "chat": chat, "outs": outs, "metrics": metrics, "env": env}


def run(row, actions, pool, max_turns=1):
    return asyncio.run(agent_loop(row, actions, max_turns, pool))


def test_registry_makes_referee_env_from_the_entry_point():
    env = skyrl_gym.make(
        "referee", env_config={}, extras={**adapter.skyrl_row(TRAIN[0]), "max_turns": 1}
    )
    assert type(env).__name__ == "RefereeEnv"
    assert isinstance(env, skyrl_gym.envs.base_text_env.BaseTextEnv)
    assert registry["referee"].entry_point == "referee.train.skyrl:RefereeEnv"


@pytest.mark.parametrize("task", TRAIN, ids=[t.id for t in TRAIN])
def test_single_turn_gold_scores_1_through_the_thread_pool(task, pool):
    r = run(adapter.skyrl_row(task), [gold(task) + "<|im_end|>"], pool)
    assert r["rewards"] == [1.0]
    assert r["outs"][0]["metadata"]["passed"] is True
    assert r["metrics"] == {"passed": 1.0, "turns": 1.0}


@pytest.mark.parametrize(
    "answer",
    ["", "I don't know.", "always-equal-object", "os-exit-at-import", "sys-exit-at-import"],
)
def test_single_turn_empty_wrong_and_exploits_score_0(answer, pool):
    task = TRAIN[0]
    text = answer
    if answer in EXPLOIT:
        text = (
            "```python\n" + task.payload["code_prompt"] + EXPLOIT[answer].completion(task) + "```"
        )
    r = run(adapter.skyrl_row(task), [text], pool)
    assert r["rewards"] == [0.0]
    assert r["outs"][0]["done"] is True


def test_many_episodes_at_once_share_one_runtime(pool):
    rows = [adapter.skyrl_row(t, i) for i, t in enumerate(TRAIN)] * 4

    async def all_of_them():
        good = [agent_loop(r, [gold(TRAIN[i % 3])], 1, pool) for i, r in enumerate(rows)]
        bad = [agent_loop(r, ["return None"], 1, pool) for r in rows]
        return await asyncio.gather(*good, *bad)

    results = asyncio.run(all_of_them())
    assert [r["rewards"] for r in results] == [[1.0]] * len(rows) + [[0.0]] * len(rows)


def test_heldout_task_is_refused_by_referee_and_taken_by_referee_eval(pool):
    row = adapter.skyrl_row(HELDOUT)
    assert row["env_class"] == "referee-eval"
    training_row = dict(row, env_class="referee")
    with pytest.raises(ConfigError, match="held out"):
        run(training_row, [gold(HELDOUT)], pool)
    assert run(row, [gold(HELDOUT)], pool)["rewards"] == [1.0]


def test_unknown_task_is_an_error_not_a_zero(pool):
    row = dict(adapter.skyrl_row(TRAIN[0]))
    row["reward_spec"] = {"method": "rule", "ground_truth": "no/such-task"}
    row["extra_info"] = {"index": 0, "task_id": "no/such-task", "split": "train"}
    with pytest.raises(ConfigError, match="no/such-task"):
        run(row, ["x"], pool)


def tool_call(name, **arguments):
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": arguments}) + "\n</tool_call>"


def test_multi_turn_tools_in_text_then_submit(pool):
    task = TRAIN[2]
    solution = task.payload["code_prompt"] + task.hidden["reference"]
    actions = [
        "I'll write it." + tool_call("write_file", path="solution.py", content=solution),
        tool_call("run_python", code="import solution\nprint(solution.truncate_number(3.5))"),
        "Done." + tool_call("submit") + "<|im_end|>",
    ]
    env = None
    register_multi()
    try:
        r = run(dict(adapter.skyrl_row(task), env_class="referee-multi"), actions, pool, 5)
        env = r["env"]
    finally:
        registry.pop("referee-multi", None)
    assert r["rewards"] == [0.0, 0.0, 1.0]
    system = r["chat"][0]
    assert system["role"] == "system" and "<tool_call>" in system["content"]
    assert '"name": "write_file"' in system["content"]
    # Observations come back as one user message of <tool_response> blocks.
    assert r["chat"][3]["role"] == "user" and "<tool_response>" in r["chat"][3]["content"]
    assert "0.5" in r["chat"][5]["content"]
    assert env.episode.turns == 3 and r["metrics"]["passed"] == 1.0


def test_multi_turn_malformed_call_is_an_observation_and_limit_autosubmits(pool):
    task = TRAIN[2]
    wrong = task.payload["code_prompt"] + "    return 0.0\n"
    actions = [
        '<tool_call>{"name": "write_file", "arguments": {"path": </tool_call>',
        tool_call("write_file", path="solution.py", content=wrong),
    ]
    register_multi()
    try:
        r = run(dict(adapter.skyrl_row(task), env_class="referee-multi"), actions, pool, 2)
    finally:
        registry.pop("referee-multi", None)
    assert r["rewards"] == [0.0, 0.0]
    assert "not valid JSON" in r["chat"][3]["content"]
    assert r["outs"][-1]["metadata"]["reason"] == "max_turns"


def register_multi():
    registry.pop("referee-multi", None)
    skyrl_gym.envs.register(
        id="referee-multi",
        entry_point=adapter.ENTRY_POINT,
        kwargs={"tasks": str(FIXTURE), "multi_turn": True},
    )


def test_env_calls_ran_in_the_pool_threads(pool):
    seen = []
    task = TRAIN[0]
    env = skyrl_gym.make(
        "referee", env_config={}, extras={**adapter.skyrl_row(task), "max_turns": 1}
    )

    def step(text):
        seen.append(threading.current_thread().name)
        return env.step(text)

    env.init(adapter.skyrl_row(task)["prompt"])
    out = pool.submit(step, gold(task)).result()
    assert out["reward"] == 1.0 and seen[0].startswith("skyrl-gym-env-")
