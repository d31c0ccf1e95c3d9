"""NeMo Gym's resources-server protocol for referee's environments (``--compat nemo-gym``).

NeMo Gym's agent server (``simple_agent``, driven by NeMo RL or ``gym eval run``) calls a
*resources server* for each rollout: ``POST /seed_session`` with the dataset row, ``POST
/<tool name>`` with each tool call's arguments, then ``POST /verify`` with the row and the
model's Responses object; ``POST /aggregate_metrics`` at the end of a run. referee answers those
routes itself, so the rollout's tools run in referee's sandbox and its reward is referee's
verdict. Paths may also arrive as ``/ng-rollout/<rollout id>/<route>`` (NeMo Gym's
observability prefix). **None of these routes takes a token** (the agent sends none): serve on
a trusted network only; the server says so at start-up.

Pointing NeMo Gym at referee
----------------------------
Write the tasks as NeMo Gym rows (:func:`nemo_gym_row`, what ``referee tasks export --format
nemo-gym`` is to call), start ``referee serve --tasks TASKS --compat nemo-gym --host H --port
P``, and give the resources-server block of the Gym config referee's address::

    referee_code:                     # the resources server the agent names
      resources_servers:
        referee:
          entrypoint: app.py          # Gym starts it; a stub that waits (referee is already up)
          domain: coding
          host: H                     # referee serve's --host
          port: P                     # referee serve's --port
    referee_simple_agent:
      responses_api_agents:
        simple_agent:
          entrypoint: app.py
          resources_server: {type: resources_servers, name: referee_code}
          model_server: {type: responses_api_models, name: policy_model}

The agent builds ``http://{host}:{port}{path}`` from that block; nothing else changes. (Gym
launches every configured server with its ``entrypoint``; it has no setting for a server
started elsewhere, so the block's ``app.py`` is a stand-in that blocks, or one that execs
``referee serve`` with the block's port. Not exercised against nemo-gym itself, which needs
Python 3.13: the tests replay its agent's calls.)

The row
-------
``verifier_metadata.task_id`` names the task (a top-level ``task_id`` also works);
``verifier_metadata.env`` and ``.options`` (``single_turn``, ``tools``, ``max_turns``) say how the
environment is made. Without ``env``, the task's kind decides (``code`` for function and
repository tasks; a domain's task, sql, shell, toolworld, ..., in its domain's environment,
``make_env(KIND)``). For ``code`` without ``options`` the row's ``responses_create_params.tools``
decide: no tools is a single-turn episode (the final message is the answer), tools are a
multi-turn episode offering exactly those (each must be one of the environment's). A domain's
environment offers its own tools (a tool world's are its world's) and takes only the options its
constructor takes (``max_turns``; shell also ``single_turn``). :func:`nemo_gym_row` writes all of
it, with the environment's first messages and tools.

Sessions
--------
``/seed_session`` opens a session of the server's store (at most ``--max-sessions`` open;
``--session-ttl``) and sets the cookie ``referee_nemo_gym`` to its id. NeMo Gym's
agent keeps no cookie jar: it forwards the ``Set-Cookie`` of each reply by hand on its next
call, so **every reply of a session sets the cookie again**, tool replies and their errors
included. A call with no cookie, or one naming no open session, gets a 404 JSON body. Each tool
call is one turn of the episode (its ``max_turns``). ``/verify`` closes the session; a repeated
``/verify`` with the same cookie (the agent retries a dropped connection) gets the same answer.

Tool replies are the tool's output as ``text/plain``: the agent hands the body, whatever its
status, to the model as the ``function_call_output``. A tool's own failure (bad arguments, a
path outside the workspace, an unknown tool) is that text with status 200, as the model would
see it in referee's own loop.

Verification
------------
If the episode ended through the tools (``submit``, or a limit), that answer is judged. Otherwise
the Responses object's final assistant message is the answer, read by the environment's rules
(a ```` ```python ```` block for a function task, a diff for a repository task; the whole text
in single-turn mode); with no such answer the workspace as it stands is judged. The reply is
the request plus ``reward`` (the verdict's), ``resolved`` (passed) and ``referee_verdict``.

A verdict that is an infrastructure error (the sandbox failed, the deadline passed) is **not**
turned into a reward of 0: ``/verify`` answers 503 with the verdict. NeMo Gym's agent then fails
the rollout (it calls ``raise_for_status``); NeMo RL counts a 5xx from ``/run`` as an
infrastructure failure and runs the prompt again (``max_infra_attempts_per_prompt``), and
``gym eval run`` leaves the row out of the results. A reward of 0 would have been trained on.
"""

