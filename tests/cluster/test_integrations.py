"""The pool behind referee's other entry points, on the real two-node cluster: the rollout
runner with environments hosted in the pool (``PoolEnvironment``), and TRL's reward function
judging through it."""

from __future__ import annotations

import asyncio
import json

import pytest

from referee.envs import CodeEnv, CodeRuntime
from referee.policy.scripted import ScriptedPolicy
from referee.rollout.runner import RolloutRunner
from referee.tasks.model import Task
from referee.train.trl_adapter import reward_function

WRONG = "    return None\n"


@pytest.fixture(scope="module")
def tasks(humaneval) -> list[Task]:
    return [humaneval[f"HumanEval/{i}"] for i in (0, 2, 4, 7)]


@pytest.fixture(scope="module")
def pool(ray_cluster, tasks):
    from referee.cluster import SandboxPool

    p = SandboxPool(tasks, actors=2, workers_per_actor=2, ready_timeout_s=90)
    yield p
    p.close()


def _fenced(completion: str) -> str:
    return "```python\n" + completion + "\n```"


def _answers(tasks: list[Task]) -> dict[str, str]:
    """Each task's reference, except a wrong answer for the last task."""
    return {t.id: (WRONG if t is tasks[-1] else t.hidden["reference"]) for t in tasks}


def _policy(tasks: list[Task], answers: dict[str, str]) -> ScriptedPolicy:
    by_prompt = {t.prompt[-1].content: answers[t.id] for t in tasks}
    return ScriptedPolicy(lambda messages, tools: _fenced(by_prompt[messages[-1]["content"]]))


def test_the_rollout_runner_runs_unchanged_on_pool_environments(pool, tasks, harness_sb):
    from referee.cluster import PoolEnvironment

    answers = _answers(tasks)
    with CodeRuntime(sandbox=harness_sb) as rt:
        local = RolloutRunner(lambda: CodeEnv(rt, single_turn=None), _policy(tasks, answers),
                              group_size=2, concurrency=4).run_sync(tasks)  # fmt: skip
    before = {h["index"]: h["sessions_opened"] for h in pool.health()}
    remote = RolloutRunner(
        lambda: PoolEnvironment(pool, "code"), _policy(tasks, answers), group_size=2, concurrency=4
    ).run_sync(tasks)
    after = pool.health()
    assert [t.error for t in remote] == [None] * 8
    assert [t.reward for t in remote] == [t.reward for t in local]
    assert [t.reward for t in remote][:6] == [1.0] * 6 and all(t.reward < 1 for t in remote[6:])
    # The episodes ran on both actors, and every session was closed.
    assert all(h["sessions_opened"] - before[h["index"]] >= 2 for h in after), (before, after)
    assert sum(h["sessions"] for h in after) == 0


def test_a_pool_episode_with_tools_snapshots_and_restores(pool, tasks):
    from referee.cluster import PoolEnvironment

    task = tasks[0]
    options = {"single_turn": False, "tools": ["write_file", "submit"], "max_turns": 6}

    def call(i: int, name: str, **args: str) -> dict:
        fn = {"name": name, "arguments": json.dumps(args)}
        return {"id": str(i), "type": "function", "function": fn}

    def write(i: int, body: str) -> dict:
        code = task.payload["code_prompt"] + body
        return {"role": "assistant", "content": "", "tool_calls": [call(i, "write_file",
                path="solution.py", content=code)]}  # fmt: skip

    submit = {"role": "assistant", "content": "", "tool_calls": [call(9, "submit")]}

    async def episode() -> tuple[float, float, list[str]]:
        env = PoolEnvironment(pool, "code", options=options, deadline_s=20)
        messages = await env.reset(task)
        names = [t["function"]["name"] for t in env.tools()]
        assert messages[0]["role"] == "system" and not env.done
        first = await env.step(write(1, task.hidden["reference"]))
        assert not first.done and first.observations[0]["role"] == "tool"
        snap = await env.snapshot()
        await env.step(write(2, WRONG))
        assert (await env.step(submit)).done and env.done
        wrong = (await env.verify()).reward
        await env.restore(snap)  # back to the good file, before the submit
        assert not env.done
        await env.step(submit)
        right = (await env.verify()).reward
        await env.close()
        await env.close()
        return wrong, right, names

    wrong, right, names = asyncio.run(episode())
    assert names == ["write_file", "submit"]
    assert wrong < 1.0 and right == 1.0


def test_the_trl_reward_function_judges_through_the_pool(pool, tasks, verifier):
    train = [t.model_copy(update={"split": "train"}) for t in tasks]
    answers = _answers(train)
    ids = [t.id for t in train] * 2
    batch = {
        "prompts": [[{"role": "user", "content": "..."}]] * len(ids),
        "completions": [[{"role": "assistant", "content": answers[i]}] for i in ids],
        "task_id": ids,
        "completion_ids": [[0]] * len(ids),
        "trainer_state": None,
    }
    local = reward_function(verifier, train)(**batch)
    logged: dict[str, float] = {}
    remote = reward_function(pool, train)(**batch, log_metric=logged.__setitem__)
    assert remote == local
    assert remote[:3] == [1.0] * 3 and remote[3] < 1.0 and remote[4:] == remote[:4]
    assert logged == {"referee/infra_errors": 0.0, "referee/pass_rate": 0.75}


