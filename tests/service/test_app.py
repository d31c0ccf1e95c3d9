"""The native API against a real server on loopback (uvicorn in a thread, real sandbox)."""

from __future__ import annotations

import threading
import time
from typing import Any

import httpx

from tests.service.conftest import OTHER_TOKEN, TOKEN, client

HANG = "    while True:\n        pass\n"


def test_health_needs_no_token_and_everything_else_does(server: Any) -> None:
    with server() as url:
        assert httpx.get(url + "/health").json()["status"] == "ok"
        for method, path in [("GET", "/metrics"), ("GET", "/v1/tasks"), ("POST", "/v1/verify")]:
            r = httpx.request(method, url + path, json={})
            assert r.status_code == 401, path
            assert r.headers["www-authenticate"] == "Bearer"
            assert "--tokens" in r.json()["message"]
        wrong = client(url, token="x" * len(TOKEN)).get("/v1/tasks")
        assert wrong.status_code == 401
        assert client(url).get("/v1/tasks").status_code == 200


def test_verify_returns_the_cli_verdict_fields_in_order(
    server: Any, gold: list[dict[str, str]], he_tasks: list[Any]
) -> None:
    from referee.verify.dispatch import VerifierSet

    wrong = {"task_id": gold[1]["task_id"], "completion": "    return None\n"}
    samples = [gold[0], wrong, gold[2], gold[0]]
    with server() as url:
        r = client(url).post("/v1/verify", json={"samples": samples})
    assert r.status_code == 200, r.text
    verdicts = r.json()["verdicts"]
    assert [v["task_id"] for v in verdicts] == [s["task_id"] for s in samples]
    assert [v["passed"] for v in verdicts] == [True, False, True, True]
    # The same samples judged in-process give the same verdicts (timings aside).
    by_id = {t.id: t for t in he_tasks}
    with VerifierSet() as verifiers:
        local = [verifiers.verify(by_id[s["task_id"]], s["completion"]) for s in samples]
    for remote, mine in zip(verdicts, local, strict=True):
        mine_json = mine.model_dump(mode="json")
        assert set(remote) == set(mine_json)
        assert {k: remote[k] for k in ("reward", "passed", "tests", "flags", "infra_error")} == {
            k: mine_json[k] for k in ("reward", "passed", "tests", "flags", "infra_error")
        }


def test_unknown_task_ids_are_named_in_a_422(server: Any, gold: list[dict[str, str]]) -> None:
    with server() as url:
        r = client(url).post(
            "/v1/verify",
            json={
                "samples": [
                    gold[0],
                    {"task_id": "nope/1", "completion": ""},
                    {"task_id": "nope/2", "completion": ""},
                ]
            },
        )
    assert r.status_code == 422
    assert r.json()["unknown_task_ids"] == ["nope/1", "nope/2"]
    assert "GET /v1/tasks" in r.json()["message"]


def test_a_hung_candidate_is_killed_at_the_deadline_and_is_no_pass(
    server: Any, gold: list[dict[str, str]]
) -> None:
    with server(deadline_cap_s=20) as url:
        c = client(url)
        started = time.monotonic()
        r = c.post(
            "/v1/verify",
            json={
                "samples": [{"task_id": gold[0]["task_id"], "completion": HANG}],
                "deadline_s": 1.5,
            },
        )
        took = time.monotonic() - started
        verdict = r.json()["verdicts"][0]
        assert r.status_code == 200
        assert verdict["passed"] is False and verdict["reward"] == 0.0
        assert "deadline" in verdict["infra_error"]
        assert took < 1.5 + 1.0, took  # the worker was freed within the deadline plus 1 s
        # Every worker is free again: a full batch right after is judged normally.
        r = c.post("/v1/verify", json={"samples": gold[:4]})
        assert [v["passed"] for v in r.json()["verdicts"]] == [True] * 4
        metrics = c.get("/metrics").text
        assert 'referee_deadline_exceeded_total{route="/v1/verify"} 1.0' in metrics
        assert "referee_sandbox_workers_busy 0.0" in metrics


