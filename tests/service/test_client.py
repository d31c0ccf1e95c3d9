"""``referee.service.Client``: the native API as typed calls, typed errors, and retries, against
a real server on loopback (and, for what a real server cannot be made to do on cue, such as
dropping a connection mid-request, against httpx's mock transport)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import httpx
import pytest

from referee.errors import NotFoundError
from referee.sandbox.result import ExecResult
from referee.service import (
    Client,
    InvalidRequest,
    RemoteNotFound,
    RetryPolicy,
    ServerBusy,
    ServerUnavailable,
    Unauthorized,
)
from referee.verify.verdict import Verdict
from tests.service.conftest import OTHER_TOKEN, TOKEN, client

HANG = "    while True:\n        pass\n"
SESSION = "A" * 22  # looks like a session id; no server holds it


def _answer(completion: str) -> dict[str, str]:
    return {"role": "assistant", "content": "```python\n" + completion + "\n```"}


def test_verify_exec_and_a_session_round_trip(
    server: Any, gold: list[dict[str, str]], he_tasks: list[Any]
) -> None:
    wrong = (he_tasks[1], "    return None\n")  # a (Task, completion) pair, as TRL has them
    with server() as url, Client(url, TOKEN) as c:
        assert c.health()["status"] == "ok"
        assert {t["id"] for t in c.tasks()} == {t.id for t in he_tasks}
        verdicts = c.verify([gold[0], wrong, (gold[2]["task_id"], gold[2]["completion"])])
        assert all(isinstance(v, Verdict) for v in verdicts)
        assert [(v.task_id, v.passed) for v in verdicts] == [
            (gold[0]["task_id"], True),
            (he_tasks[1].id, False),
            (gold[2]["task_id"], True),
        ]
        assert verdicts[0].verifier and verdicts[0].tests  # the server's evidence came along
        assert c.verify([]) == []

        run = c.exec("import sys; print(open('d.txt').read(), sys.stdin.read())",
                     stdin="in", files={"d.txt": "data"})  # fmt: skip
        assert isinstance(run, ExecResult) and run.ok and run.stdout == "data in\n"

        opened = c.open_session("code", gold[0]["task_id"])
        assert opened.messages[-1]["role"] == "user" and opened.tools == []  # single-turn
        snap = c.snapshot(opened.session_id)
        step = c.step(opened.session_id, _answer("    return 0\n"))
        assert step.done and step.verdict is not None and step.verdict.reward < 1.0
        assert c.restore(opened.session_id, snap) is False  # not done at the snapshot
        step = c.step(opened.session_id, _answer(gold[0]["completion"]))
        assert step.verdict is not None and step.verdict.passed
        assert c.verify_session(opened.session_id).passed
        c.close_session(opened.session_id)
        with pytest.raises(RemoteNotFound):
            c.verify_session(opened.session_id)
        assert c.health()["sessions"] == 0


def test_errors_are_typed_and_carry_the_servers_answer(
    server: Any, gold: list[dict[str, str]]
) -> None:
    with server() as url:
        with Client(url) as anonymous, pytest.raises(Unauthorized) as e:
            anonymous.tasks()
        assert e.value.status == 401 and "--tokens" in str(e.value) and url in str(e.value)

        c = Client(url, TOKEN)
        with pytest.raises(InvalidRequest) as bad:
            c.verify([gold[0], {"task_id": "nope/1", "completion": ""}])
        assert bad.value.status == 422 and bad.value.error == "unknown_task"
        assert bad.value.unknown_task_ids == ["nope/1"]

        # Another token's session looks like no session; both are a NotFoundError too.
        sid = c.open_session("code", gold[0]["task_id"]).session_id
        with Client(url, OTHER_TOKEN) as bob, pytest.raises(RemoteNotFound) as gone:
            bob.verify_session(sid)
        assert isinstance(gone.value, NotFoundError) and gone.value.status == 404

        c.step(sid, _answer(gold[0]["completion"]))
        with pytest.raises(InvalidRequest) as over:
            c.step(sid, _answer(gold[0]["completion"]))
        assert over.value.status == 409 and over.value.error == "episode_done"
        c.close()


def test_a_body_the_server_would_not_read_as_json_is_an_invalid_request() -> None:
    from referee.service.errors import error_for_status

    body = {"error": "unsupported_media_type", "message": "send Content-Type: application/json"}
    e = error_for_status(415, body, "POST http://h/v1/verify")
    assert isinstance(e, InvalidRequest) and e.status == 415
    assert "Content-Type: application/json" in str(e)


def test_a_full_server_is_retried_until_it_admits_and_a_budget_gives_up(
    server: Any, gold: list[dict[str, str]]
) -> None:
    hold_s = 3.0
    with server(queue=1, deadline_cap_s=10) as url:
        slow = {"samples": [{"task_id": gold[0]["task_id"], "completion": HANG}],
                "deadline_s": hold_s}  # fmt: skip
        holder = threading.Thread(target=lambda: client(url).post("/v1/verify", json=slow))
        holder.start()
        started = time.monotonic()
        time.sleep(0.5)  # the hanging sample holds the whole limit now
        try:
            impatient = Client(url, TOKEN, retries=RetryPolicy(retries=1, backoff_s=0.05))
            with pytest.raises(ServerBusy) as busy:
                impatient.verify(gold[:1])
            assert busy.value.status == 429 and busy.value.retry_after_s == 1.0
            assert "gave up after 2 attempts" in str(busy.value)
            assert time.monotonic() - started < hold_s  # it gave up while the hold lasted

            verdicts = Client(url, TOKEN).verify(gold[:1])  # default retries outlast the hold
            assert verdicts[0].passed
            assert time.monotonic() - started >= hold_s - 0.5
        finally:
            holder.join()
        metrics = client(url).get("/metrics").text
        refused = [
            line for line in metrics.splitlines() if 'route="/v1/verify",status="429"' in line
        ]
        assert refused and float(refused[0].split()[-1]) >= 3  # 2 impatient + >= 1 patient


def test_a_server_that_is_not_there_is_reported_quickly_with_its_url() -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    started = time.monotonic()
    with Client(url) as c:
        with pytest.raises(ServerUnavailable) as e:
            c.health()
        assert time.monotonic() - started < 3
        assert url in str(e.value) and "referee serve" in str(e.value)
        with pytest.raises(ServerUnavailable) as e:
            c.step(SESSION, _answer("x"))
        assert SESSION in str(e.value) and "gone" in str(e.value)


# ---- retry rules, on a transport that fails on cue ---------------------------------------------


def _scripted(*outcomes: Any) -> tuple[httpx.MockTransport, list[str]]:
    """A transport answering each request with the next outcome (an exception class is raised
    as if the network did it); the requests' paths are recorded."""
    seen: list[str] = []
    left = list(outcomes)

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        outcome = left.pop(0)
        if isinstance(outcome, type):
            raise outcome("scripted", request=request)
        return outcome

    return httpx.MockTransport(handle), seen


