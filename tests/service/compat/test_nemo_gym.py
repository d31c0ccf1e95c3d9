"""``--compat nemo-gym``: NeMo Gym's resources-server calls against a real server on loopback.

nemo-gym needs Python >= 3.13 and does not install here, so its agent is replayed: the bodies are
the recorded shapes (tests/service/fixtures/wire/nemo_gym.resources_server.json, written from
NeMo Gym's simple_agent and ServerClient), sent with httpx, and the session cookie is handled as
that agent handles it: no cookie jar, the previous reply's ``Set-Cookie`` passed by hand on the
next call (seed_session -> each tool -> verify). One test sends them with aiohttp's
``DummyCookieJar`` and ``cookies=``, the agent's own transport, where aiohttp is installed.
"""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

import httpx
import pytest

from referee.service.compat.nemo_gym import COOKIE, nemo_gym_row

WIRE = Path(__file__).parents[1] / "fixtures" / "wire" / "nemo_gym.resources_server.json"
RECORDED = json.loads(WIRE.read_text())["exchanges"]
#: The Responses object the agent sent to /verify in the recorded exchange (its output replaced).
RESPONSE_TEMPLATE: dict[str, Any] = RECORDED[2]["request"]["body"]["response"]


@pytest.fixture(scope="module")
def served(he_file: Path) -> Iterator[tuple[str, Any]]:
    """(base URL, Service): one server for the module, NeMo Gym's routes on, no token."""
    from referee.service import ServeConfig, Service, running

    service = Service.start(
        ServeConfig(tasks=(str(he_file),), no_auth=True, workers=2, compat=("nemo-gym",))
    )
    with running(service) as url:
        yield url, service


@pytest.fixture
def url(served: tuple[str, Any]) -> str:
    return served[0]


class Agent:
    """NeMo Gym's agent as its resources server sees it: JSON bodies, no Authorization, no cookie
    jar; ``cookies`` are the previous reply's, passed on by hand."""

    def __init__(self, base: str, prefix: str = "") -> None:
        self.http = httpx.Client(base_url=base + prefix, timeout=60)
        self.cookies: dict[str, str] = {}
        self.replies: list[httpx.Response] = []

    def post(self, path: str, body: Any, *, raw: bytes | None = None) -> httpx.Response:
        headers = {"Content-Type": "application/json"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        content = raw if raw is not None else json.dumps(body).encode()
        r = self.http.post(path, content=content, headers=headers)
        self.http.cookies.clear()  # httpx keeps cookies; the agent's DummyCookieJar does not
        jar: SimpleCookie = SimpleCookie()
        for line in r.headers.get_list("set-cookie"):
            jar.load(line)
        self.cookies = {k: m.value for k, m in jar.items()}  # the next call sends these only
        self.replies.append(r)
        return r

    def tool(self, name: str, **args: Any) -> str:
        r = self.post(f"/{name}", args)
        assert r.status_code == 200, r.text
        return r.text


def response_object(calls: list[tuple[str, dict[str, Any], str]], final: str) -> dict[str, Any]:
    """The agent's Responses object: each call and its output, then the final message."""
    response = copy.deepcopy(RESPONSE_TEMPLATE)
    output: list[dict[str, Any]] = []
    for i, (name, args, result) in enumerate(calls):
        output.append(
            {
                "type": "function_call",
                "call_id": f"call_{i}",
                "name": name,
                "arguments": json.dumps(args),
                "id": f"fc_{i}",
                "status": "completed",
            }
        )
        output.append({"type": "function_call_output", "call_id": f"call_{i}", "output": result})
    output.append(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "annotations": [], "text": final}],
        }
    )
    response["output"] = output
    return response


def row_for(task: Any, **kw: Any) -> dict[str, Any]:
    return {**nemo_gym_row(task, **kw), "_ng_task_index": 0, "_ng_rollout_index": 0}


def tool_episode(
    agent: Agent, row: dict[str, Any], source: str, final: str = "Done."
) -> httpx.Response:
    """seed -> write_file -> run_python -> submit -> verify, as the agent sends them."""
    seeded = agent.post("/seed_session", row)
    assert seeded.status_code == 200, seeded.text
    calls = []
    for name, args in [
        ("write_file", {"path": "solution.py", "content": source}),
        ("run_python", {"code": "import solution\nprint('imported')"}),
        ("submit", {}),
    ]:
        calls.append((name, args, agent.tool(name, **args)))
    assert calls[0][2].startswith("wrote ")
    assert "imported" in calls[1][2]
    assert calls[2][2] == "submitted"
    return agent.post("/verify", {**row, "response": response_object(calls, final)})