from __future__ import annotations

import json
import math
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse, PlainTextResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import cookie_parser
from starlette.routing import Match
from starlette.types import Scope

from referee.envs.base import ChatMessage, EpisodeLimits
from referee.envs.code import FUNCTION_SYSTEM, REPO_SYSTEM
from referee.envs.code_tasks import SOLUTION_FILE
from referee.envs.code_tools import TOOL_SCHEMAS
from referee.errors import ConfigError
from referee.service.episodes import bounded, close_episode, open_episode
from referee.service.http_errors import ApiError, as_api_error, error_body
from referee.service.schemas import MAX_ID, EnvBody, SessionOptions
from referee.service.sessions import Session
from referee.service.state import Service
from referee.tasks.kinds import TaskKind
from referee.tasks.labels import CODE_KINDS
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["COOKIE", "ROUTES", "nemo_gym_row", "router"]

#: The session cookie; its value is the session's id in the server's store.
COOKIE = "referee_nemo_gym"
#: The owner of every session this protocol opens (its clients have no identity of their own;
#: the random session id in the cookie is what tells them apart).
OWNER = "nemo-gym"
#: The agent a row names by default (``agent_ref``): a ``simple_agent`` block of the Gym config.
AGENT_NAME = "referee_simple_agent"
PREFIX = "/ng-rollout/{rollout_id}"
_ROLLOUT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: Replies of /verify kept for a repeated call with the same cookie.
_RECENT_VERIFIES = 4096

ROUTES = [
    "POST /seed_session",
    "POST /<tool> (" + ", ".join(TOOL_SCHEMAS) + ", or a domain environment's)",
    "POST /verify",
    "POST /aggregate_metrics",
    "GET /reverify_mode",
    "the same under /ng-rollout/<rollout id>/",
]


# ---- the row -------------------------------------------------------------------------------


def nemo_gym_row(
    task: Task,
    *,
    single_turn: bool = False,
    tools: Sequence[str] | None = None,
    max_turns: int | None = None,
    agent_name: str = AGENT_NAME,
) -> dict[str, Any]:
    """``task`` as a NeMo Gym dataset row for referee's ``code`` environment, or for a domain's
    task its domain's environment (:func:`_domain_row`).

    ``responses_create_params`` holds the messages the environment starts the episode with
    (its system message on the tools, then the task's prompt; the prompt alone when
    ``single_turn``) and the tools it offers, in the Responses API's tool format;
    ``verifier_metadata`` names the task and the environment's options, so that
    ``/seed_session`` makes the same environment; ``agent_ref`` names the agent block of the Gym
    config that runs it.

    >>> row = nemo_gym_row(task)                                   # doctest: +SKIP
    >>> row["verifier_metadata"]
    {'task_id': 'HumanEval/0', 'env': 'code', 'options': {'single_turn': False}}
    """
    if task.kind not in CODE_KINDS:
        if single_turn or tools is not None:
            raise ConfigError(
                f"task {task.id!r} is a {task.kind.value!r} task: its environment offers its "
                "own tools; single_turn and tools are the code environment's options"
            )
        return _domain_row(task, max_turns=max_turns, agent_name=agent_name)
    if task.kind != TaskKind.FUNCTION and not task.kind.is_repository:
        raise ConfigError(
            f"task {task.id!r} is a {task.kind.value!r} task; the code environment runs "
            "function and repository tasks"
        )
    names = list(TOOL_SCHEMAS) if tools is None else [n for n in TOOL_SCHEMAS if n in tools]
    unknown = sorted(set(tools or ()) - set(TOOL_SCHEMAS))
    if unknown or (tools is not None and not names):
        raise ConfigError(f"tools must name some of {', '.join(TOOL_SCHEMAS)}; got {tools!r}")
    messages: list[dict[str, Any]] = [{"role": m.role, "content": m.content} for m in task.prompt]
    if not single_turn:
        template = FUNCTION_SYSTEM if task.kind == TaskKind.FUNCTION else REPO_SYSTEM
        system = template.format(turns=max_turns or EpisodeLimits.max_turns, solution=SOLUTION_FILE)
        # As CodeEnv writes them: a task's own system message follows the environment's.
        if messages and messages[0]["role"] == "system":
            messages[0] = {"role": "system", "content": system + "\n\n" + messages[0]["content"]}
        else:
            messages.insert(0, {"role": "system", "content": system})
    options: dict[str, Any] = {"single_turn": single_turn}
    if tools is not None:
        options["tools"] = names
    if max_turns is not None:
        options["max_turns"] = max_turns
    return {
        "responses_create_params": {
            "input": messages,
            "tools": [] if single_turn else [responses_tool(TOOL_SCHEMAS[n]) for n in names],
        },
        "verifier_metadata": {"task_id": task.id, "env": "code", "options": options},
        "task_id": task.id,
        "agent_ref": {"type": "responses_api_agents", "name": agent_name},
    }


