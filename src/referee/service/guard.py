"""``BodyGuard``: request bodies are bounded before any handler (or JSON parser) sees them.

Pure ASGI middleware: a body over the limit (by its ``Content-Length``, or counted as it arrives)
is refused with 413, and JSON nested deeper than ``max_depth`` is refused (422) before Python's
recursive parser could run out of stack on it. The body it read is handed on to the application
unchanged.

The 413 comes after the rest of the body has been read and thrown away (up to ``drain_bytes``
more, within ``drain_s``): a server that answers and closes while the client is still sending
leaves unread bytes in its socket, and the kernel then resets the connection, which can destroy
the 413 before the client reads it (a client that sends ``Connection: close``, or any client
when the reset wins the race on a busy machine). A body too large to drain, or one that trickles
in past ``drain_s``, is answered at once with ``Connection: close``; so is a client that waits
for ``100 Continue`` (it has not sent the body and, refused, never will).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["BodyGuard", "json_depth"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


#: Every byte but the brackets, deleted by ``bytes.translate``.
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(data: bytes) -> int:
    """The deepest nesting of ``[`` and ``{`` in JSON text, brackets in strings not counted.

    Strings are skipped with ``bytes.find`` (a quote closes one when an even run of
    backslashes stands before it) and the text between them is reduced to its brackets by
    ``bytes.translate``: a request's completions are most of its bytes, and a Python loop over
    every byte cost more than the rest of the guard.

    >>> json_depth(b'{"a": [1, {"b": "[[["}]}')
    3
    """
    depth = deepest = 0
    pos, end = 0, len(data)
    while pos < end:
        quote = data.find(b'"', pos)
        outside = data[pos:] if quote < 0 else data[pos:quote]
        for byte in outside.translate(None, _NOT_BRACKETS):
            if byte in (0x5B, 0x7B):  # [ {
                depth += 1
                deepest = max(deepest, depth)
            else:
                depth -= 1
        if quote < 0:
            break
        start = pos = quote + 1  # inside a string: find its closing quote
        while True:
            close = data.find(b'"', pos)
            if close < 0:  # unterminated: the rest is string
                return deepest
            before = close  # the run of backslashes before the quote (each one looked at once)
            while before > start and data[before - 1] == 0x5C:
                before -= 1
            pos = close + 1
            if (close - before) % 2 == 0:
                break
    return deepest


#: Bytes past the limit read and thrown away before a 413 (at least; see ``BodyGuard``).
DRAIN_BYTES = 64 * 1024 * 1024
#: Seconds the rest of an oversized body may take to arrive before the 413 goes without it.
DRAIN_S = 30.0


async def _refuse(
    send: Send, status: int, error: str, message: str, *, close: bool = False
) -> None:
    body = json.dumps({"error": error, "message": message}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _drain(receive: Receive, limit: int) -> bool:
    """Read and discard the rest of a request body, at most ``limit`` bytes; True when all of it
    was read (or the client left), False when it is larger."""
    read = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return True
        read += len(message.get("body", b""))
        if read > limit:
            return False
        if not message.get("more_body", False):
            return True


class BodyGuard:
    """Bounds request bodies (see the module docstring).

    ``drain_bytes`` (default: the larger of ``max_bytes`` and :data:`DRAIN_BYTES`) is how much
    of an oversized body is read past the limit so that its 413 arrives whole; ``drain_s``
    bounds the time that may take.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_bytes: int,
        max_depth: int,
        drain_bytes: int | None = None,
        drain_s: float = DRAIN_S,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.max_depth = max_depth
        self.drain_bytes = drain_bytes if drain_bytes is not None else max(max_bytes, DRAIN_BYTES)
        self.drain_s = drain_s

    async def _too_large(self, receive: Receive, send: Send, message: str, left: int) -> None:
        """413, after the rest of the body (``left`` bytes, -1 if unknown) is read and dropped."""
        drained = False
        if left <= self.drain_bytes:
            try:
                async with asyncio.timeout(self.drain_s):
                    drained = await _drain(receive, self.drain_bytes)
            except TimeoutError:
                drained = False
        await _refuse(send, 413, "body_too_large", message, close=not drained)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        too_big = (
            f"the request body is over the server's limit of {self.max_bytes} bytes "
            "(--max-body-mb); send smaller batches"
        )
        headers = dict(scope.get("headers", []))
        if b"content-length" in headers:
            try:
                declared = int(headers[b"content-length"])
            except ValueError:
                await _refuse(send, 400, "bad_request", "Content-Length is not a number")
                return
            if declared > self.max_bytes:
                if headers.get(b"expect", b"").lower() == b"100-continue":
                    # Refused before "100 Continue": the body was never sent.
                    await _refuse(send, 413, "body_too_large", too_big, close=True)
                else:
                    await self._too_large(receive, send, too_big, declared)
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
                if message.get("more_body", False):
                    await self._too_large(receive, send, too_big, -1)
                else:
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