def gold_source(task: Any, gold: list[dict[str, str]]) -> str:
    completion = next(g["completion"] for g in gold if g["task_id"] == task.id)
    return str(task.payload["code_prompt"]) + completion


# ---- episodes ------------------------------------------------------------------------------


def test_a_gold_episode_through_the_tools_is_rewarded_1_with_the_cookie_on_every_reply(
    url: str, he_tasks: list[Any], gold: list[dict[str, str]]
) -> None:
    task = he_tasks[0]
    row = row_for(task)
    agent = Agent(url)
    r = tool_episode(agent, row, gold_source(task, gold))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["reward"] == 1.0 and body["resolved"] is True
    assert body["referee_verdict"]["episode_end"] == "submitted"
    # The reply is the request plus the reward, as NeMo Gym's BaseVerifyResponse.
    for key in ("responses_create_params", "verifier_metadata", "_ng_task_index", "response"):
        assert body[key] == {**row, "response": body["response"]}[key]
    # Every reply of the session set the cookie again (the agent forwards only the last one).
    session_replies = agent.replies[:-1]
    assert all(COOKIE in rep.headers.get("set-cookie", "") for rep in session_replies)
    assert len({rep.headers["set-cookie"] for rep in session_replies}) == 1


def test_a_wrong_answer_is_rewarded_below_1(url: str, he_tasks: list[Any]) -> None:
    task = he_tasks[1]
    source = str(task.payload["code_prompt"]) + "    return None\n"
    r = tool_episode(Agent(url), row_for(task), source)
    assert r.status_code == 200, r.text
    assert r.json()["reward"] < 1.0 and r.json()["resolved"] is False


def test_the_final_message_is_the_answer_when_nothing_was_submitted(
    url: str, he_tasks: list[Any], gold: list[dict[str, str]]
) -> None:
    task = he_tasks[2]
    gold_code = f"```python\n{gold_source(task, gold)}```"
    for single_turn in (True, False):
        row = row_for(task, single_turn=single_turn)
        assert (row["responses_create_params"]["tools"] == []) is single_turn
        for text, rewarded in [(gold_code, True), ("```python\ndef nope(): pass\n```", False)]:
            agent = Agent(url)
            assert agent.post("/seed_session", row).status_code == 200
            r = agent.post("/verify", {**row, "response": response_object([], text)})
            assert r.status_code == 200, r.text
            assert (r.json()["reward"] == 1.0) is rewarded, (single_turn, text)
            assert r.json()["referee_verdict"]["episode_end"] == "answered"


def test_the_row_holds_what_the_environment_starts_with(url: str, he_tasks: list[Any]) -> None:
    task = he_tasks[3]
    row = nemo_gym_row(task, max_turns=12)
    assert row["verifier_metadata"] == {
        "task_id": task.id,
        "env": "code",
        "options": {"single_turn": False, "max_turns": 12},
    }
    assert row["agent_ref"] == {"type": "responses_api_agents", "name": "referee_simple_agent"}
    native = httpx.post(
        url + "/v1/sessions",
        json={
            "env": "code",
            "task_id": task.id,
            "options": {"single_turn": False, "max_turns": 12},
        },
        timeout=60,
    ).json()
    assert row["responses_create_params"]["input"] == native["messages"]
    tools = row["responses_create_params"]["tools"]
    assert [t["name"] for t in tools] == [t["function"]["name"] for t in native["tools"]]
    assert tools[0]["parameters"] == native["tools"][0]["function"]["parameters"]
    assert {t["type"] for t in tools} == {"function"} and "function" not in tools[0]
    httpx.delete(f"{url}/v1/sessions/{native['session_id']}", timeout=60)
    # Without options the row's tools decide: the ones named, and only those.
    agent = Agent(url)
    bare = {"responses_create_params": {"input": [], "tools": tools[:2]}, "task_id": task.id}
    assert agent.post("/seed_session", bare).json()["tools"] == ["list_files", "read_file"]
    assert "unknown tool 'write_file'" in agent.tool("write_file", path="x", content="")