def _domain_row(task: Task, *, max_turns: int | None, agent_name: str) -> dict[str, Any]:
    """A domain's task as a row: the first messages and tools of its environment
    (``make_env(KIND)``), read from a reset on the task (a tool world's tools are its world's)."""
    from referee.envs.base import SyncEnvironment
    from referee.envs.registry import make_env

    env = SyncEnvironment(make_env(task.kind.value))
    try:
        messages = [{"role": m["role"], "content": m.get("content") or ""} for m in env.reset(task)]
        schemas = env.tools()
    finally:
        env.close()
    options: dict[str, Any] = {} if max_turns is None else {"max_turns": max_turns}
    return {
        "responses_create_params": {
            "input": messages,
            "tools": [responses_tool(t) for t in schemas],
        },
        "verifier_metadata": {"task_id": task.id, "env": task.kind.value, "options": options},
        "task_id": task.id,
        "agent_ref": {"type": "responses_api_agents", "name": agent_name},
    }


def responses_tool(schema: dict[str, Any]) -> dict[str, Any]:
    """One chat-completions tool schema (``{"type": "function", "function": {...}}``) in the
    Responses API's flat form. Not strict: optional arguments are optional."""
    fn = schema["function"]
    return {
        "type": "function",
        "name": fn["name"],
        "description": fn.get("description", ""),
        "parameters": fn.get("parameters", {"type": "object", "properties": {}}),
        "strict": False,
    }


# ---- request bodies ------------------------------------------------------------------------


class _VerifierMetadata(BaseModel):
    model_config = ConfigDict(extra="allow")
    task_id: str | None = Field(default=None, min_length=1, max_length=MAX_ID)
    #: None: the task's kind decides (``code``, or a domain's environment).
    env: str | None = Field(default=None, min_length=1, max_length=64)
    options: SessionOptions | None = None


class SeedBody(BaseModel):
    """The dataset row (NeMo Gym sends all of it; the fields referee reads are typed)."""

    model_config = ConfigDict(extra="allow")
    responses_create_params: dict[str, Any] = Field(default_factory=dict)
    verifier_metadata: _VerifierMetadata | None = None
    task_id: str | None = Field(default=None, min_length=1, max_length=MAX_ID)


class VerifyBody(BaseModel):
    """The row plus ``response``, the model's OpenAI Responses object."""

    model_config = ConfigDict(extra="allow")
    responses_create_params: dict[str, Any] = Field(default_factory=dict)
    response: dict[str, Any]


class AggregateBody(BaseModel):
    model_config = ConfigDict(extra="allow")
    verify_responses: list[dict[str, Any]] = Field(max_length=10_000_000)


