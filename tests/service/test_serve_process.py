"""`referee serve` as a process: SIGTERM drains, and settings it cannot serve with exit 2."""

from __future__ import annotations

import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service.procs import serve_process

HANG = "    while True:\n        pass\n"


def test_sigterm_drains_work_in_flight_refuses_new_work_and_exits_0(
    he_file: Path, gold: list[dict[str, str]]
) -> None:
    args = ["--tasks", str(he_file), "--no-auth", "--workers", "2"]
    with serve_process(args) as sp:
        c = httpx.Client(base_url=sp.url, timeout=30)
        slow = {"samples": [{"task_id": gold[0]["task_id"], "completion": HANG}] * 2}
        reply: dict[str, Any] = {}
        t = threading.Thread(
            target=lambda: reply.update(
                r=httpx.post(sp.url + "/v1/verify", json={**slow, "deadline_s": 3}, timeout=30)
            )
        )
        t.start()
        until = time.monotonic() + 10
        while c.get("/health").json()["queue"]["in_use"] < 2:  # the slow request is admitted
            assert time.monotonic() < until
            time.sleep(0.02)
        sp.proc.send_signal(signal.SIGTERM)
        signalled = time.monotonic()
        while (health := c.get("/health")).status_code == 200:
            assert time.monotonic() < signalled + 2, "SIGTERM did not start a drain"
            time.sleep(0.02)
        # While the work in flight runs: the listener stays open, says it drains, refuses work.
        assert health.status_code == 503 and health.json()["status"] == "draining"
        new = c.post("/v1/verify", json={"samples": gold[:1]})
        assert new.status_code == 503 and new.json()["error"] == "draining"
        assert new.headers["retry-after"] == "5"
        t.join(timeout=20)
        # The request in flight finished normally: its samples hit their deadline, as asked.
        r = reply["r"]
        assert r.status_code == 200, r.text
        assert [v["passed"] for v in r.json()["verdicts"]] == [False, False]
        assert all("deadline" in v["infra_error"] for v in r.json()["verdicts"])
        assert sp.proc.wait(timeout=15) == 0
        took = time.monotonic() - signalled
        assert took < 3 + 5, took  # the drain ended with the work, not at --drain-timeout
        assert "draining" in sp.drain_stderr()
        with pytest.raises(httpx.ConnectError):
            httpx.get(sp.url + "/health")


def test_serve_refuses_settings_it_cannot_serve_with_exit_2_and_the_fix(
    he_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from referee.cli import app

    monkeypatch.chdir(tmp_path)
    (tmp_path / "short.txt").write_text("# tokens\nalice:abcdefghijklmnop\nbob:short\n")
    (tmp_path / "ok.txt").write_text("alice:abcdefghijklmnopqrstuvwx\n")
    tasks = ["--tasks", str(he_file)]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        busy_port = str(busy.getsockname()[1])
        cases = [
            (tasks, ["--tokens FILE", "--no-auth"]),
            ([*tasks, "--no-auth", "--host", "0.0.0.0"], ["loopback only", "--tokens FILE"]),
            ([*tasks, "--tokens", "short.txt"], ["short.txt:3", "at least 12 characters"]),
            ([*tasks, "--tokens", "ok.txt", "--no-auth"], ["not both"]),
            ([*tasks, "--tokens", "missing.txt"], ["--tokens", "missing.txt"]),
            ([*tasks, "--no-auth", "--port", busy_port], [busy_port, "another --port"]),
            ([*tasks, "--no-auth", "--compat", "nope"], ["nope", "sandbox-fusion"]),
            (["--tasks", "missing.jsonl", "--no-auth"], ["missing.jsonl"]),
        ]
        # Every refusal comes before a sandbox starts or a port is held.
        for args, words in cases:
            r = CliRunner().invoke(app, ["serve", *args])
            assert r.exit_code == 2, (args, r.exit_code, r.output)
            lines = r.output.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("referee: "), (args, r.output)
            for w in words:
                assert w in lines[0], (args, w, lines[0])


def test_a_client_connecting_at_the_announcement_is_not_refused(he_file: Path) -> None:
    # The address was announced before the socket listened: a client that connected at once
    # (a supervisor watching the log, a test) was refused while uvicorn started.
    with serve_process(["--tasks", str(he_file), "--no-auth", "--workers", "1"]) as sp:
        host, port = sp.url.removeprefix("http://").rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=30) as conn:
            conn.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert conn.recv(64).startswith(b"HTTP/1.1 200")


def test_max_sessions_caps_the_open_sessions_and_the_next_gets_429(
    he_file: Path, tmp_path: Path
) -> None:
    # issue 33: the cap was fixed at 256 (ServeConfig.max_sessions had no option).
    from typer.testing import CliRunner

    from referee.cli import app
    from referee.tasks.model import read_tasks

    for bad in ("0", "-1"):
        r = CliRunner().invoke(app, ["serve", "--tasks", str(he_file), "--no-auth",
                                     "--max-sessions", bad])  # fmt: skip
        assert r.exit_code == 2 and "--max-sessions" in r.output, r.output
    ids = [t.id for t in read_tasks(he_file)]
    args = ["--tasks", str(he_file), "--no-auth", "--workers", "1", "--max-sessions", "2"]
    with serve_process(args) as sp, httpx.Client(base_url=sp.url, timeout=60) as c:
        for i in range(2):
            r = c.post("/v1/sessions", json={"task_id": ids[i]})
            assert r.status_code == 200, r.text
        full = c.post("/v1/sessions", json={"task_id": ids[2]})
        assert full.status_code == 429 and full.json()["error"] == "too_many_sessions"
