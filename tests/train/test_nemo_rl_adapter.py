"""referee's NeMo RL environment checked against the recorded signatures (signatures/nemo-rl.json;
NeMo RL is not on the package index), with a stand-in batch; Ray when it is installed."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
import torch

from referee.errors import ConfigError
from referee.tasks.model import read_tasks
from referee.train import lookup, nemo_rl
from referee.verify.redteam import EXPLOITS

ROOT = Path(__file__).parents[1] / "trainers" / "fixtures"
RECORD = json.loads((ROOT / "signatures" / "nemo-rl.json").read_text())["signatures"]
TASKS = read_tasks(ROOT / "he3.jsonl")
TRAIN = [t for t in TASKS if t.split == "train"]
HELDOUT = next(t for t in TASKS if t.split != "train")
EXPLOIT = {e.name: e for e in EXPLOITS}


@pytest.fixture(autouse=True)
def task_file(monkeypatch):
    monkeypatch.setenv(lookup.TASKS_ENV, str(ROOT / "he3.jsonl"))


def gold(task) -> str:
    return "```python\n" + task.payload["code_prompt"] + task.hidden["reference"] + "```"


def exploit(task, name) -> str:
    return "```python\n" + task.payload["code_prompt"] + EXPLOIT[name].completion(task) + "```"


def log(text):
    return [{"role": "user", "content": "write it"}, {"role": "assistant", "content": text}]


def test_matches_the_recorded_signatures():
    ret = RECORD["nemo_rl.environments.interfaces.EnvironmentReturn"]
    assert list(nemo_rl.EnvironmentResult._fields) == ret["order"] == list(ret["fields"])
    iface = RECORD["nemo_rl.environments.interfaces.EnvironmentInterface"]
    for recorded in iface["abstract"]:
        name = recorded.split("(")[0]
        params = [p.split(":")[0].strip() for p in recorded.split("(")[1].split(")")[0].split(",")]
        fn = getattr(nemo_rl.RefereeEnvironment, name)
        # Once a process has made the class a Ray actor, Ray's tracing sets each method's
        # __signature__ with a keyword-only "_ray_trace_ctx" added: not part of the contract.
        got = [p for p in inspect.signature(fn).parameters if p != "_ray_trace_ctx"]
        assert got == params
    assert callable(nemo_rl.RefereeEnvironment.shutdown)
    assert nemo_rl.FQN == "referee.train.nemo_rl.RefereeEnvironment"


def test_step_single_turn_gold_1_wrong_and_exploit_0():
    env = nemo_rl.RefereeEnvironment({})
    t = TRAIN[0]
    texts = [gold(TRAIN[0]), gold(TRAIN[1]), "", exploit(t, "always-equal-object")]
    metas = [
        {"task_id": TRAIN[0].id},
        {"task_id": TRAIN[1].id},
        {"task_id": t.id},
        {"task_id": t.id},
    ]
    ret = env.step([log(x) for x in texts], metas)
    obs, meta, stops, rewards, terminateds, answers = ret  # positional, as NeMo RL unpacks it
    assert isinstance(rewards, torch.Tensor) and rewards.shape == (4,)
    assert rewards.tolist() == [1.0, 1.0, 0.0, 0.0] and terminateds.tolist() == [1.0] * 4
    assert answers == texts and stops == [None] * 4 and len(obs) == len(meta) == 4
    batch, metrics = env.global_post_process_and_metrics({"rewards": rewards})
    assert metrics == {"accuracy": 0.5, "mean_reward": 0.5} and batch["rewards"] is rewards


def test_heldout_refused_and_missing_task_is_an_error():
    env = nemo_rl.RefereeEnvironment({})
    with pytest.raises(ConfigError, match="held out"):
        env.step([log(gold(HELDOUT))], [{"task_id": HELDOUT.id}])
    with pytest.raises(ConfigError, match="not in"):
        env.step([log("x")], [{"task_id": "no/such"}])
    ok = nemo_rl.RefereeEnvironment({"allow_heldout": True})
    assert ok.step([log(gold(HELDOUT))], [{"task_id": HELDOUT.id}]).rewards.tolist() == [1.0]


def test_step_multi_turn_keeps_the_episode_across_calls():
    env = nemo_rl.RefereeEnvironment({"multi_turn": True, "max_turns": 4})
    t = TRAIN[2]
    solution = t.payload["code_prompt"] + t.hidden["reference"]
    call = {"name": "write_file", "arguments": {"path": "solution.py", "content": solution}}
    first = env.step([log(f"<tool_call>{json.dumps(call)}</tool_call>")], [{"task_id": t.id}])
    assert first.rewards.tolist() == [0.0] and first.terminateds.tolist() == [0.0]
    assert "<tool_response>" in first.observations[0]["content"]
    history = [
        *log("w"),
        first.observations[0],
        {"role": "assistant", "content": '<tool_call>{"name": "submit"}</tool_call>'},
    ]
    second = env.step([history], first.metadata)
    assert second.rewards.tolist() == [1.0] and second.terminateds.tolist() == [1.0]
    assert env.episodes == {}
    env.shutdown()


def test_as_a_ray_actor():
    # Ray is one of referee's dependencies (referee.cluster): this never skips.
    import ray

    ray.init(num_cpus=1, include_dashboard=False)
    try:
        actor = nemo_rl.actor_class().remote({})
        t = TRAIN[0]
        ret = ray.get(actor.step.remote([log(gold(t))], [{"task_id": t.id}]))
        assert ret.rewards.tolist() == [1.0]
    finally:
        ray.shutdown()
