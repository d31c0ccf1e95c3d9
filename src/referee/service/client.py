"""Clients of ``referee serve``: :class:`Client` (sync) and :class:`AsyncClient`, one method per
native route, answers parsed into referee's own types, errors typed
(:mod:`referee.service.errors`).

Use a remote server::

    from referee.service import Client, RemoteEnvironment

    with Client("http://judge:8000", token="...") as judge:
        judge.health()["status"]                                  # 'ok'
        verdicts = judge.verify([("HumanEval/0", "    return False\\n")])
        verdicts[0].reward, verdicts[0].verifier

    # The rollout runner, unchanged, with the environment on the server:
    runner = RolloutRunner(lambda: RemoteEnvironment("http://judge:8000", token="..."), policy)

    # TRL's reward function, unchanged, verifying on the server (the same task file there):
    reward = reward_function(Client("http://judge:8000", token="..."), tasks)

Retries. A request refused before any work was done is retried with exponential backoff and
jitter, waiting at least the server's ``Retry-After``: a 429 (the admission limit, too many
sessions), a 503 that carries ``Retry-After`` (draining), and a connection that could not be
made. Idempotent calls (verify, exec, restore, a session's verify, close, the GETs) are also
retried after a connection broke mid-request and after a 503 without ``Retry-After`` (a
sandbox failure); a session step, opening a session and taking a snapshot are not, since the
server may have acted on them. Attempts and total waiting are both bounded; past them the error
is raised (:class:`~referee.service.errors.ServerBusy`,
:class:`~referee.service.errors.ServerUnavailable`).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from referee.envs.base import ChatMessage
from referee.sandbox.result import ExecResult
from referee.service import wire
from referee.service.errors import (
    DeadlineExceeded,
    ServerBusy,
    ServerUnavailable,
    ServiceError,
    error_for_status,
)
from referee.service.wire import Call, OpenedSession, RemoteStep, Sample
from referee.verify.verdict import Verdict

__all__ = ["AsyncClient", "Client", "RetryPolicy"]

T = TypeVar("T")

#: Transport errors raised before the request left: every call may be retried after them.
_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)


@dataclass(frozen=True)
class RetryPolicy:
    """How long a client keeps trying (see the module docstring for what is retried).

    ``retries``: attempts after the first on 429/503; ``connect_retries``: after a connection
    failure (few: a server that is not there should be reported soon); ``backoff_s``: the first
    wait, doubled each time up to ``max_backoff_s`` and jittered to 50-100 %; ``budget_s``: no
    retry starts later than this after the first attempt.
    """

    retries: int = 10
    connect_retries: int = 2
    backoff_s: float = 0.25
    max_backoff_s: float = 8.0
    budget_s: float = 60.0


class _Attempts:
    """The retry state of one call: after each failure, how long to wait, or None to give up."""

    def __init__(self, policy: RetryPolicy, call: Call[Any]) -> None:
        self.policy = policy
        self.call = call
        self.started = time.monotonic()
        self.busy = 0
        self.broken = 0
        self.last_retry_after: float | None = None

    def after_status(self, response: httpx.Response) -> float | None:
        retry_after = _retry_after(response)
        self.last_retry_after = retry_after
        status = response.status_code
        refused = status == 429 or (status == 503 and retry_after is not None)
        if not (refused or (status == 503 and self.call.idempotent)):
            return None
        if self.busy >= self.policy.retries:
            return None
        self.busy += 1
        return self._wait(self.busy, retry_after)

    def after_error(self, exc: httpx.TransportError) -> float | None:
        sent = not isinstance(exc, _NOT_SENT)
        if isinstance(exc, httpx.TimeoutException) and sent:
            return None  # the server is working on it; a repeat would only add work
        if (sent and not self.call.idempotent) or self.broken >= self.policy.connect_retries:
            return None
        self.broken += 1
        return self._wait(self.broken, None)

    def _wait(self, k: int, retry_after: float | None) -> float | None:
        p = self.policy
        wait = min(p.max_backoff_s, p.backoff_s * 2.0 ** (k - 1)) * random.uniform(0.5, 1.0)
        if retry_after is not None:
            # At least what the server asked for; the jitter spreads clients refused together.
            wait = max(wait, retry_after * random.uniform(1.0, 1.2))
        if time.monotonic() - self.started + wait > p.budget_s:
            return None
        return wait

    @property
    def tries(self) -> int:
        return 1 + self.busy + self.broken

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


def _retry_after(response: httpx.Response) -> float | None:
    try:
        return max(0.0, float(response.headers["retry-after"]))
    except (KeyError, ValueError):
        return None  # absent, or an HTTP date (referee's server sends seconds)


class _Base:
    """What both clients share: settings, request bodies and turning failures into errors."""

    def __init__(
        self,
        base_url: str,
        token: str | None,
        timeout: float,
        retries: int | RetryPolicy,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retry = retries if isinstance(retries, RetryPolicy) else RetryPolicy(retries=retries)
        self._batch: int | None = None  # the server's --queue, read once for verify batches

    def _http_settings(self) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        return {
            "base_url": self.base_url,
            "headers": headers,
            # Connecting is quick or not happening; an answer may take the server's deadline.
            "timeout": httpx.Timeout(self.timeout, connect=min(5.0, self.timeout)),
        }

    def _where(self, call: Call[Any]) -> str:
        return f"{call.method} {self.base_url}{call.path}"

    def _answer(self, call: Call[T], response: httpx.Response, attempts: _Attempts) -> T:
        if response.is_success:
            return call.parse(response.json())
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict):  # not referee's JSON: a proxy's page, say
            body = {"message": response.text[:500]}
        error = error_for_status(response.status_code, body, self._where(call))
        if isinstance(error, ServerBusy | ServerUnavailable) and attempts.tries > 1:
            error = type(error)(
                f"{error} (gave up after {attempts.tries} attempts in {attempts.elapsed:.1f} s)",
                status=error.status,
                error=error.error,
                body=error.body,
            )
        if isinstance(error, ServerBusy):
            error.retry_after_s = attempts.last_retry_after
        raise error

    def _failure(self, call: Call[Any], exc: httpx.TransportError) -> ServiceError:
        where = self._where(call)
        if isinstance(exc, httpx.TimeoutException) and not isinstance(exc, _NOT_SENT):
            return DeadlineExceeded(
                f"{where}: no answer within the client's timeout of {self.timeout:g} s; give "
                "a longer timeout= (it should exceed the server's --deadline) or send less work"
            )
        server = f"the referee server at {self.base_url}"
        if isinstance(exc, _NOT_SENT):
            text = f"cannot reach {server} ({_describe(exc)}); is `referee serve` running there?"
        else:
            text = f"the connection to {server} broke ({_describe(exc)}); it may have stopped"
            if not call.idempotent:
                text += ", and whether it acted on the request is unknown (not retried)"
            text += "."
        if call.session_id is not None:
            text += (
                f" Sessions live in the server's memory: session {call.session_id} is gone if "
                "the server stopped or restarted; open a new one (reset)."
            )
        return ServerUnavailable(f"{where}: {text}")

    @staticmethod
    def _exec_body(
        code: str,
        language: str,
        stdin: str | None,
        files: Mapping[str, str] | None,
        timeout_s: float,
        memory_mb: int,
    ) -> dict[str, Any]:
        return {
            "code": code,
            "language": language,
            "stdin": stdin,
            "files": dict(files or {}),
            "timeout_s": timeout_s,
            "memory_mb": memory_mb,
        }


def _batches(bodies: list[dict[str, str]], limit: int | None) -> list[list[dict[str, str]]]:
    size = max(1, limit or len(bodies))
    return [bodies[i : i + size] for i in range(0, len(bodies), size)]


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class Client(_Base):
    """A synchronous client of ``referee serve``; see the module docstring.

    >>> with Client("http://127.0.0.1:8000") as c:                     # doctest: +SKIP
    ...     [v.passed for v in c.verify([{"task_id": "HumanEval/0",
    ...                                   "completion": "    return False\\n"}])]
    [False]

    ``retries`` is a number of retries on 429/503 or a whole :class:`RetryPolicy`; ``timeout``
    bounds the wait for one answer and should exceed the server's ``--deadline``. It is
    thread-safe (one connection pool), and also the ``verify_many`` verifier that
    :func:`referee.train.trl_adapter.reward_function` takes.
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 120.0,
        retries: int | RetryPolicy = RetryPolicy(),
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, token, timeout, retries)
        self._http = httpx.Client(transport=transport, **self._http_settings())

    def _run(self, call: Call[T]) -> T:
        attempts = _Attempts(self.retry, call)
        while True:
            try:
                response = self._http.request(call.method, call.path, json=call.body)
            except httpx.TransportError as e:
                wait = attempts.after_error(e)
                if wait is None:
                    raise self._failure(call, e) from e
            else:
                wait = attempts.after_status(response) if not response.is_success else None
                if wait is None:
                    return self._answer(call, response, attempts)
            time.sleep(wait)

    def health(self) -> dict[str, Any]:
        """``GET /health``: ``status``, ``tasks``, ``workers``, ``sessions``, ``queue``."""
        return self._run(wire.health())

    def tasks(self) -> list[dict[str, str]]:
        """The ids and kinds of the tasks the server holds."""
        return self._run(wire.tasks())

    def verify(self, samples: Iterable[Sample], deadline_s: float | None = None) -> list[Verdict]:
        """One verdict per sample, in order; sent in batches the server admits (``--queue``)."""
        bodies = wire.sample_bodies(samples)
        if self._batch is None and len(bodies) > 1:
            self._batch = int(self.health()["queue"]["limit"])
        out: list[Verdict] = []
        for batch in _batches(bodies, self._batch):
            verdicts: list[Verdict] = self._run(wire.verify(batch, deadline_s))
            out.extend(verdicts)
        return out

    def verify_many(self, items: Iterable[Sample]) -> list[Verdict]:
        """:meth:`verify` by the name referee's verifiers use (``(task, completion)`` pairs)."""
        return self.verify(items)

    def exec(
        self,
        code: str,
        *,
        language: str = "python",
        stdin: str | None = None,
        files: Mapping[str, str] | None = None,
        timeout_s: float = 10.0,
        memory_mb: int = 512,
    ) -> ExecResult:
        """Run one program in the server's sandbox (``files``: relative path -> text)."""
        body = self._exec_body(code, language, stdin, files, timeout_s, memory_mb)
        return self._run(wire.exec_(body))

    def open_session(
        self, env: str, task_id: str, options: Mapping[str, Any] | None = None
    ) -> OpenedSession:
        """Open an episode of ``env`` on ``task_id``; ``options``: ``single_turn``, ``tools``,
        ``max_turns`` (see :class:`referee.service.schemas.SessionOptions`)."""
        return self._run(wire.open_session(env, task_id, options))

    def tools(
        self, env: str = "code", options: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """The tools ``env`` made with ``options`` offers, before any episode."""
        return self._run(wire.tools(env, options))

    def step(
        self, session_id: str, message: ChatMessage, deadline_s: float | None = None
    ) -> RemoteStep:
        return self._run(wire.step(session_id, message, deadline_s))

    def snapshot(self, session_id: str) -> str:
        return self._run(wire.snapshot(session_id))

    def restore(self, session_id: str, snapshot_id: str) -> bool:
        """Return the session to a snapshot; whether its episode is over there."""
        return self._run(wire.restore(session_id, snapshot_id))

    def verify_session(self, session_id: str) -> Verdict:
        return self._run(wire.verify_session(session_id))

    def close_session(self, session_id: str) -> None:
        self._run(wire.close_session(session_id))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(_Base):
    """:class:`Client`'s methods as coroutines, for event loops (the environments, the rollout
    runner). Like any ``httpx.AsyncClient`` it belongs to the event loop that first uses it.

    >>> async with AsyncClient("http://127.0.0.1:8000") as c:          # doctest: +SKIP
    ...     opened = await c.open_session("code", "HumanEval/0")
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        *,
        timeout: float = 120.0,
        retries: int | RetryPolicy = RetryPolicy(),
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        super().__init__(base_url, token, timeout, retries)
        self._http = httpx.AsyncClient(transport=transport, **self._http_settings())

    async def _run(self, call: Call[T]) -> T:
        attempts = _Attempts(self.retry, call)
        while True:
            try:
                response = await self._http.request(call.method, call.path, json=call.body)
            except httpx.TransportError as e:
                wait = attempts.after_error(e)
                if wait is None:
                    raise self._failure(call, e) from e
            else:
                wait = attempts.after_status(response) if not response.is_success else None
                if wait is None:
                    return self._answer(call, response, attempts)
            await asyncio.sleep(wait)

    async def health(self) -> dict[str, Any]:
        return await self._run(wire.health())

    async def tasks(self) -> list[dict[str, str]]:
        return await self._run(wire.tasks())

    async def verify(
        self, samples: Iterable[Sample], deadline_s: float | None = None
    ) -> list[Verdict]:
        bodies = wire.sample_bodies(samples)
        if self._batch is None and len(bodies) > 1:
            self._batch = int((await self.health())["queue"]["limit"])
        out: list[Verdict] = []
        for batch in _batches(bodies, self._batch):
            verdicts: list[Verdict] = await self._run(wire.verify(batch, deadline_s))
            out.extend(verdicts)
        return out

    async def exec(
        self,
        code: str,
        *,
        language: str = "python",
        stdin: str | None = None,
        files: Mapping[str, str] | None = None,
        timeout_s: float = 10.0,
        memory_mb: int = 512,
    ) -> ExecResult:
        body = self._exec_body(code, language, stdin, files, timeout_s, memory_mb)
        return await self._run(wire.exec_(body))

    async def open_session(
        self, env: str, task_id: str, options: Mapping[str, Any] | None = None
    ) -> OpenedSession:
        return await self._run(wire.open_session(env, task_id, options))

    async def tools(
        self, env: str = "code", options: Mapping[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        return await self._run(wire.tools(env, options))

    async def step(
        self, session_id: str, message: ChatMessage, deadline_s: float | None = None
    ) -> RemoteStep:
        return await self._run(wire.step(session_id, message, deadline_s))

    async def snapshot(self, session_id: str) -> str:
        return await self._run(wire.snapshot(session_id))

    async def restore(self, session_id: str, snapshot_id: str) -> bool:
        return await self._run(wire.restore(session_id, snapshot_id))

    async def verify_session(self, session_id: str) -> Verdict:
        return await self._run(wire.verify_session(session_id))

    async def close_session(self, session_id: str) -> None:
        await self._run(wire.close_session(session_id))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