# ---- sessions by cookie --------------------------------------------------------------------


def _service(request: Request) -> Service:
    service: Service = request.app.state.service
    return service


def _check_rollout_id(request: Request) -> None:
    rollout_id = request.path_params.get("rollout_id")
    if rollout_id is not None and not _ROLLOUT_ID.fullmatch(rollout_id):
        raise ApiError(
            422,
            "invalid_request",
            "a rollout id (the /ng-rollout/<id>/ prefix) is letters, digits, '.', '_' and '-', "
            "starting with a letter or digit, at most 255 characters",
        )


def _session(request: Request) -> Session:
    """The session the request's cookie names; a 404 that says what to do otherwise."""
    value = request.cookies.get(COOKIE)
    if value is None:
        raise ApiError(
            404,
            "no_session",
            f"no {COOKIE} cookie: POST /seed_session first, then send the cookie of the "
            "previous reply with every call of the rollout",
        )
    try:
        return _service(request).sessions.get(value, OWNER)
    except Exception:
        raise ApiError(
            404,
            "no_session",
            f"the {COOKIE} cookie names no open session (it may have expired, or its rollout "
            "was verified already); POST /seed_session to start another",
        ) from None


def _with_cookie(response: Response, session_id: str) -> Response:
    response.set_cookie(COOKIE, session_id, path="/", httponly=True, samesite="lax")
    return response


def _error_reply(exc: BaseException, session_id: str | None) -> JSONResponse:
    e = as_api_error(exc)
    reply = JSONResponse(
        error_body(e.error, e.message, **e.fields), status_code=e.status, headers=e.headers
    )
    if session_id is not None:
        _with_cookie(reply, session_id)
    return reply


def _recent(request: Request) -> OrderedDict[str, tuple[int, dict[str, Any]]]:
    state = request.app.state
    recent: OrderedDict[str, tuple[int, dict[str, Any]]] | None = getattr(
        state, "nemo_gym_verified", None
    )
    if recent is None:
        recent = state.nemo_gym_verified = OrderedDict()
    return recent


# ---- routes --------------------------------------------------------------------------------


def _offered(params: dict[str, Any]) -> list[str]:
    """The tool names a row's ``responses_create_params.tools`` offers."""
    tools = params.get("tools") or []
    if not isinstance(tools, list):
        raise ApiError(422, "invalid_body", "responses_create_params.tools must be a list")
    names = []
    for i, tool in enumerate(tools):
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or (tool.get("type") or "function") != "function":
            raise ApiError(
                422,
                "invalid_body",
                f"responses_create_params.tools[{i}] is not a function tool "
                '({"type": "function", "name": ..., "parameters": ...})',
            )
        names.append(name)
    return names


async def seed_session(body: SeedBody, request: Request) -> Response:
    """Open the rollout's session on the task the row names (see the module docstring)."""
    _check_rollout_id(request)
    s = _service(request)
    meta = body.verifier_metadata or _VerifierMetadata()
    task_id = meta.task_id or body.task_id
    if task_id is None:
        raise ApiError(
            422,
            "invalid_body",
            "the row names no task: put its id in verifier_metadata.task_id (rows written by "
            "referee.service.compat.nemo_gym.nemo_gym_row have it)",
        )
    task = s.engine.resolve([(task_id, "")])[0][0]
    env_name = meta.env or ("code" if task.kind in CODE_KINDS else task.kind.value)
    options = meta.options
    if options is None and env_name == "code":
        names = _offered(body.responses_create_params)
        options = SessionOptions(single_turn=not names, tools=names or None)
    elif options is None:  # a domain's environment offers its own tools
        options = SessionOptions()
    # A cookie that still names a session (the agent forwards what it was given): that
    # rollout is over; free it rather than leave it to the time-to-live.
    old = request.cookies.get(COOKIE)
    if old is not None:
        try:
            await close_episode(s, s.sessions.get(old, OWNER))
        except Exception:  # none, or gone already: nothing to free
            pass
    session, _ = await open_episode(s, OWNER, EnvBody(env=env_name, options=options), task)
    tools = [t["function"]["name"] for t in session.env.tools()]
    return _with_cookie(JSONResponse({"task_id": task.id, "tools": tools}), session.id)