def test_an_infrastructure_error_is_a_503_not_a_reward_of_0(
    served: tuple[str, Any], he_tasks: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from referee.verify.verdict import Verdict

    url, service = served
    runtime = service.engine.runtime
    monkeypatch.setattr(
        runtime, "verify", lambda task, answer: Verdict.infra(task.id, "sandbox gone", "test")
    )
    task = he_tasks[0]
    agent = Agent(url)
    row = row_for(task, single_turn=True)
    agent.post("/seed_session", row)
    r = agent.post("/verify", {**row, "response": response_object([], "```python\npass\n```")})
    assert r.status_code == 503
    assert r.json()["error"] == "infra_error" and "sandbox gone" in r.json()["message"]
    assert "reward" not in r.json()


# ---- tools and sessions --------------------------------------------------------------------


def test_bad_tool_calls_get_the_tools_error_text_and_the_episode_goes_on(
    url: str, he_tasks: list[Any]
) -> None:
    agent = Agent(url)
    agent.post("/seed_session", row_for(he_tasks[4]))
    assert "must be of type string" in agent.tool("write_file", path=3, content="x")
    assert agent.tool("write_file", path="../x", content="x").startswith("error:")
    assert agent.tool("read_file", path="/etc/passwd").startswith("error:")
    assert "missing argument" in agent.tool("run_python")
    # A tool the environment does not have (a model's invention): its error text, the cookie.
    r = agent.post("/frobnicate", {"x": 1})
    assert r.status_code == 200 and "unknown tool 'frobnicate'" in r.text
    assert COOKIE in agent.cookies
    r = agent.post("/write_file", [1, 2])
    assert r.status_code == 200 and "must be a JSON object" in r.text
    r = agent.post("/write_file", None, raw=b'{"path": ')
    assert r.status_code == 422 and r.json()["error"] == "invalid_body"
    assert COOKIE in agent.cookies  # even the error re-sends the cookie
    assert agent.tool("write_file", path="ok.txt", content="fine") == "wrote 4 bytes to ok.txt"


def test_a_call_without_a_live_session_is_a_404_that_says_what_to_do(
    url: str, he_tasks: list[Any]
) -> None:
    agent = Agent(url)
    r = agent.post("/run_python", {"code": "print(1)"})
    assert r.status_code == 404 and "seed_session" in r.json()["message"]
    for forged in ["A" * 22, "not a session id", ""]:
        agent.cookies = {COOKIE: forged}
        r = agent.post("/run_python", {"code": "print(1)"})
        assert r.status_code == 404 and r.json()["error"] == "no_session", forged
    agent.cookies = {COOKIE: "A" * 22}
    row = row_for(he_tasks[0])
    r = agent.post("/verify", {**row, "response": response_object([], "x")})
    assert r.status_code == 404 and r.json()["error"] == "no_session"


def test_sessions_are_isolated_per_cookie_and_verify_closes_its_own(
    url: str, he_tasks: list[Any]
) -> None:
    row = row_for(he_tasks[5])
    a, b = Agent(url), Agent(url)
    a.post("/seed_session", row)
    b.post("/seed_session", row)
    assert a.cookies != b.cookies
    a.tool("write_file", path="note.txt", content="from a")
    b.tool("write_file", path="note.txt", content="from b")
    assert a.tool("read_file", path="note.txt") == "from a"
    assert b.tool("read_file", path="note.txt") == "from b"
    sessions = httpx.get(url + "/health").json()["sessions"]
    saved = dict(a.cookies)
    first = a.post("/verify", {**row, "response": response_object([], "Done.")})
    assert first.status_code == 200
    assert httpx.get(url + "/health").json()["sessions"] == sessions - 1
    # The agent retries a dropped connection with the same cookie: the same answer.
    a.cookies = saved
    again = a.post("/verify", {**row, "response": response_object([], "Done.")})
    assert again.status_code == 200 and again.json() == first.json()
    a.cookies = saved
    assert a.post("/read_file", {"path": "note.txt"}).status_code == 404  # closed
    assert b.tool("read_file", path="note.txt") == "from b"  # b's session is untouched


def test_the_ng_rollout_prefix_serves_the_same_routes(
    url: str, he_tasks: list[Any], gold: list[dict[str, str]]
) -> None:
    task = he_tasks[6]
    agent = Agent(url, prefix="/ng-rollout/run-7.a_b")
    row = row_for(task)
    r = tool_episode(agent, row, gold_source(task, gold))
    assert r.status_code == 200 and r.json()["reward"] == 1.0
    assert r.request.url.path == "/ng-rollout/run-7.a_b/verify"
    agent.post("/seed_session", row)
    assert "unknown tool 'nope'" in agent.tool("nope")  # the catch-all, under the prefix too
    bad = Agent(url, prefix="/ng-rollout/-bad")
    r = bad.post("/seed_session", row_for(task))
    assert r.status_code == 422 and "rollout id" in r.json()["message"]


def test_aggregate_metrics_per_task_and_overall(url: str) -> None:
    rows = [
        {"_ng_task_index": 0, "reward": 1.0, "resolved": True},
        {"_ng_task_index": 0, "reward": 0.0, "resolved": False},
        {"_ng_task_index": 1, "reward": 0.5},
    ]
    r = httpx.post(url + "/aggregate_metrics", json={"verify_responses": rows})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["group_level_metrics"][0] == {
        "_ng_task_index": 0,
        "mean/reward": 0.5,
        "min/reward": 0.0,
        "max/reward": 1.0,
        "count": 2.0,
    }
    assert body["agent_metrics"]["mean/reward"] == pytest.approx(0.5)
    assert body["agent_metrics"]["mean/resolved"] == 0.5
    assert body["key_metrics"]["mean/reward"] == pytest.approx(0.5)
    bad = httpx.post(url + "/aggregate_metrics", json={"verify_responses": [{"reward": "1"}]})
    assert bad.status_code == 422 and "reward must be a number" in bad.json()["message"]
    assert httpx.get(url + "/reverify_mode").json() == "unsupported"


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (b'{"responses_create_params": ', "invalid_body"),
        (b'{"verifier_metadata": {"task_id": 5}}', "invalid_body"),
        (b'{"verifier_metadata": {"task_id": "nope/1"}}', "unknown_task"),
        (
            b'{"responses_create_params": {"tools": "all"}, "task_id": "HumanEval/0"}',
            "invalid_body",
        ),
        (
            b'{"verifier_metadata": {"options": {"max_turns": "9"}}, "task_id": "HumanEval/0"}',
            "invalid_body",
        ),
        (b"[" * 100 + b"]" * 100, "invalid_body"),
        (b"{}", "invalid_body"),
    ],
)
def test_a_hostile_seed_gets_a_4xx_json_body(url: str, raw: bytes, error: str) -> None:
    r = Agent(url).post("/seed_session", None, raw=raw)
    assert 400 <= r.status_code < 500, r.text
    assert r.json()["error"] == error