def test_verdicts_from_the_pool_carry_their_sandbox_cost(pool, tasks):
    """The cost of a check travels with its verdict from the actor that judged it."""
    burn = "    import time\n    t = time.process_time()\n    while time.process_time() - t < 0.3:\n        pass\n    return None\n"
    quick, slow = pool.verify_many([(tasks[0], tasks[0].hidden["reference"]), (tasks[0], burn)])
    assert quick.passed and quick.sandbox is not None and quick.sandbox.runs >= 1
    assert slow.sandbox is not None and slow.sandbox.cpu_s >= 0.25


def test_referee_serve_verifies_on_the_ray_pool(ray_cluster, tasks, tmp_path):
    """`referee serve --ray ADDRESS`: a real server process whose verification runs on the
    cluster's actors; a hung candidate is killed at the request's deadline, an infra verdict."""
    import time

    from tests.service.procs import serve_process

    from referee.service import Client
    from referee.tasks.model import write_tasks

    path = tmp_path / "tasks.jsonl"
    write_tasks(path, tasks)
    args = ["--tasks", str(path), "--no-auth", "--workers", "1", "--ray", ray_cluster.address,
            "--ray-actors", "2", "--deadline", "20"]  # fmt: skip
    with serve_process(args, start_timeout_s=120) as sp, Client(sp.url) as client:
        health = client.health()
        answers = _answers(tasks)
        verdicts = client.verify([(t.id, answers[t.id]) for t in tasks] * 2)
        started = time.monotonic()
        [hung] = client.verify([(tasks[0].id, "    while True:\n        pass\n")], deadline_s=3)
        hung_s = time.monotonic() - started
        announced = sp.drain_stderr()
    assert health["verify_on"] == "ray"
    assert "verifying on 2 Ray sandbox actors" in announced
    assert [v.passed for v in verdicts] == [True, True, True, False] * 2
    assert all(v.infra_error is None for v in verdicts)
    assert hung.infra_error is not None and not hung.passed and hung_s < 3 + 5


EXPLOIT = "    import sys\n    sys.exit(0)\n"


@pytest.fixture(scope="module")
def task_file(tasks, tmp_path_factory):
    from referee.tasks.model import write_tasks

    path = tmp_path_factory.mktemp("cluster") / "tasks.jsonl"
    write_tasks(path, [t.model_copy(update={"split": "train"}) for t in tasks])
    return path


def test_verl_rewards_judged_on_a_shared_pool(ray_cluster, tasks, task_file):
    """veRL's compute_score/compute_score_batch with ray_actors: the reward worker's samples
    judged on a pool on the trainer's cluster (made once per process), same scores."""
    from referee.cluster.shared import close_shared_pools, shared_pool
    from referee.train.verl import compute_score, compute_score_batch

    answers = _answers(tasks)
    texts = [_fenced(answers[t.id]) for t in tasks] + ["", _fenced(EXPLOIT)]
    ids = [t.id for t in tasks] + [tasks[0].id] * 2
    try:
        kw = {"tasks": str(task_file), "ray_actors": 2}
        scores = compute_score_batch(["referee"] * 6, texts, ids, None, **kw)
        one = compute_score("referee", texts[0], ids[0], **kw)
        pool = shared_pool(str(task_file), 2)
        verified = sum(h["verified"] for h in pool.health())
        assert shared_pool(str(task_file), 2) is pool  # one pool per process
    finally:
        close_shared_pools()
    assert [s["score"] for s in scores][:3] == [1.0] * 3
    assert [s["passed"] for s in scores] == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    assert one["score"] == 1.0 and verified == 7


def test_nemo_rl_environment_actor_judges_its_batches_on_the_pool(ray_cluster, tasks, task_file):
    """NeMo RL's environment as a Ray actor (as NeMo RL makes it) with ray_actors: a step's
    single-turn answers judged together on the pool it owns."""
    import ray

    from referee.train.nemo_rl import actor_class

    answers = _answers(tasks)
    logs = [[{"role": "user", "content": "..."}, {"role": "assistant", "content": text}]
            for text in [_fenced(answers[t.id]) for t in tasks] + [_fenced(EXPLOIT)]]  # fmt: skip
    metas = [{"task_id": t.id} for t in tasks] + [{"task_id": tasks[0].id}]
    env = actor_class(num_cpus=0).remote({"tasks": str(task_file), "ray_actors": 2})
    try:
        ret = ray.get(env.step.remote(logs, metas), timeout=180)
        again = ray.get(env.step.remote(logs[:1], metas[:1]), timeout=60)
        health = ray.get(env.health.remote(), timeout=60)
    finally:
        ray.get(env.shutdown.remote(), timeout=60)
        ray.kill(env, no_restart=True)
    assert [float(r) for r in ret.rewards][:3] == [1.0] * 3
    assert float(ret.rewards[3]) < 1.0 and float(ret.rewards[4]) == 0.0
    assert [float(d) for d in ret.terminateds] == [1.0] * 5
    assert float(again.rewards[0]) == 1.0
    # Judged on the pool's two actors (on the two nodes), not in the environment's process.
    assert sum(h["verified"] for h in health["pool"]) == 6 and health["episodes"] == 0
    assert len({h["node_id"] for h in health["pool"]}) == 2
