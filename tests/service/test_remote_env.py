"""``RemoteEnvironment``: the rollout runner and the TRL reward function, unchanged, against a
real server; and what happens when that server is killed in the middle of a session."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

import referee
from referee.envs import CodeEnv, CodeRuntime
from referee.policy.scripted import ScriptedPolicy
from referee.rollout.runner import RolloutRunner
from referee.service import (
    AsyncClient,
    Client,
    RemoteEnvironment,
    RemoteNotFound,
    ServerUnavailable,
)
from referee.tasks.model import Task
from referee.train.trl_adapter import reward_function
from tests.service.conftest import TOKEN

WRONG = "    return None\n"


def _fenced(completion: str) -> str:
    return "```python\n" + completion + "\n```"


def _answers(tasks: list[Task], gold: list[dict[str, str]]) -> dict[str, str]:
    """Per task id: the gold completion, except a wrong one for the last task."""
    by_id = {g["task_id"]: g["completion"] for g in gold}
    return {t.id: (WRONG if t is tasks[-1] else by_id[t.id]) for t in tasks}


def _policy(tasks: list[Task], answers: dict[str, str]) -> ScriptedPolicy:
    """Answers each episode's task, recognised by its prompt (the policy sees only messages)."""
    by_prompt = {t.prompt[-1].content: answers[t.id] for t in tasks}
    return ScriptedPolicy(lambda messages, tools: _fenced(by_prompt[messages[-1]["content"]]))