def test_exec_runs_python_and_shell_in_the_sandbox(server: Any) -> None:
    with server() as url:
        c = client(url)
        r = c.post(
            "/v1/exec",
            json={
                "code": "import sys; print(open('d.txt').read(), sys.stdin.read())",
                "stdin": "in",
                "files": {"d.txt": "data"},
            },
        )
        assert r.status_code == 200
        assert r.json()["stdout"] == "data in\n" and r.json()["exit_code"] == 0
        assert "bwrap" in r.json()["isolation"]
        r = c.post("/v1/exec", json={"code": "sleep 5", "language": "bash", "timeout_s": 0.5})
        assert r.json()["timed_out"] is True
        r = c.post("/v1/exec", json={"code": "x", "language": "cobol"})
        assert r.status_code == 422 and "python" in r.json()["message"]


def test_sessions_belong_to_the_token_that_opened_them(
    server: Any, gold: list[dict[str, str]]
) -> None:
    with server() as url:
        alice, bob = client(url), client(url, token=OTHER_TOKEN)
        r = alice.post("/v1/sessions", json={"env": "code", "task_id": gold[0]["task_id"]})
        assert r.status_code == 200, r.text
        sid = r.json()["session_id"]
        assert r.json()["messages"][-1]["role"] == "user"
        for path in ("/step", "/snapshot", "/verify"):
            body = {"message": {"role": "assistant", "content": "x"}} if path == "/step" else None
            assert bob.post(f"/v1/sessions/{sid}{path}", json=body).status_code == 404
        assert bob.delete(f"/v1/sessions/{sid}").status_code == 404
        snap = alice.post(f"/v1/sessions/{sid}/snapshot").json()["snapshot_id"]
        answer = {"role": "assistant", "content": "```python\n" + gold[0]["completion"] + "\n```"}
        step = alice.post(f"/v1/sessions/{sid}/step", json={"message": answer}).json()
        assert step["done"] is True and step["reward"] == 1.0
        again = alice.post(f"/v1/sessions/{sid}/step", json={"message": answer})
        assert again.status_code == 409
        assert (
            alice.post(f"/v1/sessions/{sid}/restore", json={"snapshot_id": snap}).json()["done"]
            is False
        )
        wrong = {"role": "assistant", "content": "```python\n    return 0\n```"}
        step = alice.post(f"/v1/sessions/{sid}/step", json={"message": wrong}).json()
        assert step["done"] is True and step["reward"] < 1.0
        assert alice.delete(f"/v1/sessions/{sid}").status_code == 200
        assert alice.post(f"/v1/sessions/{sid}/verify").status_code == 404


def test_idle_sessions_expire_and_free_their_place(server: Any, gold: list[dict[str, str]]) -> None:
    with server(session_ttl_s=0.3, max_sessions=1) as url:
        c = client(url)
        sid = c.post("/v1/sessions", json={"task_id": gold[0]["task_id"]}).json()["session_id"]
        full = c.post("/v1/sessions", json={"task_id": gold[1]["task_id"]})
        assert full.status_code == 429 and "Retry-After" in full.headers
        time.sleep(1.0)
        assert c.post(f"/v1/sessions/{sid}/verify").status_code == 404
        assert c.post("/v1/sessions", json={"task_id": gold[1]["task_id"]}).status_code == 200
        assert "referee_sessions_expired_total 1.0" in c.get("/metrics").text


def test_work_past_the_queue_limit_gets_429_with_retry_after(
    server: Any, gold: list[dict[str, str]]
) -> None:
    with server(queue=2, deadline_cap_s=10) as url:
        c = client(url)
        slow = {
            "samples": [{"task_id": gold[0]["task_id"], "completion": HANG}] * 2,
            "deadline_s": 2.0,
        }
        t = threading.Thread(target=lambda: client(url).post("/v1/verify", json=slow))
        t.start()
        time.sleep(0.5)  # the two slow samples hold the whole limit
        r = c.post("/v1/verify", json={"samples": gold[:1]})
        assert r.status_code == 429
        assert r.headers["retry-after"] == "1"
        too_big = c.post("/v1/verify", json={"samples": gold[:3]})
        t.join()
        assert too_big.status_code == 413 and "--queue" in too_big.json()["message"]
        assert c.post("/v1/verify", json={"samples": gold[:1]}).status_code == 200


