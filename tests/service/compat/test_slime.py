"""``POST /slime/reward`` (``--compat slime``) against a real server and sandbox.

slime is not on the package index and does not install here, so its client is replayed: the
request bodies recorded from its source in tests/service/fixtures/wire/slime.remote_rm.json,
sent the way ``slime.rollout.rm_hub.remote_rm`` sends them (one shared aiohttp session,
``json=``, ``raise_for_status``, the reply's parsed JSON taken as the reward as is).
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.service.compat.serving import assert_json_error, served

WIRE = Path(__file__).parents[1] / "fixtures" / "wire" / "slime.remote_rm.json"
COMPAT = ("slime",)
PATH = "/slime/reward"


class SlimeError(Exception):
    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"{status}: {body}")
        self.status = status
        self.body = body


async def remote_rm(
    session: aiohttp.ClientSession, url: str, payload: dict[str, Any], max_retries: int = 1
) -> Any:
    """slime's ``remote_rm`` (10 tries with back-off there; here ``max_retries``, no back-off),
    keeping the error reply so the test can read it."""
    for attempt in range(max_retries):
        async with session.post(url, json=payload) as resp:
            if resp.status < 400:
                return await resp.json()
            if attempt + 1 >= max_retries:
                raise SlimeError(resp.status, await resp.json())
    raise AssertionError("unreachable")


def slime_session() -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(limit=64, enable_cleanup_closed=True)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120))


def rewards(url: str, payloads: list[dict[str, Any]]) -> list[Any]:
    """One reward per payload, sent concurrently over one shared session, as slime does."""

    async def main() -> list[Any]:
        async with slime_session() as session:
            return list(await asyncio.gather(*(remote_rm(session, url, p) for p in payloads)))

    return asyncio.run(main())


def errors(url: str, payloads: list[dict[str, Any]]) -> list[SlimeError]:
    async def main() -> list[Any]:
        async with slime_session() as session:
            calls = (remote_rm(session, url, p) for p in payloads)
            return list(await asyncio.gather(*calls, return_exceptions=True))

    out = asyncio.run(main())
    assert all(isinstance(e, SlimeError) for e in out), out
    return out


@pytest.fixture(scope="module")
def recorded() -> list[dict[str, Any]]:
    """The request bodies slime sends: a chat-templated string prompt, a message-list prompt."""
    doc = json.loads(WIRE.read_text())
    bodies = [e["request"]["body"] for e in doc["exchanges"]]
    assert [sorted(b) for b in bodies] == [["label", "prompt", "response"]] * 2
    assert isinstance(bodies[0]["prompt"], str) and isinstance(bodies[1]["prompt"], list)
    return bodies


@pytest.fixture(scope="module")
def rm(he_file: Path) -> Any:
    with served(he_file, compat=COMPAT) as (url, service):
        yield url + PATH, service


def sample(body: dict[str, Any], task_id: Any, response: str) -> dict[str, Any]:
    out = copy.deepcopy(body)
    out.update(label=task_id, response=response)
    return out


def test_the_recorded_requests_get_a_bare_reward(
    rm: Any, recorded: list[dict[str, Any]], gold: list[dict[str, str]]
) -> None:
    url, _ = rm
    right, wrong = gold[0], {"task_id": gold[1]["task_id"], "completion": "    return None\n"}
    payloads = [
        sample(body, s["task_id"], s["completion"]) for body in recorded for s in (right, wrong)
    ]
    assert rewards(url, payloads) == [1.0, 0.0, 1.0, 0.0]


def test_format_dict_is_what_reward_key_reads(
    rm: Any, recorded: list[dict[str, Any]], gold: list[dict[str, str]]
) -> None:
    url, _ = rm
    fenced = "Here you go:\n```python\n" + gold[2]["completion"] + "```"
    label = json.dumps({"task_id": gold[2]["task_id"]})
    (reply,) = rewards(url + "?format=dict", [sample(recorded[1], label, fenced)])
    assert reply["reward"] == 1.0 and reply["passed"] == 1  # slime reads reply["reward"]
    assert reply["task_id"] == gold[2]["task_id"] and reply["tests_passed"] == reply["tests_total"]
    assert reply["tests_total"] > 0


def test_an_unknown_task_or_no_label_is_a_422_never_a_silent_0(
    rm: Any, recorded: list[dict[str, Any]]
) -> None:
    url, _ = rm
    unknown, no_label = errors(
        url, [sample(recorded[0], "HumanEval/999", "x"), sample(recorded[0], None, "x")]
    )
    assert unknown.status == 422 and unknown.body["unknown_task_ids"] == ["HumanEval/999"]
    assert no_label.status == 422 and "--label-key" in no_label.body["message"]


def test_past_the_queue_limit_samples_wait_instead_of_failing(
    he_file: Path, recorded: list[dict[str, Any]], gold: list[dict[str, str]]
) -> None:
    """Every sample gets its reward at the first try (slime's back-off starts at 1 s)."""
    with served(he_file, compat=COMPAT, queue=1) as (url, service):
        payloads = [sample(recorded[0], s["task_id"], s["completion"]) for s in gold[:6]]
        assert rewards(url + PATH, payloads) == [1.0] * 6
        assert service.admission.in_use == 0


def test_hostile_bodies_get_4xx_json_never_a_500(he_file: Path) -> None:
    import httpx

    ok = {"prompt": "p", "response": "    return None\n", "label": "HumanEval/0"}
    bad: list[tuple[str, dict[str, Any], int]] = [
        (PATH, {"content": b"[" * 10_000}, 422),
        (PATH, {"content": b'{"response": '}, 422),
        (PATH, {"content": b"3.0"}, 422),
        (PATH, {"json": {"prompt": "p", "label": "HumanEval/0"}}, 422),
        (PATH, {"json": {**ok, "response": ["x"]}}, 422),
        (PATH, {"json": {**ok, "label": 12}}, 422),
        (PATH, {"json": {**ok, "label": {"task_id": ["HumanEval/0"]}}}, 422),
        (PATH, {"json": {**ok, "label": "{not json"}}, 422),
        (PATH, {"json": {**ok, "prompt": 5}}, 422),
        (PATH + "?format=xml", {"json": ok}, 422),
        (PATH, {"content": b"x" * (2 * 1024 * 1024)}, 413),
    ]
    with (
        served(he_file, compat=COMPAT, max_body_mb=1) as (url, _),
        httpx.Client(base_url=url, timeout=30) as c,
    ):
        for path, kw, status in bad:
            r = c.post(path, headers={"content-type": "application/json"}, **kw)
            assert_json_error(r, status)
        assert c.post(PATH, json={**ok, "metadata": {"x": 1}}).json() == 0.0
