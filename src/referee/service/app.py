"""``create_app``: referee's native API (and the trainer protocols turned on) as one FastAPI app.

Routes (JSON; every error ``{"error", "message", ...}``, see :mod:`referee.service.http_errors`):

``GET /health``                            liveness, no token; 503 while draining
``GET /metrics``                           Prometheus text
``GET /v1``                                this list, and the protocols turned on
``GET /v1/tasks``                          the ids, kinds and content hashes of the tasks served
``POST /v1/tools``                         ``{"env", "options"}`` -> the tools it offers
``POST /v1/verify``                        ``{"samples": [{"task_id", "completion"}]}`` ->
                                           ``{"verdicts": [...]}`` in the same order
``POST /v1/exec``                          one program in the sandbox -> ``ExecResult`` fields
``POST /v1/sessions``                      ``{"env", "task_id", "options"?}`` -> ``{"session_id",
                                           "messages", "tools"}``
``POST /v1/sessions/{id}/step``            ``{"message"}`` -> ``{"messages", "reward", "done"}``
``POST /v1/sessions/{id}/snapshot``        -> ``{"snapshot_id"}``
``POST /v1/sessions/{id}/restore``         ``{"snapshot_id"}``
``POST /v1/sessions/{id}/verify``          the episode's verdict
``DELETE /v1/sessions/{id}``               close it and free its sandbox

Every request but ``/health`` needs ``Authorization: Bearer <token>`` unless the server runs
with ``--no-auth``. Sandbox work runs in the engine's worker threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, Depends, FastAPI, Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute

from referee.envs.registry import env_names
from referee.service.engine import ExecRequest
from referee.service.episodes import bounded, close_episode, make_session_env, open_episode
from referee.service.guard import ASGIApp, BodyGuard, Message, Receive, Scope, Send
from referee.service.http_errors import ApiError, as_api_error, error_body, install_error_handlers
from referee.service.schemas import (
    EnvBody,
    ExecBody,
    OpenSessionBody,
    RestoreBody,
    StepBody,
    VerifyBody,
)
from referee.service.sessions import Session
from referee.service.state import Service
from referee.service.verify_route import PATH as VERIFY_PATH
from referee.service.verify_route import DirectVerify, verify_answer

__all__ = ["authorized", "create_app", "service_of"]

NATIVE_ROUTES = [
    "GET /health",
    "GET /metrics",
    "GET /v1",
    "GET /v1/tasks",
    "POST /v1/tools",
    "POST /v1/verify",
    "POST /v1/exec",
    "POST /v1/sessions",
    "POST /v1/sessions/{id}/step",
    "POST /v1/sessions/{id}/snapshot",
    "POST /v1/sessions/{id}/restore",
    "POST /v1/sessions/{id}/verify",
    "DELETE /v1/sessions/{id}",
]


def service_of(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


async def authorized(request: Request) -> str:
    """The caller's name (a dependency of every route that needs a token); 401 otherwise.

    A coroutine, so FastAPI calls it on the event loop: a plain function dependency is run in
    a worker thread of its own pool, a thread hop on every request (CPU per small request,
    and up to 40 more threads, each with a malloc arena of its own)."""
    name = service_of(request).caller(request.headers.get("authorization"))
    if name is None:
        raise ApiError(
            401,
            "unauthorized",
            "missing or unknown token; send Authorization: Bearer <token> with a token from "
            "the server's --tokens file",
            {"WWW-Authenticate": "Bearer"},
        )
    return name


def create_app(service: Service) -> FastAPI:
    """The server's application; the caller owns ``service`` (and closes it)."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        reaper = asyncio.create_task(service.reap_forever())
        try:
            yield
        finally:
            reaper.cancel()
            await service.close_all_sessions()

    app = FastAPI(
        title="referee", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan
    )
    app.state.service = service
    install_error_handlers(app)
    native = _native_router()
    app.include_router(native)
    from referee.service.compat import include_compat_routes

    include_compat_routes(app, service.config.compat)
    # Middleware added later runs outside the earlier. Innermost of referee's: the common
    # verify is answered inside the metrics and the body guard, as every route is.
    app.add_middleware(DirectVerify, service=service, route=_route(native, VERIFY_PATH))
    _count_requests(app, service)
    # Outermost: the body guard sees the raw request before routing or parsing.
    app.add_middleware(
        BodyGuard,
        max_bytes=service.config.max_body_bytes,
        max_depth=service.config.max_json_depth,
    )
    return app