def test_hostile_bodies_get_4xx_json_never_a_500(server: Any) -> None:
    bad: list[tuple[str, dict[str, Any], int]] = [
        ("/v1/verify", {"content": b"{" * 10_000}, 422),
        ("/v1/verify", {"content": b'{"samples": [}'}, 422),
        ("/v1/verify", {"json": {"samples": "all"}}, 422),
        ("/v1/verify", {"json": {"samples": [{"task_id": 1, "completion": "x"}]}}, 422),
        ("/v1/verify", {"json": {"samples": [], "extra": 1}}, 422),
        ("/v1/verify", {"content": b"x" * (2 * 1024 * 1024)}, 413),
        ("/v1/exec", {"json": {"code": "1", "files": {"/etc/passwd": "x"}}}, 422),
        ("/v1/exec", {"json": {"code": "1", "files": {"a/../../b": "x"}}}, 422),
        ("/v1/exec", {"json": {"code": "1", "timeout_s": -1}}, 422),
        ("/v1/exec", {"json": {"code": "1", "timout_s": 1}}, 422),
        ("/v1/sessions", {"json": {"task_id": "HumanEval/0", "env": "../../etc"}}, 422),
        ("/v1/sessions/..%2F..%2Fetc/verify", {}, 404),
        ("/v1/sessions/" + "a" * 5000 + "/verify", {}, 404),
        ("/v1/sessions/abc/step", {"json": {"message": {"role": "user", "content": "x"}}}, 422),
        ("/v1/sessions/abc/restore", {"json": {"snapshot_id": ["x"]}}, 422),
    ]
    with server(max_body_mb=1) as url:
        c = client(url)
        for path, kw, status in bad:
            headers = {"content-type": "application/json"}
            r = c.post(path, headers=headers, **kw)
            assert r.status_code == status, (path, kw.keys(), r.status_code, r.text[:200])
            body = r.json()
            assert set(body) >= {"error", "message"} and "Traceback" not in r.text
        assert c.get("/no/such/route").status_code == 404


def test_a_body_not_sent_as_json_gets_a_415_that_names_the_header(
    server: Any, gold: list[dict[str, str]]
) -> None:
    """``curl -d`` sends a form content type: the answer names the header to send, not a
    pydantic "valid dictionary" problem (and the body is never read as JSON: a browser page
    could send such a request to a local server without a CORS preflight)."""
    import json

    body = json.dumps({"samples": gold[:1]}).encode()
    with server() as url:
        c = client(url)
        for headers, named in [
            ({"content-type": "application/x-www-form-urlencoded"}, "x-www-form-urlencoded"),
            ({"content-type": "text/plain;charset=UTF-8"}, "text/plain"),
            ({}, "no Content-Type"),
        ]:
            for path in ("/v1/verify", "/v1/exec", "/v1/sessions"):
                r = c.post(path, content=body, headers=headers)
                assert r.status_code == 415, (path, headers, r.status_code, r.text[:300])
                answer = r.json()
                assert answer["error"] == "unsupported_media_type"
                assert "Content-Type: application/json" in answer["message"], answer
                assert named in answer["message"], answer
        # JSON's own types are read as before.
        for kind in ("application/json", "application/json; charset=utf-8"):
            r = c.post("/v1/verify", content=body, headers={"content-type": kind})
            assert r.status_code == 200, (kind, r.text[:300])
        # A malformed body sent as JSON is still the 422 that says so.
        r = c.post("/v1/verify", json={"samples": "all"})
        assert r.status_code == 422 and r.json()["error"] == "invalid_body"


def test_metrics_count_requests_verdicts_and_workers(
    server: Any, gold: list[dict[str, str]]
) -> None:
    with server() as url:
        c = client(url)
        c.post("/v1/verify", json={"samples": gold[:2]})
        text = c.get("/metrics").text
    assert 'referee_http_requests_total{route="/v1/verify",status="200"} 1.0' in text
    assert 'referee_verdicts_total{outcome="passed"} 2.0' in text
    assert "referee_http_request_seconds_bucket" in text
    assert "referee_queue_limit 256.0" in text
    assert "referee_sandbox_workers_idle 2.0" in text
    assert "referee_sessions_open 0.0" in text


