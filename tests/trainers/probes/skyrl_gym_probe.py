"""Probe: skyrl-gym 0.4.0's registry makes a registered BaseTextEnv and steps it, the way
SkyRL 0.4.0's SkyRLGymGenerator does (skyrl/train/generators/skyrl_gym_generator.py).

Run in the skyrl-gym venv: .venvs/skyrl-gym/bin/python tests/trainers/probes/skyrl_gym_probe.py
"""

from __future__ import annotations

import asyncio
import copy
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

T0 = time.perf_counter()
import skyrl_gym  # noqa: E402
from skyrl_gym.envs import register  # noqa: E402
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput  # noqa: E402

print(
    f"import skyrl_gym: {time.perf_counter() - T0:.2f}s; built-in envs: {sorted(skyrl_gym.registry)}"
)


class ProbeEnv(BaseTextEnv):
    """Two turns at most: 'feedback' after a wrong first answer, reward 1 for the right one."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] = {}):  # noqa: B006 (skyrl's own signature)
        super().__init__()
        self.env_config, self.extras = env_config, extras
        self.task_id = extras["reward_spec"]["ground_truth"]
        self.max_turns = int(extras.get("max_turns", 1))

    def init(self, prompt):
        return prompt, {"task_id": self.task_id}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        self.turns += 1
        ok = "return a + b" in action
        done = ok or self.turns >= self.max_turns
        obs = [] if done else [{"role": "user", "content": "Tests failed: add(1, 2) != 3"}]
        return BaseTextEnvStepOutput(
            observations=obs,
            reward=float(ok),
            done=done,
            metadata={"thread": threading.current_thread().name},
        )


# What a user's entrypoint does before the trainer starts (module:Class string, importable).
register(id="referee", entry_point=f"{__name__}:ProbeEnv")

# A row as `referee export --format skyrl` writes it; PromptDataset.__getitem__ pops `prompt` and
# `env_class`, and every other column becomes env_extras; the generator adds `max_turns`.
ROW = {
    "data_source": "referee/code",
    "prompt": [{"role": "user", "content": "Write add(a, b)."}],
    "env_class": "referee",
    "reward_spec": {"method": "rule", "ground_truth": "task-add"},
    "extra_info": {"index": 0, "task_id": "task-add", "split": "train"},
}


async def agent_loop(row, actions, max_turns, executor):
    """The env calls of SkyRLGymGenerator.agent_loop, with canned model outputs."""
    row = copy.deepcopy(row)
    prompt, env_class = row.pop("prompt"), row.pop("env_class")
    env_extras = dict(row, max_turns=max_turns)
    env = skyrl_gym.make(
        env_class, env_config={}, extras=env_extras
    )  # getattr(cfg, env_class, dict())
    loop = asyncio.get_running_loop()

    async def call(fn, *a):  # _run_in_executor_if_available
        return await loop.run_in_executor(executor, fn, *a) if executor else fn(*a)

    chat, meta = await call(env.init, copy.deepcopy(prompt))
    rewards, done, turns = [], False, 0
    while not done:
        out = await call(env.step, actions[turns])
        turns += 1
        rewards.append(out["reward"])
        done = out["done"]
        chat += [{"role": "assistant", "content": actions[turns - 1]}, *out["observations"]]
    metrics = env.get_metrics()
    await call(env.close)
    return {
        "rewards": rewards,
        "turns": turns,
        "meta": meta,
        "thread": out["metadata"]["thread"],
        "metrics": metrics,
        "env": type(env).__name__,
    }


GOOD = "```python\ndef add(a, b):\n    return a + b\n```"
BAD = "def add(a, b):\n    return a - b"
pool = ThreadPoolExecutor(max_workers=32, thread_name_prefix="skyrl-gym-env-")  # max_env_workers=32
t = time.perf_counter()
r1 = asyncio.run(agent_loop(ROW, [GOOD], 1, pool))
r2 = asyncio.run(agent_loop(ROW, [BAD], 1, pool))
r3 = asyncio.run(agent_loop(ROW, [BAD, GOOD], 3, pool))
r4 = asyncio.run(agent_loop(ROW, [GOOD], 1, None))  # max_env_workers=0: on the event loop
print("single-turn gold  :", r1)
print("single-turn wrong :", r2)
print("multi-turn        :", r3)
print("max_env_workers=0 :", r4["thread"])
assert r1["rewards"] == [1.0] and r2["rewards"] == [0.0] and r3["rewards"] == [0.0, 1.0]
assert r1["thread"].startswith("skyrl-gym-env-") and r4["thread"] == "MainThread"
try:
    skyrl_gym.make("nope", env_config={}, extras={})
except Exception as e:
    print(f"unknown env_class: {type(e).__name__}: {e}")
print(
    f"skyrl-gym probe OK in {time.perf_counter() - T0:.2f}s ({time.perf_counter() - t:.3f}s stepping)"
)
