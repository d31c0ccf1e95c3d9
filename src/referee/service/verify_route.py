"""``POST /v1/verify``: the work of the route, and a direct path to it past the framework.

A trainer sends small batches (a handful of samples per request) at a high rate, so what the
server spends per request, beside the judging, matters: measured for 8-sample requests
(bench/RESULTS.md section 43), FastAPI's layers for one request (its middleware stack, route
matching over every route, dependency solving, reading the body, ``jsonable_encoder`` over the
answer and ``json.dumps``) cost the server's event loop about 1 ms of CPU, about as much as the
engine's own hand-offs of the 8 samples.

:class:`DirectVerify` answers the common case itself: ``POST /v1/verify`` with a JSON body that
is valid and a token that is known. It checks the same things in the same way (the token, the
content type, the body by :class:`~referee.service.schemas.VerifyBody` as FastAPI validates it)
and anything else (a bad token, a body not sent as JSON, a body that fails validation) goes on,
with the body, to the FastAPI route, which gives the usual 401, 415 or 422: every error keeps
one code path. Errors raised by the work (unknown task ids, admission, draining) reach the
metrics middleware around both, which answers them as the route's error handlers do.

>>> body = VerifyBody.model_validate({"samples": [{"task_id": "t", "completion": "x"}]})
>>> await verify_answer(service, body)          # doctest: +SKIP
b'{"verdicts":[...]}'
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from referee.service.guard import ASGIApp, Message, Receive, Scope, Send
from referee.service.schemas import VerifyBody
from referee.service.state import Service
from referee.verify.verdict import Verdict

__all__ = ["PATH", "DirectVerify", "verify_answer"]

PATH = "/v1/verify"
#: Verdicts to JSON in one call into pydantic's serializer (no Python dicts on the way).
_VERDICTS = TypeAdapter(list[Verdict])


async def verify_answer(service: Service, body: VerifyBody) -> bytes:
    """The JSON answer to a valid verify body: ``{"verdicts": [...]}`` in the samples' order.

    Raises what the route answers as errors: unknown task ids (before anything is admitted),
    admission's busy, too much work and draining."""
    engine = service.engine
    samples = [(x.task_id, x.completion) for x in body.samples]
    pairs = engine.resolve(samples)  # unknown ids are a 422 before anything is admitted
    if any(x.language is not None for x in body.samples):
        # A program sample's language travels with its completion, as its block's tag.
        samples = [
            (x.task_id, engine.with_language(x.task_id, x.completion, x.language))
            for x in body.samples
        ]
        tasks = [task for task, _ in pairs]
        pairs = [(task, c) for task, (_, c) in zip(tasks, samples, strict=True)]
    with service.admission.admit(len(samples)):
        verdicts = await engine.verify(samples, deadline_s=body.deadline_s, resolved=pairs)
    service.metrics.count_verdicts(verdicts)
    deadlined = sum(1 for v in verdicts if v.infra_error and "deadline" in v.infra_error)
    if deadlined:
        service.metrics.deadlines.labels(PATH).inc(deadlined)
    return b'{"verdicts":' + _VERDICTS.dump_json(verdicts) + b"}"


def _is_plain_json(content_type: bytes | None) -> bool:
    """``application/json`` (any case, parameters allowed): the type nearly every client sends.
    Other JSON types (``application/x+json``) and anything unusual go the FastAPI way."""
    if content_type is None:
        return False
    return content_type.split(b";", 1)[0].strip().lower() == b"application/json"


class DirectVerify:
    """Answers a valid, authorized ``POST /v1/verify`` without FastAPI's layers; hands
    every other request (and every verify it does not answer) to ``app``, body included.

    ``route`` is the FastAPI route of the same path: put in the scope, so that the metrics
    count a direct answer under the route's name, as they count the others."""

    def __init__(self, app: ASGIApp, *, service: Service, route: Any) -> None:
        self.app = app
        self.service = service
        self.route = route

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] != PATH:
            await self.app(scope, receive, send)
            return
        content_type = authorization = None
        for name, value in scope["headers"]:
            if name == b"content-type":
                content_type = value
            elif name == b"authorization":
                authorization = value.decode("latin-1")  # as Starlette decodes headers
        chunks: list[bytes] = []
        while True:  # the body guard before this has bounded it (and replays it whole)
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        raw = b"".join(chunks)
        body = None
        if _is_plain_json(content_type) and self.service.caller(authorization) is not None:
            body = _valid(raw)
        if body is None:  # the FastAPI route gives the answer (401, 415, 422, 400)
            await self.app(scope, _replay(raw, receive), send)
            return
        scope["route"] = self.route
        answer = await verify_answer(self.service, body)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [
                    (b"content-length", str(len(answer)).encode()),
                    (b"content-type", b"application/json"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": answer})


def _valid(raw: bytes) -> VerifyBody | None:
    """The body as FastAPI reads it (``json.loads``, then the model's validation), or None
    where FastAPI would refuse it."""
    try:
        return VerifyBody.model_validate(json.loads(raw))
    except Exception:  # any refusal is the FastAPI route's to word
        return None


def _replay(raw: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return await receive()  # after the body: a disconnect, when the client leaves

    return replay
