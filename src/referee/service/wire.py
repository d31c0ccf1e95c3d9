"""The native API's requests and answers as data, shared by the sync and async clients.

Each route is a function returning a :class:`Call`: the method, path and JSON body, whether it
is *idempotent* (doing it twice is harmless, so a dropped connection may be retried), and how
the answer's JSON becomes a typed value. The clients only send calls and apply the retry rules,
so both speak the same API by construction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from referee.envs.base import ChatMessage, StepResult
from referee.errors import ConfigError
from referee.sandbox.result import ExecResult
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["Call", "OpenedSession", "RemoteStep", "Sample", "sample_bodies"]

T = TypeVar("T")

#: One sample to verify: ``{"task_id", "completion"}`` (as ``gold_samples`` writes them; a
#: program task's may add ``"language"``), or a ``(task_id, completion)`` / ``(Task,
#: completion)`` pair (as TRL's reward function has them), or such a pair and a language.
Sample = Mapping[str, str] | tuple[str | Task, str] | tuple[str | Task, str, str | None]


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request of the native API and how to read its answer."""

    method: str
    path: str
    parse: Callable[[Any], T]
    body: dict[str, Any] | None = None
    #: Harmless to repeat: retried after a connection that broke once the request was sent.
    #: Every call is retried when the connection could not be made, or on 429 (and 503 with
    #: ``Retry-After``): the server did no work then.
    idempotent: bool = True
    #: The session the call acts on, named in the error when the server is gone.
    session_id: str | None = None


@dataclass(frozen=True)
class OpenedSession:
    """``POST /v1/sessions``: the session's id, the episode's first messages and its tools."""

    session_id: str
    messages: list[ChatMessage]
    tools: list[dict[str, Any]]


@dataclass(frozen=True)
class RemoteStep(StepResult):
    """A :class:`~referee.envs.base.StepResult` from the server, with the episode's verdict
    when the step ended it (the server judges a finished episode in the same request)."""

    verdict: Verdict | None = None


def sample_bodies(samples: Iterable[Sample]) -> list[dict[str, str]]:
    out = []
    for s in samples:
        language: str | None
        if isinstance(s, Mapping):
            body = {"task_id": str(s["task_id"]), "completion": str(s["completion"])}
            language = s.get("language")
        else:
            task, completion, language = (*s, None)[:3]
            body = {
                "task_id": task.id if isinstance(task, Task) else task,
                "completion": completion,
            }
        if language is not None:
            body["language"] = str(language)
        out.append(body)
    return out


def _verdicts(data: Any) -> list[Verdict]:
    return [Verdict.model_validate(v) for v in data["verdicts"]]


def _session(data: Any) -> OpenedSession:
    return OpenedSession(data["session_id"], list(data["messages"]), list(data["tools"]))


def _step(data: Any) -> RemoteStep:
    verdict = data.get("verdict")
    return RemoteStep(
        observations=list(data["messages"]),
        done=bool(data["done"]),
        metrics={k: float(v) for k, v in (data.get("metrics") or {}).items()},
        reason=str(data.get("reason") or ""),
        verdict=Verdict.model_validate(verdict) if verdict is not None else None,
    )


def _session_path(session_id: str, tail: str = "") -> str:
    # The id goes into the path: refuse anything that would change the route.
    if not session_id or any(c in session_id for c in "/?#%"):
        raise ConfigError(f"not a session id: {session_id!r}")
    return f"/v1/sessions/{session_id}{tail}"


def health() -> Call[dict[str, Any]]:
    return Call("GET", "/health", dict)


def tasks() -> Call[list[dict[str, str]]]:
    return Call("GET", "/v1/tasks", lambda d: list(d["tasks"]))


def verify(samples: list[dict[str, str]], deadline_s: float | None) -> Call[list[Verdict]]:
    body: dict[str, Any] = {"samples": samples}
    if deadline_s is not None:
        body["deadline_s"] = deadline_s
    # Verifying twice gives the same verdict and changes nothing: idempotent.
    return Call("POST", "/v1/verify", _verdicts, body)


def exec_(body: dict[str, Any]) -> Call[ExecResult]:
    # A program runs in a fresh sandbox each time; running it again changes nothing outside.
    return Call("POST", "/v1/exec", ExecResult.model_validate, body)


def open_session(
    env: str, task_id: str, options: Mapping[str, Any] | None = None
) -> Call[OpenedSession]:
    body: dict[str, Any] = {"env": env, "task_id": task_id}
    if options:
        body["options"] = dict(options)
    # Not idempotent: a repeat would open (and leak, until it expires) a second session.
    return Call("POST", "/v1/sessions", _session, body, False)


def tools(env: str, options: Mapping[str, Any] | None = None) -> Call[list[dict[str, Any]]]:
    body: dict[str, Any] = {"env": env}
    if options:
        body["options"] = dict(options)
    return Call("POST", "/v1/tools", lambda data: list(data["tools"]), body, True)


def step(session_id: str, message: ChatMessage, deadline_s: float | None) -> Call[RemoteStep]:
    body: dict[str, Any] = {"message": message}
    if deadline_s is not None:
        body["deadline_s"] = deadline_s
    # Never repeated once sent: the episode may have advanced already.
    return Call("POST", _session_path(session_id, "/step"), _step, body, False, session_id)


def snapshot(session_id: str) -> Call[str]:
    path = _session_path(session_id, "/snapshot")
    # A repeat only adds a snapshot, but the first one's id would be lost: not idempotent.
    return Call("POST", path, lambda d: str(d["snapshot_id"]), None, False, session_id)


def restore(session_id: str, snapshot_id: str) -> Call[bool]:
    path = _session_path(session_id, "/restore")
    body = {"snapshot_id": snapshot_id}
    return Call("POST", path, lambda d: bool(d["done"]), body, True, session_id)


def verify_session(session_id: str) -> Call[Verdict]:
    path = _session_path(session_id, "/verify")
    return Call("POST", path, Verdict.model_validate, None, True, session_id)


def close_session(session_id: str) -> Call[None]:
    return Call("DELETE", _session_path(session_id), lambda _: None, None, True, session_id)
