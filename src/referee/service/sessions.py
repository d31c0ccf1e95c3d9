"""Environment sessions over HTTP: one episode each, owned by the token that opened it.

A session holds an environment (:func:`referee.envs.make_env`) on the engine's shared runtime,
its snapshots, its owner and when it was last used. Another token asking for it gets the same
answer as for a session that does not exist (404), so ids leak nothing. Idle sessions expire
after ``ttl_s`` and free their workspaces; so does ``DELETE``. Session and snapshot ids are
random (128 bits), and anything that does not look like one is refused before any lookup.
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from referee.envs.base import Environment, EpisodeLimits
from referee.envs.registry import env_keywords
from referee.errors import ConfigError, NotFoundError, RefereeError

if TYPE_CHECKING:
    from referee.envs.runtime import CodeRuntime
    from referee.service.schemas import SessionOptions

__all__ = ["ID_PATTERN", "Session", "SessionLimit", "SessionStore", "session_env_kwargs"]

#: What a session or snapshot id looks like: ``secrets.token_urlsafe(16)``.
ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
MAX_SNAPSHOTS = 32


class SessionLimit(RefereeError):
    """Too many sessions are open: close some (``DELETE``) or wait for idle ones to expire."""


@dataclass
class Session:
    id: str
    owner: str
    env_name: str
    task_id: str
    env: Environment
    last_used: float = field(default_factory=time.monotonic)
    snapshots: dict[str, Any] = field(default_factory=dict)
    #: One request at a time per session: an environment runs one step at a time.
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    closed: bool = False

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def add_snapshot(self, snapshot: Any) -> str:
        if len(self.snapshots) >= MAX_SNAPSHOTS:
            # The oldest goes: a tree search keeps its recent branch points.
            self.snapshots.pop(next(iter(self.snapshots)))
        sid = secrets.token_urlsafe(16)
        self.snapshots[sid] = snapshot
        return sid

    def snapshot(self, snapshot_id: str) -> Any:
        if not ID_PATTERN.match(snapshot_id) or snapshot_id not in self.snapshots:
            raise NotFoundError(
                f"no snapshot {snapshot_id[:80]!r} in this session (a session keeps its last "
                f"{MAX_SNAPSHOTS}); take one with POST /v1/sessions/{{id}}/snapshot"
            )
        return self.snapshots[snapshot_id]


class SessionStore:
    """Open sessions by id; ``max_sessions`` bounds them, ``ttl_s`` expires idle ones."""

    def __init__(self, *, ttl_s: float, max_sessions: int) -> None:
        self.ttl_s = ttl_s
        self.max_sessions = max_sessions
        self._sessions: dict[str, Session] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def check_room(self) -> None:
        """Raise :class:`SessionLimit` when no session can be opened (checked before an
        environment is made for nothing, and again when it is added)."""
        if len(self._sessions) >= self.max_sessions:
            raise SessionLimit(
                f"{len(self._sessions)} sessions are open, the server's limit; close finished "
                "ones with DELETE /v1/sessions/{id} (idle ones expire by themselves)"
            )

    def add(self, owner: str, env_name: str, task_id: str, env: Environment) -> Session:
        self.check_room()
        session = Session(secrets.token_urlsafe(16), owner, env_name, task_id, env)
        self._sessions[session.id] = session
        return session

    def get(self, session_id: str, owner: str) -> Session:
        """The session, if ``owner`` opened it; :class:`NotFoundError` otherwise (foreign and
        unknown sessions look the same)."""
        session = self._sessions.get(session_id) if ID_PATTERN.match(session_id) else None
        if session is None or session.closed or session.owner != owner:
            raise NotFoundError(
                f"no session {session_id[:80]!r} (it may have expired after {self.ttl_s:g} s "
                "idle); open one with POST /v1/sessions"
            )
        session.touch()
        return session

    def pop(self, session_id: str) -> Session | None:
        return self._sessions.pop(session_id, None)

    def expired(self, now: float | None = None) -> list[Session]:
        """Remove and return the sessions idle for longer than the time-to-live."""
        now = time.monotonic() if now is None else now
        old = [
            s
            for s in self._sessions.values()
            if now - s.last_used > self.ttl_s and not s.lock.locked()
        ]
        for s in old:
            self._sessions.pop(s.id, None)
        return old

    def all(self) -> list[Session]:
        out = list(self._sessions.values())
        self._sessions.clear()
        return out


def check_env_name(name: str, known: list[str]) -> None:
    if name not in known:
        raise ConfigError(f"unknown environment {name!r}; the server offers: {', '.join(known)}")


def session_env_kwargs(
    name: str,
    options: SessionOptions,
    runtime: CodeRuntime,
    deadline_cap_s: float,
    *,
    verifier: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``make_env(name, ...)`` for a session: the server's shared
    ``runtime``, limits whose tool step the server's deadline bounds, and the caller's options.

    Each environment gets only the arguments it takes (:func:`referee.envs.env_keywords`): a
    domain's environment (``sql``, ``toolworld``, ...) takes no :class:`CodeRuntime` and makes
    the sandbox it needs itself (closed with the session); before, it was given ``runtime=``
    and every session of a domain environment failed with a TypeError. An option the caller
    chose that the environment does not take is a :class:`ConfigError` naming it.

    ``verifier`` makes the server's shared verifier of the session's task kind; an environment
    that takes a ``verifier`` (``sql``, ``dataframe``, ``verilog``) gets it, so that its
    sessions share one sandbox. Made by each session instead, every SQL session started a
    sandbox worker of its own with DuckDB loaded at its first query (~12 MB each): a thousand
    sessions did not fit."""
    chosen: dict[str, Any] = {}
    if options.single_turn is not None:
        chosen["single_turn"] = options.single_turn
    if options.tools is not None:
        chosen["tools"] = tuple(options.tools)
    # A tool run is bounded by the server's deadline as well as by the episode's own limits.
    step_s = min(EpisodeLimits.step_timeout_s, deadline_cap_s)
    limits = EpisodeLimits(
        max_turns=options.max_turns or EpisodeLimits.max_turns, step_timeout_s=step_s
    )
    takes = env_keywords(name)
    if takes is not None:
        refused = sorted(k for k in chosen if k not in takes)
        if refused:
            raise ConfigError(
                f"environment {name!r} takes no option {', '.join(map(repr, refused))}; "
                "leave it out of the session's options"
            )
    kwargs: dict[str, Any] = {"runtime": runtime, **chosen, "limits": limits}
    if verifier is not None and takes is not None and "verifier" in takes:
        kwargs["verifier"] = verifier()
    return {k: v for k, v in kwargs.items() if takes is None or k in takes}