async def _tool_call(request: Request, name: str) -> Response:
    _check_rollout_id(request)
    s = _service(request)
    session = _session(request)
    try:
        raw = await request.body()
        try:
            args: Any = json.loads(raw) if raw.strip() else {}
        except ValueError:
            raise ApiError(
                422,
                "invalid_body",
                f"the body of a call to {name[:64]!r} must be its arguments as one JSON object",
            ) from None
        text = await _run_tool(s, session, name, args)
    except Exception as e:
        return _error_reply(e, session.id)
    return _with_cookie(PlainTextResponse(text), session.id)


async def _run_tool(s: Service, session: Session, name: str, args: Any) -> str:
    """What the model is told about one call (the environment's own words where it runs)."""
    async with session.lock:
        session.touch()
        env = session.env
        offered = [t["function"]["name"] for t in env.tools()]
        if not _TOOL_NAME.fullmatch(name):
            return f"error: there is no tool named {name[:64]!r}"
        if not offered:
            return "error: this episode has no tools (single-turn); give the answer in your message"
        if env.done:
            reason = getattr(env, "reason", "") or "ended"
            return (
                f"error: the episode has ended ({reason}); {name} was not run. Give your "
                "final answer."
            )
        if not isinstance(args, dict):
            return f"error: the arguments of {name} must be a JSON object"
        message: ChatMessage = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "ng_call", "type": "function", "function": {"name": name, "arguments": args}}
            ],
        }
        with s.admission.admit(1):
            result = await bounded(env.step(message), s.engine.deadline_cap_s)
        session.touch()
    contents = [str(m.get("content", "")) for m in result.observations if m.get("role") == "tool"]
    return "\n".join(contents)


def _final_text(response: dict[str, Any]) -> str:
    """The text of the Responses object's final assistant message; "" when the output ends
    in tool calls (or has no message)."""
    output = response.get("output")
    if not isinstance(output, list):
        return ""
    for item in reversed(output):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind in ("function_call", "function_call_output"):
            return ""
        if kind == "message" and item.get("role", "assistant") == "assistant":
            content = item.get("content")
            if isinstance(content, str):
                return content
            if not isinstance(content, list):
                return ""
            return "".join(
                p["text"]
                for p in content
                if isinstance(p, dict)
                and p.get("type") in ("output_text", "text")
                and isinstance(p.get("text"), str)
            )
    return ""


async def verify(body: VerifyBody, request: Request) -> Response:
    """The rollout's reward (see the module docstring); closes its session."""
    _check_rollout_id(request)
    s = _service(request)
    recent = _recent(request)
    cookie = request.cookies.get(COOKIE)
    if cookie is not None and cookie in recent:
        status, cached = recent[cookie]
        return JSONResponse(cached, status_code=status)
    session = _session(request)
    try:
        text = _final_text(body.response)
        async with session.lock:
            env = session.env
            with s.admission.admit(1):
                if not env.done and text:
                    await bounded(
                        env.step({"role": "assistant", "content": text}), s.engine.deadline_cap_s
                    )
                verdict: Verdict = await bounded(env.verify(), s.engine.deadline_cap_s)
            reason = getattr(env, "reason", "")
    finally:
        await close_episode(s, session)
    s.metrics.count_verdicts([verdict])
    status, reply = _verify_reply(body, verdict, reason)
    recent[session.id] = (status, reply)
    while len(recent) > _RECENT_VERIFIES:
        recent.popitem(last=False)
    return JSONResponse(reply, status_code=status)


def _verify_reply(body: VerifyBody, verdict: Verdict, reason: str) -> tuple[int, dict[str, Any]]:
    summary = {
        "task_id": verdict.task_id,
        "passed": verdict.passed,
        "tests": verdict.counts(),
        "flags": [f.kind for f in verdict.flags],
        "episode_end": reason,
        "infra_error": verdict.infra_error,
    }
    if verdict.infra_error:
        return 503, error_body(
            "infra_error",
            f"the answer could not be judged: {verdict.infra_error}. This is not a reward of 0; "
            "run the rollout again",
            verdict=verdict.model_dump(mode="json"),
        )
    reply = {
        **body.model_dump(),
        "reward": verdict.reward,
        "resolved": verdict.passed,
        "referee_verdict": summary,
    }
    return 200, reply


