"""``BodyGuard``: request bodies are bounded before any handler (or JSON parser) sees them.

Pure ASGI middleware: a ``Content-Length`` over the limit is refused at once (413), a body sent
without one is counted as it arrives and refused the moment it passes the limit, and JSON
nested deeper than ``max_depth`` is refused (422) before Python's recursive parser could run out
of stack on it. The body it read is handed on to the application unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["BodyGuard", "json_depth"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def json_depth(data: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON text, brackets in strings not counted.

    >>> json_depth(b'{"a": [1, {"b": "[[["}]}')
    3
    """
    depth = deepest = 0
    in_string = escaped = False
    for byte in data:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:  # quote
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):  # [ {
            depth += 1
            deepest = max(deepest, depth)
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return deepest


async def _refuse(send: Send, status: int, error: str, message: str) -> None:
    body = json.dumps({"error": error, "message": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyGuard:
    def __init__(self, app: ASGIApp, *, max_bytes: int, max_depth: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = (
            f"the request body is over the server's limit of {self.max_bytes} bytes "
            "(--max-body-mb); send smaller batches"
        )
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    declared = int(value)
                except ValueError:
                    await _refuse(send, 400, "bad_request", "Content-Length is not a number")
                    return
                if declared > self.max_bytes:
                    await _refuse(send, 413, "body_too_large", too_big)
                    return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await _refuse(send, 413, "body_too_large", too_big)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if body and json_depth(body) > self.max_depth:
            await _refuse(
                send,
                422,
                "invalid_body",
                f"the JSON body is nested more than {self.max_depth} levels deep; flatten it",
            )
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: a disconnect, when the client leaves

        await self.app(scope, replay, send)
