"""Every oversized request gets its 413 with the JSON body, never a connection reset, even with
CPU hogs running: the server reads (and drops) the rest of the body before it answers."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest

from referee.service import ServeConfig, Service, running
from referee.tasks.model import Task, write_tasks

LIMIT = 1024 * 1024  # --max-body-mb 1
BODY = b"x" * (LIMIT + 3 * 1024 * 1024)  # 3 MB over
HOG = "import time\nend = time.monotonic() + 120\nwhile time.monotonic() < end: pass\n"


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    path = tmp_path_factory.mktemp("guard") / "tasks.jsonl"
    write_tasks(path, [Task.create(name="t/one-v1", prompt="Do it.", kind="function")])
    config = ServeConfig(tasks=(str(path),), no_auth=True, workers=1, max_body_mb=1)
    with running(Service.start(config)) as base:
        yield base


@contextmanager
def cpu_hogs(n: int = 2) -> Iterator[None]:
    """``n`` busy-looping processes (each ends by itself after two minutes)."""
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(n)]
    try:
        yield
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def _chunks() -> Iterator[bytes]:
    for i in range(0, len(BODY), 64 * 1024):
        yield BODY[i : i + 64 * 1024]


def strict_post(url: str, *, chunked: bool) -> tuple[int, dict[str, str]]:
    """POST ``BODY`` with ``Connection: close`` over a raw socket, as a client that gives up on
    a failed send (urllib3's way) does: a reset while sending is an error here."""
    host, port = url.removeprefix("http://").split(":")
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {len(BODY)}"
    head = f"POST /v1/verify HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n{framing}\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=60) as s:
        s.sendall(head.encode())
        for chunk in _chunks():
            s.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk) if chunked else chunk)
        if chunked:
            s.sendall(b"0\r\n\r\n")
        reply = b""
        while data := s.recv(65536):
            reply += data
    status_line, _, rest = reply.partition(b"\r\n")
    return int(status_line.split()[1]), json.loads(rest.partition(b"\r\n\r\n")[2])


def test_fifty_oversized_requests_all_get_413_under_cpu_load(url: str) -> None:
    outcomes: list[str] = []
    with cpu_hogs(2):
        for i in range(50):
            chunked = i % 2 == 1
            try:
                if i % 4 < 2:  # httpx: pooled keep-alive, or Connection: close
                    headers = {"Connection": "close"} if i % 8 < 4 else {}
                    with httpx.Client(timeout=60, headers=headers) as c:
                        r = c.post(url + "/v1/verify", content=_chunks() if chunked else BODY)
                    status, body = r.status_code, r.json()
                else:
                    status, body = strict_post(url, chunked=chunked)
                outcomes.append(f"{status} {body.get('error')}")
            except (OSError, httpx.HTTPError) as e:
                outcomes.append(f"{type(e).__name__}: {e}")
    refused = outcomes.count("413 body_too_large")
    assert refused == 50, f"{refused} of 50 got 413; others: {set(outcomes)}"


def test_the_connection_stays_usable_after_a_413(url: str) -> None:
    with httpx.Client(base_url=url, timeout=60) as c:
        assert c.post("/v1/verify", content=BODY).status_code == 413
        assert c.get("/health").status_code == 200
