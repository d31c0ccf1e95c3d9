"""Running the server: in the foreground (``referee serve``) or in a background thread (tests,
notebooks), on a socket bound before anything is announced.

SIGTERM (and Ctrl-C) drain: from that moment new work gets 503 and ``/health`` says
``draining``, the work in flight finishes (up to ``--drain-timeout``), then the server exits.

>>> with running(Service.start(config)) as url:                           # doctest: +SKIP
...     httpx.get(url + "/health").json()["status"]
'ok'
"""

from __future__ import annotations

import gc
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from referee.errors import ConfigError
from referee.service.state import Service

__all__ = ["DrainingServer", "bind", "running", "serve"]

log = logging.getLogger("referee.service")


#: Connections the kernel queues before the server accepts them (uvicorn's default).
BACKLOG = 2048


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; a busy port is a :class:`ConfigError`.

    It listens from here on, so a client that connects as soon as the server announces its
    address waits in the backlog until the server accepts, instead of being refused."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # The protocol named, not left 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    # connections accepted from a socket whose proto is IPPROTO_TCP. With it on, a response
    # written in two parts (headers, body) waited for the client's delayed ACK: 40 ms added to
    # every request on loopback.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError as e:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port} ({e.strerror}); choose another --port, or stop "
            "the program that holds it"
        ) from e
    return sock


def _uvicorn_server(service: Service) -> Any:
    import uvicorn

    from referee.service.app import create_app

    config = uvicorn.Config(
        create_app(service),
        log_level="warning",
        # Its lines are below the warning level shown: skip building one per request.
        access_log=False,
        # Keep-alive connections of trainers' pooled clients stay open between batches.
        timeout_keep_alive=30,
        # A WebSocket message (OpenEnv's /openenv/ws) is bounded like a request body; a larger
        # one closes the connection with 1009 (message too big), and its session is freed.
        ws_max_size=service.config.max_body_bytes,
    )
    return DrainingServer(config, service)


try:
    import uvicorn as _uv

    _ServerBase: Any = _uv.Server
except ImportError:  # pragma: no cover - uvicorn is a dependency
    _ServerBase = object


class DrainingServer(_ServerBase):  # type: ignore[misc]
    """uvicorn's server, with SIGTERM/SIGINT starting a drain instead of closing at once."""

    def __init__(self, config: Any, service: Service) -> None:
        super().__init__(config)
        self.service = service
        self._draining = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self._draining:  # a second signal: stop now
            super().handle_exit(sig, frame)
            return
        self._draining = True
        log.warning("referee serve: draining (new work gets 503); finishing work in flight")
        threading.Thread(target=self._drain, name="referee-drain", daemon=True).start()

    def _drain(self) -> None:
        timeout = self.service.config.drain_timeout_s
        done = self.service.admission.drain(timeout)
        if not done:
            log.warning("referee serve: work still running after %.0f s; exiting anyway", timeout)
        self.should_exit = True


def serve(
    service: Service,
    *,
    on_listening: Callable[[str], None] | None = None,
) -> None:  # pragma: no cover - blocks; tests run it as `referee serve` in a subprocess
    """Serve until SIGTERM/Ctrl-C (then drain); closes ``service`` at the end."""
    cfg = service.config
    sock = bind(cfg.host, cfg.port)
    server = _uvicorn_server(service)
    freeze_startup_objects()
    if on_listening is not None:
        on_listening(f"http://{_url_host(cfg.host)}:{sock.getsockname()[1]}")
    try:
        server.run(sockets=[sock])
    finally:
        service.close()


def freeze_startup_objects() -> None:
    """Leave what the server holds from its start (modules, tasks, the app: ~90,000 objects)
    out of every later garbage collection (:func:`gc.freeze`): they live as long as the
    process, and each full collection walked all of them again; small requests set one off
    every few hundred (~70 ms each, ~0.2 ms per request). Called once, in the process that
    serves (not by :func:`running`, whose caller's objects are its own business)."""
    gc.collect()  # what is already garbage is freed, not kept for good
    gc.freeze()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


@contextmanager
def running(service: Service, *, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``service`` from a background thread on a free port; yields its base URL and
    stops the server (and closes ``service``) at the end."""
    sock = bind(host, 0)
    server = _uvicorn_server(service)
    server.install_signal_handlers = lambda: None  # signals belong to the main thread
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the referee service did not start")
        time.sleep(0.01)
    try:
        yield f"http://{_url_host(host)}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
        service.close()