def test_one_deadline_per_request_however_long_samples_wait_for_a_worker(
    server: Any, gold: list[dict[str, str]]
) -> None:
    """Ten hung samples on two workers: the queued ones must not each get a deadline of their
    own (that would take five deadlines, 7.5 s); they are not started once it has passed."""
    with server(deadline_cap_s=20) as url:
        hung = {"task_id": gold[0]["task_id"], "completion": HANG}
        started = time.monotonic()
        r = client(url).post("/v1/verify", json={"samples": [hung] * 10, "deadline_s": 1.5})
        took = time.monotonic() - started
    verdicts = r.json()["verdicts"]
    assert len(verdicts) == 10
    assert all("deadline" in (v["infra_error"] or "") for v in verdicts)
    # One deadline is 1.5 s; a deadline per sample would be five in a row. The bound leaves
    # 3.5 s for HTTP and the kills on a busy machine and still fails the per-sample design.
    assert took < 5.0, took


def test_the_server_reads_its_task_files_from_object_storage(
    server: Any, he_tasks: list[Any], gold: list[dict[str, str]], s3: Any
) -> None:
    """--tasks s3://...: the tasks are read through fsspec from an S3-compatible server."""
    from referee.tasks.model import write_tasks

    bucket, _ = s3
    url = f"s3://{bucket}/served/he.jsonl"
    write_tasks(url, he_tasks[:2])
    with server(tasks=(url,)) as base:
        c = client(base)
        assert [t["id"] for t in c.get("/v1/tasks").json()["tasks"]] == [t.id for t in he_tasks[:2]]
        verdicts = c.post("/v1/verify", json={"samples": gold[:2]}).json()["verdicts"]
    assert [v["passed"] for v in verdicts] == [True, True]


def test_verify_takes_a_language_per_program_sample(
    server: Any, he_file: Any, gold: list[dict[str, str]], tmp_path: Any
) -> None:
    from referee.service import Client
    from referee.tasks.model import write_tasks
    from referee.verify.program.redteam import EXAMPLES_TASK, GOLD

    programs = tmp_path / "programs.jsonl"
    write_tasks(programs, [EXAMPLES_TASK])
    tid, cpp = EXAMPLES_TASK.id, GOLD["cpp"]
    samples = [
        {"task_id": tid, "completion": cpp, "language": "cpp"},  # bare code, language given
        {"task_id": tid, "completion": cpp},  # bare code, no language: Python, which fails
        {"task_id": tid, "completion": f"Here:\n```c++\n{cpp}```\n"},  # the block's tag
        {"task_id": tid, "completion": f"```python\n{cpp}```\n", "language": "C++"},  # overrides
        {"task_id": tid, "completion": cpp, "language": "klingon"},  # a per-sample error
        {**gold[0], "language": "cpp"},  # ignored for a function task
    ]
    with server(tasks=(str(he_file), str(programs))) as url:
        r = client(url).post("/v1/verify", json={"samples": samples})
        bad = client(url).post(
            "/v1/verify", json={"samples": [{"task_id": tid, "completion": cpp, "language": 3}]}
        )
        with Client(url, TOKEN) as c:  # the client sends a pair's language too
            via_client = c.verify([(EXAMPLES_TASK, cpp, "cpp"), (tid, cpp)])
            # An environment session on a program task: one answer, judged with the toolchains.
            opened = c.open_session("code", tid)
            step = c.step(
                opened.session_id, {"role": "assistant", "content": samples[2]["completion"]}
            )
            session_verdict = c.verify_session(opened.session_id)
            c.close_session(opened.session_id)
    assert r.status_code == 200, r.text
    verdicts = r.json()["verdicts"]
    assert [v["passed"] for v in verdicts] == [True, False, True, True, False, True]
    assert all(v["infra_error"] is None for v in verdicts), verdicts
    assert verdicts[0]["verifier"] == "program@1" and verdicts[0]["tests"][0]["detail"] == "example"
    assert "unknown language 'klingon'" in verdicts[4]["tests"][0]["detail"]
    assert bad.status_code == 422
    assert [v.passed for v in via_client] == [True, False]
    assert opened.tools == [] and step.done and session_verdict.passed