def test_a_huge_body_is_refused_before_it_is_read(url: str) -> None:
    r = httpx.post(
        url + "/write_file", content=b"x" * (17 << 20), headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 413 and r.json()["error"] == "body_too_large"


@pytest.mark.skipif(not importlib.util.find_spec("aiohttp"), reason="aiohttp not installed")
def test_the_agents_own_transport_forwards_the_cookie(url: str, he_tasks: list[Any]) -> None:
    """aiohttp with DummyCookieJar and ``cookies=`` the previous reply's, as ServerClient."""
    import aiohttp

    row = row_for(he_tasks[7])

    async def rollout() -> tuple[str, int]:
        async with aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar()) as http:

            async def post(path: str, body: Any, cookies: Any) -> tuple[str, Any, int]:
                async with http.post(
                    url + path,
                    data=json.dumps(body).encode(),
                    headers={"Content-Type": "application/json"},
                    cookies=cookies,
                ) as r:
                    return (await r.content.read()).decode(), r.cookies, r.status

            _, cookies, _ = await post("/seed_session", row, None)
            _, cookies, _ = await post("/write_file", {"path": "a.txt", "content": "hi"}, cookies)
            text, cookies, _ = await post("/read_file", {"path": "a.txt"}, cookies)
            _, _, status = await post(
                "/verify", {**row, "response": response_object([], "no")}, cookies
            )
            return text, status

    text, status = asyncio.run(rollout())
    assert text == "hi" and status == 200
