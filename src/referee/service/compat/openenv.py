"""OpenEnv's environment protocol for referee's code environment (``--compat openenv``).

Served under ``/openenv``, so it never meets referee's own routes (``/health`` above all):
point OpenEnv's client at the prefix and it finds ``/openenv/ws`` by itself::

    from openenv.core.generic_client import GenericEnvClient

    with GenericEnvClient(base_url="http://H:P/openenv").sync() as env:
        first = env.reset(task_id="HumanEval/0")               # or reset(seed=3)
        result = env.step({"tool_calls": [...]})                # or {"content": "```python..."}
        result.reward, result.done

(The client turns ``base_url`` into ``ws://H:P/openenv/ws`` by adding ``/ws``; it calls no other
route. ``openenv validate``'s and the Docker provider's health checks read
``{base_url}/health``, which is ``/openenv/health`` here.) **None of these routes takes a
token** (OpenEnv's client sends none unless given ``headers=``): serve on a trusted network
only; the server says so at start-up.

Routes
------
``WS /openenv/ws``        one connection is one environment: ``reset``, ``step``, ``state``,
                          ``close`` frames (the episode's session is freed when the connection
                          closes, drops, or stays idle for ``--session-ttl``)
``POST /openenv/reset``   stateless: a fresh environment's first observation
``POST /openenv/step``    stateless: a fresh environment on the named task, reset, then one step
``GET /openenv/state``    a fresh environment's state (``{"episode_id": null, "step_count": 0}``)
``GET /openenv/schema``   the JSON schemas of the action, observation and state
``GET /openenv/metadata`` name, description, version
``GET /openenv/health``   ``{"status": "healthy"}`` (503 ``unhealthy`` while draining)

The task
--------
``reset`` takes ``task_id`` (a task the server holds), or ``seed``: the task at ``seed % n`` of
the server's task ids in sorted order (the same task for the same seed and task files); with
neither, a task at random. ``episode_id`` is kept and shown in observations and the state (a
random one by default). ``env`` (default ``"code"``) and ``options`` (``single_turn``,
``tools``, ``max_turns``) choose the environment as the native ``POST /v1/sessions`` does. Other
keys are refused (a misspelt ``task_id`` must not mean a random task).

The action
----------
One assistant turn in the OpenAI chat format: ``{"message": {"role": "assistant", "content":
..., "tool_calls": [...]}}``, or the same fields at the top level (``{"content": "..."}``,
``{"tool_calls": [{"id", "type": "function", "function": {"name", "arguments"}}]}``). The
observation holds the messages to append after it (tool results, feedback), the tools (at
reset), the turn and, when the episode is done, the verdict; the reward is the verdict's reward
when ``done``, else null. A verdict that is an infrastructure error is not sent as a reward: the
step answers an ``EXECUTION_ERROR`` frame (HTTP: 503), and the client raises.

Errors are OpenEnv's error frames, ``{"type": "error", "data": {"message", "code"}}`` with its
codes (``INVALID_JSON``, ``UNKNOWN_TYPE``, ``VALIDATION_ERROR``, ``EXECUTION_ERROR``,
``CAPACITY_REACHED``, ``SESSION_ERROR``); the connection stays open except at capacity, while
draining and when idle. A message over ``--max-body-mb`` closes the connection (1009).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from typing import Any

from fastapi import APIRouter, Body, Request, WebSocket
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from starlette.websockets import WebSocketDisconnect

from referee.envs.base import ChatMessage, Environment, StepResult
from referee.errors import ConfigError, TaskError
from referee.service.admission import Busy, Draining
from referee.service.engine import UnknownTasks
from referee.service.episodes import bounded, close_episode, make_session_env, open_episode
from referee.service.guard import json_depth
from referee.service.http_errors import ApiError, as_api_error
from referee.service.schemas import MAX_ID, EnvBody, SessionOptions, StepBody
from referee.service.sessions import Session, SessionLimit
from referee.service.state import Service
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["PREFIX", "ROUTES", "CodeAction", "router"]

PREFIX = "/openenv"
#: The owner of every session this protocol opens (one per connection).
OWNER = "openenv"

ROUTES = [
    f"WS {PREFIX}/ws",
    f"POST {PREFIX}/reset",
    f"POST {PREFIX}/step",
    f"GET {PREFIX}/state",
    f"GET {PREFIX}/schema",
    f"GET {PREFIX}/metadata",
    f"GET {PREFIX}/health",
]


# ---- the wire models -----------------------------------------------------------------------


class ResetData(BaseModel):
    """What ``reset`` takes (the WS frame's ``data``, the HTTP body)."""

    model_config = ConfigDict(extra="forbid")
    seed: int | None = Field(default=None, ge=0)
    episode_id: str | None = Field(default=None, max_length=255)
    #: The task; without it the seed chooses one (see the module docstring).
    task_id: str | None = Field(default=None, min_length=1, max_length=MAX_ID)
    env: str = Field(default="code", min_length=1, max_length=64)
    options: SessionOptions | None = None


class CodeAction(BaseModel):
    """One assistant turn: ``message``, or its ``content`` and ``tool_calls`` at the top level."""

    model_config = ConfigDict(extra="forbid")
    message: dict[str, Any] | None = Field(
        default=None, description='the assistant message: {"role": "assistant", ...}'
    )
    content: str | list[dict[str, Any]] | None = Field(
        default=None, description="the message's text (an answer, or thoughts with tool calls)"
    )
    tool_calls: list[dict[str, Any]] | None = Field(
        default=None,
        description='[{"id", "type": "function", "function": {"name", "arguments": "{...}"}}]',
    )

    @model_validator(mode="after")
    def _one_message(self) -> CodeAction:
        inline = self.content is not None or self.tool_calls is not None
        if self.message is not None and inline:
            raise ValueError("give message, or content/tool_calls at the top level, not both")
        if self.message is None and not inline:
            raise ValueError(
                'an action is one assistant turn: {"content": ...}, {"tool_calls": [...]} or '
                '{"message": {"role": "assistant", ...}}'
            )
        try:  # the native step route's checks of an assistant message
            StepBody.model_validate({"message": self.to_message()})
        except ValidationError as e:
            raise ValueError("; ".join(str(err.get("msg", "")) for err in e.errors())) from None
        return self

    def to_message(self) -> ChatMessage:
        if self.message is not None:
            return {"role": "assistant", **self.message}
        message: ChatMessage = {"role": "assistant", "content": self.content}
        if self.tool_calls is not None:
            message["tool_calls"] = self.tool_calls
        return message


class CodeObservation(BaseModel):
    """What ``observation`` holds (``reward`` and ``done`` travel beside it)."""

    messages: list[dict[str, Any]] = Field(
        description="to append to the conversation: the first messages at reset; after a step, "
        "the tool results and feedback (after the assistant's own message)"
    )
    tools: list[dict[str, Any]] = Field(
        description="the tools, in the OpenAI chat format (at reset; [] in single-turn mode)"
    )
    task_id: str
    episode_id: str
    turn: int = Field(description="assistant turns so far")
    reason: str = Field(description="why the episode ended, when done: submitted, answered, ...")
    verdict: dict[str, Any] | None = Field(description="the verifier's verdict, when done")
    metrics: dict[str, float] = Field(default_factory=dict)


class CodeState(BaseModel):
    model_config = ConfigDict(extra="allow")
    episode_id: str | None = None
    step_count: int = 0
    task_id: str | None = None
    done: bool = False


class StepData(BaseModel):
    """``POST /openenv/step``: OpenEnv's ``StepRequest``, plus the task to run it on."""

    model_config = ConfigDict(extra="forbid")
    action: dict[str, Any]
    timeout_s: float | None = Field(default=None, gt=0, le=3600)
    request_id: str | None = Field(default=None, max_length=255)
    task_id: str | None = Field(default=None, min_length=1, max_length=MAX_ID)
    seed: int | None = Field(default=None, ge=0)
    episode_id: str | None = Field(default=None, max_length=255)
    env: str = Field(default="code", min_length=1, max_length=64)
    options: SessionOptions | None = None


# ---- shared pieces -------------------------------------------------------------------------


class _Refused(Exception):
    """An error frame to send; ``close``: then end the connection."""

    def __init__(self, code: str, message: str, *, close: bool = False, **fields: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.close = close
        self.fields = fields


def _pick_task(s: Service, task_id: str | None, seed: int | None) -> Task:
    if task_id is not None:
        return s.engine.resolve([(task_id, "")])[0][0]
    ids = sorted(s.engine.tasks)
    chosen = ids[seed % len(ids)] if seed is not None else secrets.choice(ids)
    return s.engine.tasks[chosen]


def _env_body(env: str, options: SessionOptions | None) -> EnvBody:
    return EnvBody(env=env, options=options or SessionOptions())


def _payload(
    messages: list[ChatMessage],
    *,
    env: Environment,
    task_id: str,
    episode_id: str,
    turn: int,
    tools: bool,
    verdict: Verdict | None = None,
    metrics: dict[str, float] | None = None,
) -> dict[str, Any]:
    """OpenEnv's serialized observation: ``{observation, reward, done}``."""
    observation = CodeObservation(
        messages=messages,
        tools=env.tools() if tools else [],
        task_id=task_id,
        episode_id=episode_id,
        turn=turn,
        reason=str(getattr(env, "reason", "")),
        verdict=verdict.model_dump(mode="json") if verdict is not None else None,
        metrics=metrics or {},
    )
    return {
        "observation": observation.model_dump(mode="json"),
        "reward": verdict.reward if verdict is not None else None,
        "done": env.done,
    }


def _validation_problems(e: ValidationError) -> list[dict[str, str]]:
    return [
        {
            "field": ".".join(str(p) for p in err.get("loc", ())) or "data",
            "problem": str(err.get("msg", "")),
        }
        for err in e.errors()[:20]
    ]


def _summary(problems: list[dict[str, str]]) -> str:
    return "; ".join(f"{p['field']}: {p['problem']}" for p in problems[:5])


def _infra(verdict: Verdict) -> str:
    return (
        f"the episode ended but its answer could not be judged: {verdict.infra_error}. This "
        "is not a reward of 0; run the episode again"
    )


# ---- WS /openenv/ws ------------------------------------------------------------------------


class _Connection:
    """One WebSocket connection: at most one session, replaced by each ``reset``."""

    def __init__(self, service: Service) -> None:
        self.s = service
        self.session: Session | None = None
        self.episode_id: str | None = None
        self.steps = 0

    async def handle(self, raw: str) -> dict[str, Any] | None:
        """The reply frame to one text frame (None for ``close``); raises :class:`_Refused`."""
        if json_depth(raw.encode("utf-8", "replace")) > self.s.config.max_json_depth:
            raise _Refused(
                "INVALID_JSON",
                f"the message is nested more than {self.s.config.max_json_depth} levels deep",
            )
        try:
            frame = json.loads(raw)
        except ValueError as e:
            raise _Refused("INVALID_JSON", f"Invalid JSON: {e}") from None
        if not isinstance(frame, dict):
            raise _Refused("VALIDATION_ERROR", 'a message is a JSON object: {"type", "data"}')
        kind = frame.get("type")
        data = frame.get("data")
        if kind == "reset":
            return await self.reset(data if data is not None else {})
        if kind == "step":
            return await self.step(data)
        if kind == "state":
            return {"type": "state", "data": self.state()}
        if kind == "close":
            return None
        shown = kind[:64] if isinstance(kind, str) else kind.__class__.__name__
        raise _Refused(
            "UNKNOWN_TYPE", f"Unknown message type: {shown!r} (reset, step, state, close)"
        )

    async def reset(self, data: Any) -> dict[str, Any]:
        args = _validated(ResetData, data, "reset")
        task = _pick_task(self.s, args.task_id, args.seed)
        await self.close()
        self.session, messages = await open_episode(
            self.s, OWNER, _env_body(args.env, args.options), task
        )
        self.episode_id = args.episode_id or secrets.token_hex(8)
        self.steps = 0
        payload = _payload(
            messages,
            env=self.session.env,
            task_id=task.id,
            episode_id=self.episode_id,
            turn=0,
            tools=True,
        )
        return {"type": "observation", "data": payload}

    async def step(self, data: Any) -> dict[str, Any]:
        action = _validated(CodeAction, data, "step")
        session = self.session
        if session is None:
            raise _Refused("EXECUTION_ERROR", 'no episode: send {"type": "reset"} first')
        s = self.s
        async with session.lock:
            if session.closed:
                self.session = None
                raise _Refused(
                    "SESSION_ERROR",
                    f"this episode expired after {s.config.session_ttl_s:g} s idle "
                    "(--session-ttl); send reset to start another",
                )
            env = session.env
            if env.done:
                raise _Refused(
                    "EXECUTION_ERROR",
                    f"the episode has ended ({getattr(env, 'reason', '')}); send reset to "
                    "start another",
                )
            limit = s.engine.deadline_cap_s
            with s.admission.admit(1):
                result = await bounded(env.step(action.to_message()), limit)
                verdict = await bounded(env.verify(), limit) if result.done else None
            session.touch()
        self.steps += 1
        if verdict is not None:
            s.metrics.count_verdicts([verdict])
            if verdict.infra_error:
                raise _Refused("EXECUTION_ERROR", _infra(verdict))
        payload = _payload(
            result.observations,
            env=env,
            task_id=session.task_id,
            episode_id=self.episode_id or "",
            turn=int(result.metrics.get("turn", self.steps)),
            tools=False,
            verdict=verdict,
            metrics=result.metrics,
        )
        return {"type": "observation", "data": payload}

    def state(self) -> dict[str, Any]:
        session = self.session
        return CodeState(
            episode_id=self.episode_id,
            step_count=self.steps,
            task_id=session.task_id if session is not None else None,
            done=bool(session is not None and session.env.done),
        ).model_dump()

    async def close(self) -> None:
        session, self.session = self.session, None
        if session is not None:
            await close_episode(self.s, session)


def _validated(model: type[Any], data: Any, what: str) -> Any:
    if not isinstance(data, dict):
        raise _Refused("VALIDATION_ERROR", f"the data of a {what} message must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as e:
        problems = _validation_problems(e)
        raise _Refused(
            "VALIDATION_ERROR", f"invalid {what}: {_summary(problems)}", errors=problems
        ) from None


def _refusal(exc: BaseException) -> _Refused:
    """The error frame for an exception from a message's handling."""
    if isinstance(exc, _Refused):
        return exc
    if isinstance(exc, SessionLimit):
        return _Refused("CAPACITY_REACHED", str(exc), close=True)
    if isinstance(exc, Busy):
        return _Refused("CAPACITY_REACHED", str(exc), retry_after_s=exc.retry_after_s)
    if isinstance(exc, Draining):
        return _Refused("SESSION_ERROR", str(exc), close=True)
    if isinstance(exc, UnknownTasks | ConfigError | TaskError):
        return _Refused("VALIDATION_ERROR", as_api_error(exc).message)
    e = as_api_error(exc)  # deadlines, the sandbox, the unexpected (logged there)
    return _Refused("EXECUTION_ERROR", e.message, error=e.error)


async def _receive_text(websocket: WebSocket, idle_s: float) -> str | None:
    """The next text frame (a binary one decoded as UTF-8); None when the client has gone."""
    message = await asyncio.wait_for(websocket.receive(), timeout=idle_s)
    if message["type"] == "websocket.disconnect":
        return None
    text = message.get("text")
    if text is not None:
        return str(text)
    data = message.get("bytes") or b""
    return bytes(data).decode("utf-8", "replace")


async def websocket_endpoint(websocket: WebSocket) -> None:
    s: Service = websocket.app.state.service
    await websocket.accept()
    conn = _Connection(s)
    idle_s = s.config.session_ttl_s
    try:
        while True:
            try:
                raw = await _receive_text(websocket, idle_s)
            except TimeoutError:
                await _send_error(
                    websocket,
                    _Refused(
                        "SESSION_ERROR", f"no message for {idle_s:g} s (--session-ttl); closing"
                    ),
                )
                break
            if raw is None:
                break
            try:
                reply = await conn.handle(raw)
            except Exception as e:
                refused = _refusal(e)
                await _send_error(websocket, refused)
                if refused.close:
                    break
                continue
            if reply is None:  # close
                break
            await websocket.send_text(json.dumps(reply))
    except (WebSocketDisconnect, RuntimeError):
        pass  # the client went away mid-reply
    finally:
        await conn.close()
        with contextlib.suppress(Exception):
            await websocket.close()


async def _send_error(websocket: WebSocket, refused: _Refused) -> None:
    data = {"message": refused.message, "code": refused.code, **refused.fields}
    await websocket.send_text(json.dumps({"type": "error", "data": data}))


# ---- HTTP ----------------------------------------------------------------------------------


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


async def http_reset(request: Request, body: ResetData | None = Body(default=None)) -> Any:
    """A fresh environment's first observation; nothing is kept."""
    s = _service(request)
    args = body or ResetData()
    task = _pick_task(s, args.task_id, args.seed)
    episode_id = args.episode_id or secrets.token_hex(8)
    with s.admission.admit(1):
        env = make_session_env(s, _env_body(args.env, args.options), task)
        try:
            messages = await bounded(env.reset(task), s.engine.deadline_cap_s)
            return _payload(
                messages, env=env, task_id=task.id, episode_id=episode_id, turn=0, tools=True
            )
        finally:
            await env.close()


async def http_step(body: StepData, request: Request) -> Any:
    """A fresh environment on the named task, reset, then one step (verified when it ends the
    episode): for single-turn answers, or to try one tool call. Episodes need ``WS /ws``."""
    s = _service(request)
    if body.task_id is None and body.seed is None:
        raise ApiError(
            422,
            "invalid_body",
            "a stateless step runs on a fresh environment: name its task with task_id (or "
            f"seed); for episodes of several steps use WS {PREFIX}/ws",
        )
    try:
        action = CodeAction.model_validate(body.action)
    except ValidationError as e:
        problems = _validation_problems(e)
        raise ApiError(
            422, "invalid_body", f"invalid action: {_summary(problems)}", errors=problems
        ) from None
    task = _pick_task(s, body.task_id, body.seed)
    env = make_session_env(s, _env_body(body.env, body.options), task)

    async def episode() -> tuple[StepResult, Verdict | None]:
        await env.reset(task)
        result = await env.step(action.to_message())
        return result, (await env.verify() if result.done else None)

    try:
        with s.admission.admit(1):  # one deadline (timeout_s, at most --deadline) for it all
            result, verdict = await bounded(episode(), s.engine.bound(body.timeout_s))
        if verdict is not None:
            s.metrics.count_verdicts([verdict])
            if verdict.infra_error:
                raise ApiError(
                    503, "infra_error", _infra(verdict), verdict=verdict.model_dump(mode="json")
                )
        return _payload(
            result.observations,
            env=env,
            task_id=task.id,
            episode_id=body.episode_id or secrets.token_hex(8),
            turn=int(result.metrics.get("turn", 1)),
            tools=False,
            verdict=verdict,
            metrics=result.metrics,
        )
    finally:
        await env.close()


async def http_state() -> dict[str, Any]:
    """A fresh environment's state (HTTP keeps no episode)."""
    return {"episode_id": None, "step_count": 0}


async def schema() -> dict[str, Any]:
    return {
        "action": CodeAction.model_json_schema(),
        "observation": CodeObservation.model_json_schema(),
        "state": CodeState.model_json_schema(),
    }


async def metadata() -> dict[str, Any]:
    from referee import __version__

    return {
        "name": "referee-code",
        "description": (
            "referee's code environment: a programming task (a function, or a change to a "
            "repository) in a sandboxed workspace, with tools (list_files, read_file, "
            "write_file, run_python, run_tests, submit) or as one answer; the reward is the "
            "task verifier's. reset takes task_id or seed; an action is one assistant turn."
        ),
        "readme_content": None,
        "version": __version__,
        "author": None,
        "documentation_url": None,
    }


async def health(request: Request) -> JSONResponse:
    draining = _service(request).admission.draining
    return JSONResponse(
        {"status": "unhealthy" if draining else "healthy"}, status_code=503 if draining else 200
    )


def _make_router() -> APIRouter:
    r = APIRouter(prefix=PREFIX)
    r.add_api_websocket_route("/ws", websocket_endpoint)
    r.add_api_route("/reset", http_reset, methods=["POST"])
    r.add_api_route("/step", http_step, methods=["POST"])
    r.add_api_route("/state", http_state, methods=["GET"])
    r.add_api_route("/schema", schema, methods=["GET"])
    r.add_api_route("/metadata", metadata, methods=["GET"])
    r.add_api_route("/health", health, methods=["GET"])
    return r


router = _make_router()
