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