async def aggregate_metrics(body: AggregateBody) -> dict[str, Any]:
    """Mean, min and max reward per task (``_ng_task_index``) and over the run."""
    groups: dict[Any, list[float]] = {}
    resolved: list[float] = []
    for i, row in enumerate(body.verify_responses):
        reward = row.get("reward")
        if isinstance(reward, bool) or not isinstance(reward, int | float):
            raise ApiError(
                422,
                "invalid_body",
                f"verify_responses[{i}].reward must be a number (the /verify reply's reward)",
            )
        if not math.isfinite(reward):
            raise ApiError(422, "invalid_body", f"verify_responses[{i}].reward is not finite")
        key = row.get("_ng_task_index")
        if not isinstance(key, int | str | None) or isinstance(key, bool):
            raise ApiError(422, "invalid_body", f"verify_responses[{i}]._ng_task_index: not an id")
        groups.setdefault(key, []).append(float(reward))
        if isinstance(row.get("resolved"), bool):
            resolved.append(1.0 if row["resolved"] else 0.0)

    def stats(values: list[float]) -> dict[str, float]:
        return {
            "mean/reward": sum(values) / len(values),
            "min/reward": min(values),
            "max/reward": max(values),
            "count": float(len(values)),
        }

    every = [r for values in groups.values() for r in values]
    group_level = [
        {"_ng_task_index": key, **stats(values)}
        for key, values in sorted(groups.items(), key=lambda kv: str(kv[0]))
    ]
    agent = stats(every) if every else {}
    if resolved:
        agent["mean/resolved"] = sum(resolved) / len(resolved)
    key_metrics = {k: v for k, v in agent.items() if k.startswith("mean/")}
    return {"group_level_metrics": group_level, "agent_metrics": agent, "key_metrics": key_metrics}


async def reverify_mode() -> str:
    """``gym eval reverify`` cannot run here: verification needs the rollout's session."""
    return "unsupported"


# ---- the router ----------------------------------------------------------------------------


class _SessionRoute(APIRoute):
    """A route that matches only requests carrying this protocol's session cookie.

    ``POST /{tool}`` answers a call to a tool the environment does not have (a model's
    invention) with the environment's error text and the cookie, so the rollout goes on. Without
    the gate it would also take single-segment POSTs meant for other routes."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        if match is Match.NONE:
            return match, child
        for key, value in scope.get("headers", []):
            if key == b"cookie" and COOKIE in cookie_parser(value.decode("latin-1")):
                return match, child
        return Match.NONE, {}


def _tool_endpoint(name: str) -> Callable[[Request], Awaitable[Response]]:
    async def call(request: Request) -> Response:
        return await _tool_call(request, name)

    call.__name__ = f"tool_{name}"
    return call


async def _any_tool(request: Request, tool: str) -> Response:
    return await _tool_call(request, tool)


def _make_router() -> APIRouter:
    r = APIRouter()
    for prefix in ("", PREFIX):
        r.add_api_route(prefix + "/seed_session", seed_session, methods=["POST"])
        r.add_api_route(prefix + "/verify", verify, methods=["POST"])
        r.add_api_route(prefix + "/aggregate_metrics", aggregate_metrics, methods=["POST"])
        r.add_api_route(prefix + "/reverify_mode", reverify_mode, methods=["GET"])
        for name in TOOL_SCHEMAS:
            r.add_api_route(f"{prefix}/{name}", _tool_endpoint(name), methods=["POST"])
    r.add_api_route(PREFIX + "/{tool}", _any_tool, methods=["POST"])
    r.add_api_route("/{tool}", _any_tool, methods=["POST"], route_class_override=_SessionRoute)
    return r


router = _make_router()