def _route(router: APIRouter, path: str) -> APIRoute:
    for route in router.routes:
        if isinstance(route, APIRoute) and route.path == path:
            return route
    raise LookupError(f"no route {path}")  # pragma: no cover - the native router has it


def _count_requests(app: FastAPI, service: Service) -> None:
    app.add_middleware(CountRequests, service=service)


class CountRequests:
    """Requests by route and status, their latency, and the queue depth, for the metrics; and
    the JSON 500 of a request that failed unexpectedly.

    Pure ASGI: Starlette's ``@app.middleware("http")`` runs each request through extra tasks and
    streams (about 0.3 ms of the server's CPU per request here). An unexpected exception is
    answered here (logged, JSON 500) rather than by Starlette's outermost handler, which answers
    and then re-raises: uvicorn then closed the connection under the answer, and the client
    often read a connection reset instead of the 500. The latency runs until the response is
    sent."""

    def __init__(self, app: ASGIApp, service: Service) -> None:
        self.app = app
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def send_and_note(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        except Exception as exc:
            if status:  # the answer has begun: nothing else can be said on this connection
                status = 500
                raise
            e = as_api_error(exc)  # an unexpected one is logged there, with its traceback
            reply = JSONResponse(
                error_body(e.error, e.message, **e.fields), status_code=e.status, headers=e.headers
            )
            await reply(scope, receive, send_and_note)
        finally:
            metrics = self.service.metrics
            name = getattr(scope.get("route"), "path", "unmatched")
            metrics.requests.labels(name, str(status or 500)).inc()
            metrics.latency.labels(name).observe(time.perf_counter() - started)
            metrics.queue_depth.set(self.service.admission.in_use)


def _native_router() -> APIRouter:
    r = APIRouter()

    @r.get("/health")
    async def health(request: Request) -> JSONResponse:
        s = service_of(request)
        body = {
            "status": "draining" if s.admission.draining else "ok",
            "tasks": len(s.engine.tasks),
            "workers": s.engine.workers,
            "sessions": len(s.sessions),
            "queue": {"in_use": s.admission.in_use, "limit": s.admission.limit},
            "verify_on": "ray" if s.engine.remote is not None else "local",
        }
        if s.engine.tasks_error is not None:  # a changed --tasks file that could not be read
            body["tasks_error"] = s.engine.tasks_error
        return JSONResponse(body, status_code=503 if s.admission.draining else 200)

    @r.get("/metrics", dependencies=[Depends(authorized)])
    async def metrics(request: Request) -> Response:
        s = service_of(request)
        s.metrics.queue_depth.set(s.admission.in_use)
        s.metrics.sessions_open.set(len(s.sessions))
        return Response(s.metrics.render(), media_type="text/plain; version=0.0.4")

    @r.get("/v1", dependencies=[Depends(authorized)])
    async def index(request: Request) -> dict[str, Any]:
        from referee.service.compat import compat_routes

        s = service_of(request)
        return {
            "routes": NATIVE_ROUTES,
            "compat": {name: compat_routes(name) for name in s.config.compat},
            "environments": env_names(),
        }

    @r.get("/v1/tasks", dependencies=[Depends(authorized)])
    async def tasks(request: Request) -> dict[str, Any]:
        s = service_of(request)
        return {
            "tasks": [
                {"id": t.id, "kind": t.kind.value, "content_hash": t.content_hash}
                for t in s.engine.tasks.values()
            ]
        }

    @r.post("/v1/tools", dependencies=[Depends(authorized)])
    async def tools(body: EnvBody, request: Request) -> dict[str, Any]:
        """The tools an environment made with these options offers, before any episode (a
        trainer builds its prompts and tool parser from them)."""
        env = make_session_env(service_of(request), body)
        try:
            return {"env": body.env, "tools": env.tools()}
        finally:
            await env.close()

    @r.post(VERIFY_PATH, dependencies=[Depends(authorized)])
    async def verify(body: VerifyBody, request: Request) -> Response:
        # Most verify requests are answered by DirectVerify before they get here; the same
        # work, and here every request it hands on (refused, or not plain JSON). A check added
        # to this route (a dependency, a header) must be added to DirectVerify too.
        answer = await verify_answer(service_of(request), body)
        return Response(answer, media_type="application/json")

    @r.post("/v1/exec", dependencies=[Depends(authorized)])
    async def exec_(body: ExecBody, request: Request) -> dict[str, Any]:
        s = service_of(request)
        req = ExecRequest(
            code=body.code,
            language=body.language,
            stdin=body.stdin.encode() if body.stdin is not None else None,
            files={k: v.encode() for k, v in body.files.items()},
            timeout_s=body.timeout_s,
            memory_mb=body.memory_mb,
        )
        _check_files(req.files)
        with s.admission.admit(1):
            result = await s.engine.exec(req)
        return result.model_dump(mode="json")

    @r.post("/v1/sessions")
    async def open_session(
        body: OpenSessionBody, request: Request, caller: str = Depends(authorized)
    ) -> dict[str, Any]:
        s = service_of(request)
        task = s.engine.resolve([(body.task_id, "")])[0][0]
        session, messages = await open_episode(s, caller, body, task)
        return {"session_id": session.id, "messages": messages, "tools": session.env.tools()}

    @r.post("/v1/sessions/{session_id}/step")
    async def step(
        session_id: str, body: StepBody, request: Request, caller: str = Depends(authorized)
    ) -> dict[str, Any]:
        s = service_of(request)
        session = s.sessions.get(session_id, caller)
        limit = s.engine.bound(body.deadline_s)
        async with session.lock:
            if session.env.done:
                raise ApiError(
                    409,
                    "episode_done",
                    "this episode has ended; POST .../verify for its verdict, restore a "
                    "snapshot, or open a new session",
                )
            with s.admission.admit(1):
                result = await bounded(session.env.step(body.message), limit)
                verdict = await bounded(session.env.verify(), limit) if result.done else None
            session.touch()
        if verdict is not None:
            s.metrics.count_verdicts([verdict])
        return {
            "messages": result.observations,
            "reward": verdict.reward if verdict is not None else None,
            "done": result.done,
            "reason": result.reason,
            "metrics": result.metrics,
            "verdict": verdict.model_dump(mode="json") if verdict is not None else None,
        }

    @r.post("/v1/sessions/{session_id}/snapshot")
    async def snapshot(
        session_id: str, request: Request, caller: str = Depends(authorized)
    ) -> dict[str, Any]:
        s = service_of(request)
        session = s.sessions.get(session_id, caller)
        async with session.lock:
            with s.admission.admit(1):
                snap = await bounded(session.env.snapshot(), s.engine.deadline_cap_s)
            return {"snapshot_id": session.add_snapshot(snap)}

    @r.post("/v1/sessions/{session_id}/restore")
    async def restore(
        session_id: str, body: RestoreBody, request: Request, caller: str = Depends(authorized)
    ) -> dict[str, Any]:
        s = service_of(request)
        session = s.sessions.get(session_id, caller)
        snap = session.snapshot(body.snapshot_id)
        async with session.lock:
            with s.admission.admit(1):
                await bounded(session.env.restore(snap), s.engine.deadline_cap_s)
            return {"restored": body.snapshot_id, "done": session.env.done}

    @r.post("/v1/sessions/{session_id}/verify")
    async def verify_session(
        session_id: str, request: Request, caller: str = Depends(authorized)
    ) -> dict[str, Any]:
        s = service_of(request)
        session = s.sessions.get(session_id, caller)
        async with session.lock:
            with s.admission.admit(1):
                verdict = await bounded(session.env.verify(), s.engine.deadline_cap_s)
        s.metrics.count_verdicts([verdict])
        out: dict[str, Any] = verdict.model_dump(mode="json")
        return out

    @r.delete("/v1/sessions/{session_id}")
    async def close(
        session_id: str, request: Request, caller: str = Depends(authorized)
    ) -> dict[str, Any]:
        s = service_of(request)
        session: Session = s.sessions.get(session_id, caller)
        await close_episode(s, session)
        return {"closed": session.id}

    return r


def _check_files(files: Mapping[str, bytes]) -> None:
    from referee.sandbox.paths import safe_relpath

    for name in files:  # an unsafe name is a 422 before the sandbox is involved
        safe_relpath(name)