def test_the_rollout_runner_runs_unchanged_against_a_remote_server(
    server: Any, he_tasks: list[Task], gold: list[dict[str, str]], harness_sb: Any
) -> None:
    tasks = he_tasks[:4]
    answers = _answers(tasks, gold)
    with CodeRuntime(sandbox=harness_sb) as rt:
        local = RolloutRunner(lambda: CodeEnv(rt, single_turn=None), _policy(tasks, answers),
                              group_size=2, concurrency=4).run_sync(tasks)  # fmt: skip
    with server() as url:
        remote = RolloutRunner(
            lambda: RemoteEnvironment(url, token=TOKEN),
            _policy(tasks, answers),
            group_size=2,
            concurrency=4,
        ).run_sync(tasks)
        sessions_left = httpx.get(url + "/health").json()["sessions"]
        metrics = httpx.get(url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
    assert [t.error for t in remote] == [None] * 8
    assert [t.reward for t in remote] == [t.reward for t in local]
    assert [t.reward for t in remote][:6] == [1.0] * 6 and all(t.reward < 1 for t in remote[6:])
    assert [t.verdict.verifier for t in remote if t.verdict] == [
        t.verdict.verifier for t in local if t.verdict
    ]
    assert {t.env for t in remote} == {"code"} and sessions_left == 0  # every session closed
    assert 'referee_http_requests_total{route="/v1/sessions",status="200"} 8.0' in metrics


def test_a_remote_episode_snapshots_restores_and_closes_twice(
    server: Any, he_tasks: list[Task], gold: list[dict[str, str]]
) -> None:
    async def episode(url: str) -> None:
        env = RemoteEnvironment(url, token=TOKEN)
        opening = await env.reset(he_tasks[0])
        assert opening[-1]["content"] == he_tasks[0].prompt[-1].content
        assert env.tools() == [] and not env.done  # "code" is single-turn on function tasks
        snap = await env.snapshot()
        step = await env.step({"role": "assistant", "content": _fenced(WRONG)})
        assert step.done and env.done and (await env.verify()).reward < 1.0
        await env.restore(snap)
        assert not env.done
        await env.step({"role": "assistant", "content": _fenced(gold[0]["completion"])})
        verdict = await env.verify()
        assert verdict.passed and verdict is env.verdict
        await env.close()
        await env.close()

    with server() as url:
        asyncio.run(episode(url))
        metrics = httpx.get(url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
        health = httpx.get(url + "/health").json()
    # The verdicts came with the steps that ended the episodes: no separate verify request.
    assert 'route="/v1/sessions/{session_id}/verify"' not in metrics
    assert health["sessions"] == 0


def test_the_trl_reward_function_gives_the_same_rewards_remote_as_local(
    server: Any, he_tasks: list[Task], gold: list[dict[str, str]], verifier: Any
) -> None:
    # TRL trains on train tasks only; the server judges by id and holds the same tasks.
    tasks = [t.model_copy(update={"split": "train"}) for t in he_tasks[:4]]
    answers = _answers(tasks, gold)
    ids = [t.id for t in tasks] * 2
    # As TRL calls a reward function: prompts, completions (conversational here), the dataset's
    # columns, and its own keyword arguments.
    batch = {
        "prompts": [[{"role": "user", "content": "..."}]] * len(ids),
        "completions": [[{"role": "assistant", "content": answers[i]}] for i in ids],
        "task_id": ids,
        "completion_ids": [[0]] * len(ids),
        "trainer_state": None,
    }
    local = reward_function(verifier, tasks)(**batch)
    logged: dict[str, float] = {}
    with server() as url, Client(url, TOKEN) as judge:
        remote = reward_function(judge, tasks)(**batch, log_metric=logged.__setitem__)
    assert remote == local
    assert remote == [1.0, 1.0, 1.0, pytest.approx(remote[3])] * 2 and remote[3] < 1.0
    assert logged == {"referee/infra_errors": 0.0, "referee/pass_rate": 0.75}


# ---- the server killed mid-session ---------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def serve_process(task_file: Path, port: int, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``referee serve`` of this checkout in a process of its own (its own process group, so
    the kill takes its sandbox workers too); killed at the end whatever happened."""
    src = str(Path(referee.__file__).resolve().parents[1])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")])),
    }
    command = [sys.executable, "-m", "referee.cli", "serve", "--tasks", str(task_file),
               "--no-auth", "--port", str(port), "--workers", "2"]  # fmt: skip
    with log.open("ab") as out:
        proc = subprocess.Popen(command, env=env, stdout=out, stderr=out, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"referee serve did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.1)
        yield proc
    finally:
        kill(proc)


def kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def test_a_server_killed_mid_session_is_a_clear_error_and_a_restarted_one_starts_clean(
    he_file: Path, he_tasks: list[Task], gold: list[dict[str, str]], tmp_path: Path
) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    answer = {"role": "assistant", "content": _fenced(gold[0]["completion"])}
    log = tmp_path / "serve.log"

    async def scenario() -> None:
        # One event loop throughout: an environment's client belongs to the loop it runs on.
        env = RemoteEnvironment(url)
        with serve_process(he_file, port, log) as first:
            await env.reset(he_tasks[0])
            sid = env.session_id
            kill(first)
            with pytest.raises(ServerUnavailable) as e:
                await env.step(answer)
            assert url in str(e.value) and f"session {sid} is gone" in str(e.value)
            await env.close()  # nothing left to release: no error
        with serve_process(he_file, port, log):
            async with AsyncClient(url) as c:
                assert (await c.health())["sessions"] == 0
                with pytest.raises(RemoteNotFound):
                    await c.step(str(sid), answer)
                fresh = RemoteEnvironment(c)
                await fresh.reset(he_tasks[0])
                await fresh.step(answer)
                assert (await fresh.verify()).reward == 1.0
                await fresh.close()

    asyncio.run(scenario())


def test_a_multi_turn_remote_episode_with_tools_chosen_by_options(
    server: Any, he_tasks: list[Task], gold: list[dict[str, str]]
) -> None:
    """A function task with tools (single_turn False), the tools known before any reset, a
    write_file + submit episode judged on the server."""
    import json

    options = {"single_turn": False, "tools": ["write_file", "submit"], "max_turns": 4}
    task, completion = he_tasks[0], gold[0]["completion"]

    async def episode(url: str) -> tuple[list[str], float, bool]:
        env = RemoteEnvironment(url, token=TOKEN, options=options)
        names = [t["function"]["name"] for t in env.tools()]  # before reset: POST /v1/tools
        messages = await env.reset(task)
        assert messages[0]["role"] == "system" and "write_file" in messages[0]["content"]
        path = "solution.py"
        code = task.payload["code_prompt"] + completion
        calls = [
            {
                "id": "1",
                "type": "function",
                "function": {
                    "name": "write_file",
                    "arguments": json.dumps({"path": path, "content": code}),
                },
            },
        ]
        first = await env.step({"role": "assistant", "content": "", "tool_calls": calls})
        assert not first.done and first.observations[0]["role"] == "tool"
        submit = [
            {"id": "2", "type": "function", "function": {"name": "submit", "arguments": "{}"}}
        ]
        last = await env.step({"role": "assistant", "content": "", "tool_calls": submit})
        verdict = await env.verify()
        await env.close()
        return names, verdict.reward, last.done

    with server() as url:
        names, reward, done = asyncio.run(episode(url))
        with Client(url, token=TOKEN) as c:
            assert c.tools("code", {"single_turn": True}) == []
            bad = httpx.post(
                url + "/v1/tools",
                json={"options": {"tools": ["rm_rf"]}},
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
    assert names == ["write_file", "submit"]
    assert done is True and reward == 1.0
    assert bad.status_code == 422 and "rm_rf" in bad.json()["message"]
