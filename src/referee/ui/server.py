"""Serving the dashboard: in the foreground (``referee ui``) or in a background thread.

The background form is for the browser tests and the screenshot script: it binds a free
loopback port itself, so there is no race between choosing a port and uvicorn taking it.

>>> with running(create_app("runs/r1")) as url:                         # doctest: +SKIP
...     httpx.get(url + "/api/runs").status_code
200
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from referee.errors import ConfigError
from referee.optional import require_extra

__all__ = ["running", "serve"]


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port} ({e.strerror}); choose another --port, or stop "
            "the program that holds it"
        ) from e
    return sock


def serve(
    run_dir: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8765,
    on_listening: Callable[[str], None] | None = None,
) -> None:  # pragma: no cover - blocks until interrupted; `running` shares its code path
    """Serve the dashboard of ``run_dir`` until interrupted (Ctrl-C).

    ``on_listening`` gets the dashboard's URL once the port is bound, never before: a busy
    port is a :class:`ConfigError` with nothing announced."""
    require_extra("ui", needed_for="the dashboard (referee ui)")
    import uvicorn

    from referee.ui.app import create_app

    app = create_app(run_dir)
    sock = _bind(host, port)
    if on_listening is not None:
        on_listening(f"http://{host}:{sock.getsockname()[1]}/")
    config = uvicorn.Config(app, log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


@contextmanager
def running(app: Any, *, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Serve ``app`` in a thread for the duration of the block; yields its base URL."""
    import uvicorn

    sock = _bind(host, port)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            sock.close()
            raise RuntimeError("the dashboard server did not start (see the log above)")
        time.sleep(0.02)
    try:
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
