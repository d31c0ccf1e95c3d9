"""The server's sockets: Nagle's algorithm off, so a small request costs no delayed ACK."""

from __future__ import annotations

import socket
import statistics
import time
from typing import Any

import httpx


def test_the_listening_socket_names_tcp_so_asyncio_sets_nodelay_on_each_connection() -> None:
    from referee.service.server import bind

    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_a_small_request_on_a_kept_alive_connection_takes_no_delayed_ack(server: Any) -> None:
    # With Nagle on, each response (headers and body written apart) waited for the client's
    # delayed ACK: >= 40 ms per request on Linux loopback. Without it, about 2 ms here.
    with server(no_auth=True) as url, httpx.Client(base_url=url) as c:
        c.get("/health")
        took = []
        for _ in range(20):
            t = time.perf_counter()
            assert c.get("/health").status_code == 200
            took.append(time.perf_counter() - t)
    assert statistics.median(took) < 0.030, took


def test_a_request_that_fails_unexpectedly_is_a_json_500_and_counted_as_one(
    he_file: Any, gold: list[dict[str, str]], monkeypatch: Any
) -> None:
    from referee.service import ServeConfig, Service, running

    service = Service.start(ServeConfig(tasks=(str(he_file),), no_auth=True, workers=1))

    async def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("a bug in the engine")

    monkeypatch.setattr(service.engine, "verify", broken)
    with running(service) as url, httpx.Client(base_url=url) as c:
        # Starlette's last-resort handler answered, then re-raised, and uvicorn closed the
        # connection under the answer: most tries read a connection reset, not the 500.
        for _ in range(5):
            r = c.post("/v1/verify", json={"samples": gold[:1]})
            assert r.status_code == 500 and r.json()["error"] == "internal_error"
            assert "Traceback" not in r.text
        metrics = c.get("/metrics").text
    assert 'referee_http_requests_total{route="/v1/verify",status="500"} 5.0' in metrics
    assert 'referee_http_request_seconds_count{route="/v1/verify"} 5.0' in metrics
