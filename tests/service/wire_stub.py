"""A recording stub server on 127.0.0.1 for the wire-contract probes.

It answers every HTTP path and the ``/ws`` WebSocket with canned replies and keeps what each
client sent: method, path, query, the headers that matter, and the body (JSON when it parses).
Tests queue replies per path (``stub.reply(path, status, body)``) to see how a client reads a
status code or a field; a path with nothing queued gets its default from ``DEFAULTS``.

It is a stand-in for the trainers' servers, not for referee's: the shapes it answers with are the
minimal ones each client accepts (docs/wire-protocols.md), so that a probe shows what the client
sends and how it reads what comes back.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import defaultdict, deque
from typing import Any

import uvicorn
from fastapi import FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, Response

#: The headers a recorded request keeps (lower-case); the rest (user agents, lengths) vary.
KEPT_HEADERS = ("content-type", "accept", "authorization", "cookie", "x-api-key")

SANDBOX_OK: dict[str, Any] = {
    "status": "Success",
    "message": "",
    "compile_result": None,
    "run_result": {
        "status": "Finished",
        "execution_time": 0.01,
        "return_code": 0,
        "stdout": "3\n",
        "stderr": "",
    },
    "executor_pod_name": None,
    "files": {},
}

DEFAULTS: dict[str, tuple[int, Any]] = {
    "/run_code": (200, SANDBOX_OK),
    "/reward": (200, {"rewards": [1.0], "scores": [1.0], "extra_logs": {"passed": [1.0]}}),
}


class WireStub:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.ws_frames: list[dict[str, Any]] = []  # {"dir": "in"|"out", "frame": ...}
        self.ws_headers: list[dict[str, str]] = []
        self._replies: dict[str, deque[tuple[int, Any]]] = defaultdict(deque)
        self._lock = threading.Lock()
        self.app = self._make_app()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self._sock = sock
        self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            self.app, log_level="warning", lifespan="off", ws="websockets-sansio"
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )

    # ---- control --------------------------------------------------------------------------

    def reply(self, path: str, status: int, body: Any) -> None:
        """Queue one reply for ``path`` (used once, in order, before the default)."""
        with self._lock:
            self._replies[path].append((status, body))

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()
            self.ws_frames.clear()
            self.ws_headers.clear()
            self._replies.clear()

    def __enter__(self) -> WireStub:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("wire stub did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()

    # ---- the app --------------------------------------------------------------------------

    def _next_reply(self, path: str) -> tuple[int, Any]:
        with self._lock:
            queued = self._replies.get(path)
            if queued:
                return queued.popleft()
        return DEFAULTS.get(path, (200, {"ok": True}))

    def _make_app(self) -> FastAPI:
        app = FastAPI()
        stub = self

        @app.websocket("/ws")
        async def ws(websocket: WebSocket) -> None:
            with stub._lock:
                stub.ws_headers.append(
                    {k: v for k, v in websocket.headers.items() if k in KEPT_HEADERS}
                )
            await websocket.accept()
            steps = 0
            try:
                while True:
                    raw = await websocket.receive_text()
                    frame = json.loads(raw)
                    with stub._lock:
                        stub.ws_frames.append({"dir": "in", "frame": frame})
                    kind = frame.get("type")
                    out: dict[str, Any]
                    if kind == "reset":
                        steps = 0
                        out = {
                            "type": "observation",
                            "data": {
                                "observation": {"prompt": "add 1 and 2", "echo": frame["data"]},
                                "reward": None,
                                "done": False,
                            },
                        }
                    elif kind == "step":
                        steps += 1
                        out = {
                            "type": "observation",
                            "data": {
                                "observation": {"feedback": "ok", "echo": frame["data"]},
                                "reward": 1.0,
                                "done": True,
                                "metadata": {"task_id": "t1"},
                            },
                        }
                    elif kind == "state":
                        out = {"type": "state", "data": {"episode_id": "e1", "step_count": steps}}
                    elif kind == "close":
                        break
                    else:
                        out = {
                            "type": "error",
                            "data": {
                                "message": f"Unknown message type: {kind}",
                                "code": "UNKNOWN_TYPE",
                            },
                        }
                    with stub._lock:
                        stub.ws_frames.append({"dir": "out", "frame": out})
                    await websocket.send_text(json.dumps(out))
            except WebSocketDisconnect:
                pass

        @app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "DELETE"])
        async def anything(request: Request, path: str) -> Response:
            raw = await request.body()
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            record = {
                "method": request.method,
                "path": "/" + path,
                "query": dict(request.query_params),
                "headers": {k: v for k, v in request.headers.items() if k in KEPT_HEADERS},
                "body": body,
            }
            with stub._lock:
                stub.requests.append(record)
            status, reply = stub._next_reply("/" + path)
            return JSONResponse(reply, status_code=status)

        return app
