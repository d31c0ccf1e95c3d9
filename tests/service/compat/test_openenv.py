"""``--compat openenv``: OpenEnv's own client against a real server on loopback.

Episodes go through ``GenericEnvClient(base_url=URL + "/openenv").sync()`` (openenv 0.10.0, the
client TRL and others use; WebSocket only); hostile frames and dropped connections through a raw
``websockets`` client; the stateless HTTP routes through httpx with the bodies of OpenEnv's
``ResetRequest`` / ``StepRequest``. The client comes from requirements-contracts.lock
(scripts/bootstrap-contracts.sh); without it the WebSocket tests skip, unless
``REFEREE_REQUIRE_CONTRACTS`` is set.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

HAVE_CLIENT = all(importlib.util.find_spec(m) for m in ("openenv", "websockets"))
if not HAVE_CLIENT and os.environ.get("REFEREE_REQUIRE_CONTRACTS"):
    raise RuntimeError(
        "REFEREE_REQUIRE_CONTRACTS is set but openenv/websockets is not installed: run "
        "scripts/bootstrap-contracts.sh"
    )
needs_client = pytest.mark.skipif(
    not HAVE_CLIENT, reason="openenv client missing: scripts/bootstrap-contracts.sh"
)


def start(he_file: Path, **overrides: Any) -> Any:
    from referee.service import ServeConfig, Service, running

    settings: dict[str, Any] = {
        "tasks": (str(he_file),),
        "no_auth": True,
        "workers": 2,
        "compat": ("openenv",),
    }
    settings.update(overrides)
    return running(Service.start(ServeConfig(**settings)))


@pytest.fixture(scope="module")
def url(he_file: Path) -> Iterator[str]:
    with start(he_file) as base:
        yield base


def sessions(url: str) -> int:
    n: int = httpx.get(url + "/health").json()["sessions"]
    return n


def wait_for_sessions(url: str, n: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while sessions(url) != n:
        assert time.monotonic() < deadline, f"sessions stayed at {sessions(url)}, not {n}"
        time.sleep(0.05)


def gold_source(task: Any, gold: list[dict[str, str]]) -> str:
    completion = next(g["completion"] for g in gold if g["task_id"] == task.id)
    return str(task.payload["code_prompt"]) + completion


def call(name: str, **args: Any) -> dict[str, Any]:
    return {
        "tool_calls": [
            {"id": f"c_{name}", "type": "function", "function": {"name": name, "arguments": args}}
        ]
    }


def client(url: str) -> Any:
    from openenv.core.generic_client import GenericEnvClient

    return GenericEnvClient(base_url=url + "/openenv", message_timeout_s=60).sync()


# ---- the client's episodes over WS /openenv/ws ---------------------------------------------


@needs_client
def test_a_tool_episode_with_the_openenv_client_is_rewarded_1(
    url: str, he_tasks: list[Any], gold: list[dict[str, str]]
) -> None:
    task = he_tasks[0]
    before = sessions(url)
    with client(url) as env:
        first = env.reset(task_id=task.id, episode_id="ep-1", options={"single_turn": False})
        assert first.reward is None and first.done is False
        obs = first.observation
        assert obs["task_id"] == task.id and obs["episode_id"] == "ep-1"
        assert obs["messages"][0]["role"] == "system" and obs["messages"][-1]["role"] == "user"
        assert [t["function"]["name"] for t in obs["tools"]][-1] == "submit"
        assert sessions(url) == before + 1
        wrote = env.step(call("write_file", path="solution.py", content=gold_source(task, gold)))
        assert wrote.observation["messages"][0]["content"].startswith("wrote ")
        assert wrote.reward is None and not wrote.done
        ran = env.step({"message": {"content": "try it", **call("run_python", code="print(7)")}})
        assert "7" in ran.observation["messages"][0]["content"]
        done = env.step(call("submit"))
        assert done.done is True and done.reward == 1.0
        assert done.observation["reason"] == "submitted"
        assert done.observation["verdict"]["passed"] is True
        state = env.state()
        assert state == {"episode_id": "ep-1", "step_count": 3, "task_id": task.id, "done": True}
    wait_for_sessions(url, before)  # the client's close frees the session


@needs_client
def test_single_turn_answers_and_a_second_reset_on_one_connection(
    url: str, he_tasks: list[Any], gold: list[dict[str, str]]
) -> None:
    task = he_tasks[1]
    before = sessions(url)
    with client(url) as env:
        env.reset(task_id=task.id, options={"single_turn": True})
        wrong = env.step({"content": "```python\ndef nope():\n    pass\n```"})
        assert wrong.done is True and wrong.reward is not None and wrong.reward < 1.0
        first = env.reset(task_id=task.id, options={"single_turn": True})
        assert first.observation["tools"] == [] and first.observation["turn"] == 0
        assert sessions(url) == before + 1  # the reset replaced the episode's session
        right = env.step({"content": f"```python\n{gold_source(task, gold)}```"})
        assert right.done is True and right.reward == 1.0
        assert right.observation["reason"] == "answered"
    wait_for_sessions(url, before)


@needs_client
def test_the_same_seed_gives_the_same_task(url: str) -> None:
    with client(url) as env:
        a = env.reset(seed=5).observation["task_id"]
        b = env.reset(seed=5).observation["task_id"]
        c = env.reset(seed=6).observation["task_id"]
    assert a == b != c


@needs_client
@pytest.mark.parametrize(
    ("reset", "action", "code"),
    [
        (None, {"content": "hi"}, "EXECUTION_ERROR"),  # step before reset
        ({"task_id": "nope/1"}, None, "VALIDATION_ERROR"),
        ({"tsk_id": "HumanEval/0"}, None, "VALIDATION_ERROR"),
        ({"seed": -1}, None, "VALIDATION_ERROR"),
        ({"options": {"tools": ["rm_rf"]}, "task_id": "HumanEval/0"}, None, "VALIDATION_ERROR"),
        ({"task_id": "HumanEval/0"}, {"bogus": 1}, "VALIDATION_ERROR"),
        ({"task_id": "HumanEval/0"}, {}, "VALIDATION_ERROR"),
        (
            {"task_id": "HumanEval/0"},
            {"message": {"role": "user", "content": "x"}},
            "VALIDATION_ERROR",
        ),
        ({"task_id": "HumanEval/0"}, {"content": 5}, "VALIDATION_ERROR"),
        ({"task_id": "HumanEval/0"}, {"content": "x", "message": {}}, "VALIDATION_ERROR"),
    ],
)
def test_a_bad_reset_or_action_is_an_error_frame_and_the_connection_goes_on(
    url: str, reset: dict[str, Any] | None, action: dict[str, Any] | None, code: str
) -> None:
    with client(url) as env:
        with pytest.raises(RuntimeError, match=rf"Server error: .*\(code: {code}\)"):
            if reset is not None and action is None:
                env.reset(**reset)
            else:
                if reset is not None:
                    env.reset(**reset)
                env.step(action)
        # The same connection still runs an episode.
        env.reset(task_id="HumanEval/0", options={"single_turn": False})
        r = env.step(call("write_file", path="../escape.py", content="x"))
        assert r.observation["messages"][0]["content"].startswith("error:") and not r.done


@needs_client
def test_an_ended_episode_takes_no_more_steps(url: str, he_tasks: list[Any]) -> None:
    with client(url) as env:
        env.reset(task_id=he_tasks[2].id, options={"single_turn": True})
        assert env.step({"content": "42"}).done
        with pytest.raises(RuntimeError, match=r"episode has ended.*EXECUTION_ERROR"):
            env.step({"content": "43"})


# ---- raw frames and dropped connections ----------------------------------------------------


def ws_url(url: str) -> str:
    return url.replace("http://", "ws://") + "/openenv/ws"


@needs_client
def test_hostile_frames_get_protocol_errors(url: str) -> None:
    from websockets.sync.client import connect

    with connect(ws_url(url)) as ws:
        for frame, code in [
            ("{not json", "INVALID_JSON"),
            ("[1, 2]", "VALIDATION_ERROR"),
            ('{"type": "dance"}', "UNKNOWN_TYPE"),
            ('{"type": 7}', "UNKNOWN_TYPE"),
            ('{"type": "reset", "data": [1]}', "VALIDATION_ERROR"),
            ('{"type": "step", "data": "x"}', "VALIDATION_ERROR"),
            ("[" * 200 + "]" * 200, "INVALID_JSON"),
        ]:
            ws.send(frame)
            reply = json.loads(ws.recv(timeout=30))
            assert reply["type"] == "error" and reply["data"]["code"] == code, frame
        ws.send(b'{"type": "state"}')  # a binary frame is read as UTF-8 text
        assert json.loads(ws.recv(timeout=30)) == {
            "type": "state",
            "data": {"episode_id": None, "step_count": 0, "task_id": None, "done": False},
        }


@needs_client
def test_a_dropped_connection_frees_its_session(url: str) -> None:
    from websockets.sync.client import connect

    before = sessions(url)
    with connect(ws_url(url), close_timeout=1) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"task_id": "HumanEval/3"}}))
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        assert sessions(url) == before + 1
        ws.socket.shutdown(socket.SHUT_RDWR)  # gone mid-episode, no close frame
        ws.socket.close()
        wait_for_sessions(url, before)


@needs_client
def test_idle_connections_capacity_and_oversized_messages(he_file: Path) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    reset = json.dumps({"type": "reset", "data": {"task_id": "HumanEval/0"}})
    with start(he_file, session_ttl_s=1.5, max_sessions=1, max_body_mb=0.5) as url:
        with connect(ws_url(url)) as first, connect(ws_url(url)) as second:
            first.send(reset)
            assert json.loads(first.recv(timeout=30))["type"] == "observation"
            second.send(reset)  # over the session cap: the error, then the connection closes
            refused = json.loads(second.recv(timeout=30))
            assert refused["data"]["code"] == "CAPACITY_REACHED"
            with pytest.raises(ConnectionClosed):
                second.recv(timeout=30)
            # first stays silent past --session-ttl: told so, closed, its session freed.
            idle = json.loads(first.recv(timeout=30))
            assert (
                idle["data"]["code"] == "SESSION_ERROR" and "no message" in idle["data"]["message"]
            )
            with pytest.raises(ConnectionClosed):
                first.recv(timeout=30)
        wait_for_sessions(url, 0)
        with connect(ws_url(url), max_size=None) as ws:
            ws.send(reset)
            ws.recv(timeout=30)
            ws.send(json.dumps({"type": "step", "data": {"content": "x" * (1 << 20)}}))
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=30)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
        wait_for_sessions(url, 0)


# ---- the stateless HTTP routes -------------------------------------------------------------


def test_http_reset_and_step_are_stateless_episodes(
    url: str, he_tasks: list[Any], gold: list[dict[str, str]]
) -> None:
    task = he_tasks[4]
    before = sessions(url)
    first = httpx.post(url + "/openenv/reset", json={"task_id": task.id}, timeout=60)
    assert first.status_code == 200, first.text
    body = first.json()
    assert set(body) == {"observation", "reward", "done"} and body["reward"] is None
    assert body["observation"]["task_id"] == task.id and body["observation"]["tools"] == []
    assert httpx.post(url + "/openenv/reset", timeout=60).status_code == 200  # empty body
    seeded = [httpx.post(url + "/openenv/reset", json={"seed": 9}).json() for _ in range(2)]
    assert seeded[0]["observation"]["task_id"] == seeded[1]["observation"]["task_id"]
    answer = {"content": f"```python\n{gold_source(task, gold)}```"}
    for action, reward in [(answer, 1.0), ({"content": "```python\npass\n```"}, 0.0)]:
        r = httpx.post(
            url + "/openenv/step",
            json={"action": action, "task_id": task.id, "timeout_s": 30, "request_id": "r1"},
            timeout=60,
        )
        assert r.status_code == 200, r.text
        assert r.json()["done"] is True and r.json()["reward"] == reward
    assert sessions(url) == before  # nothing kept


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("/openenv/step", {"action": {"content": "x"}}, 422),  # no task named
        ("/openenv/step", {"action": {"bogus": 1}, "task_id": "HumanEval/0"}, 422),
        ("/openenv/step", {"action": "x", "task_id": "HumanEval/0"}, 422),
        ("/openenv/step", {"action": {"content": "x"}, "task_id": "nope"}, 422),
        ("/openenv/step", {"action": {"content": "x"}, "seed": 1, "timeout_s": -1}, 422),
        ("/openenv/reset", {"seed": "one"}, 422),
        ("/openenv/reset", {"task_id": "HumanEval/0", "colour": "red"}, 422),
        ("/openenv/reset", [1], 422),
    ],
)
def test_hostile_http_bodies_get_a_4xx_json_body(
    url: str, path: str, body: Any, status: int
) -> None:
    r = httpx.post(url + path, json=body, timeout=60)
    assert r.status_code == status, r.text
    assert r.json()["message"]
    r = httpx.post(url + path, content=b"{oops", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["error"] == "invalid_body"


def test_state_schema_metadata_and_health_have_openenvs_shapes(url: str) -> None:
    assert httpx.get(url + "/openenv/state").json() == {"episode_id": None, "step_count": 0}
    schema = httpx.get(url + "/openenv/schema").json()
    assert set(schema) == {"action", "observation", "state"}
    assert set(schema["action"]["properties"]) == {"message", "content", "tool_calls"}
    assert "messages" in schema["observation"]["properties"]
    meta = httpx.get(url + "/openenv/metadata").json()
    assert set(meta) == {
        "name",
        "description",
        "readme_content",
        "version",
        "author",
        "documentation_url",
    }
    assert httpx.get(url + "/openenv/health").json() == {"status": "healthy"}
    assert httpx.get(url + "/health").json()["status"] == "ok"  # referee's own, unchanged