OK_STEP = httpx.Response(200, json={"messages": [], "done": False, "reward": None})
OK_VERIFY = httpx.Response(200, json={"verdicts": []})
FAST = RetryPolicy(backoff_s=0.01)


def test_a_step_is_never_repeated_once_it_may_have_reached_the_server() -> None:
    transport, seen = _scripted(httpx.RemoteProtocolError, OK_STEP)
    with (
        Client("http://judge", transport=transport, retries=FAST) as c,
        pytest.raises(ServerUnavailable) as e,
    ):
        c.step(SESSION, _answer("x"))
    assert len(seen) == 1
    assert "not retried" in str(e.value) and SESSION in str(e.value)


def test_a_step_is_retried_when_the_server_did_nothing() -> None:
    busy = httpx.Response(429, headers={"Retry-After": "0.2"}, json={"error": "busy"})
    draining = httpx.Response(503, headers={"Retry-After": "0"}, json={"error": "draining"})
    transport, seen = _scripted(httpx.ConnectError, busy, draining, OK_STEP)
    started = time.monotonic()
    with Client("http://judge", transport=transport, retries=FAST) as c:
        assert c.step(SESSION, _answer("x")).done is False
    assert len(seen) == 4
    assert time.monotonic() - started >= 0.2  # Retry-After was honoured


def test_idempotent_calls_are_retried_after_a_broken_connection_and_a_sandbox_503() -> None:
    broken = httpx.Response(503, json={"error": "sandbox_error", "message": "died"})
    transport, seen = _scripted(httpx.ReadError, broken, OK_VERIFY)
    with Client("http://judge", transport=transport, retries=FAST) as c:
        assert c.verify([{"task_id": "t", "completion": "x"}]) == []
    assert seen == ["/v1/verify"] * 3


def test_a_step_is_not_retried_after_a_sandbox_503() -> None:
    broken = httpx.Response(503, json={"error": "sandbox_error", "message": "died"})
    transport, seen = _scripted(broken, OK_STEP)
    with (
        Client("http://judge", transport=transport, retries=FAST) as c,
        pytest.raises(ServerUnavailable) as e,
    ):
        c.step(SESSION, _answer("x"))
    assert len(seen) == 1 and e.value.error == "sandbox_error"


def test_attempts_and_total_time_are_bounded() -> None:
    busy = httpx.Response(429, headers={"Retry-After": "5"}, json={"error": "busy"})
    transport, seen = _scripted(busy, busy, OK_VERIFY)
    started = time.monotonic()
    with (
        Client("http://judge", transport=transport, retries=RetryPolicy(budget_s=1.0)) as c,
        pytest.raises(ServerBusy) as e,  # a 5 s wait does not fit in the 1 s budget
    ):
        c.verify([{"task_id": "t", "completion": "x"}])
    assert len(seen) == 1 and time.monotonic() - started < 1.0
    assert e.value.retry_after_s == 5.0
