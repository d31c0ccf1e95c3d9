"""``RemoteEnvironment``: an :class:`~referee.envs.base.Environment` whose episode runs on a
``referee serve`` server, one session per episode.

Whatever drives environments drives this one unchanged: the rollout runner, the TRL adapters,
:class:`~referee.envs.base.SyncEnvironment`. The server must hold the tasks by the same ids
(start it with the same task file): ``reset(task)`` sends only ``task.id``, and the server's
copy of the task is the one shown and judged.

>>> from referee.rollout.runner import RolloutRunner                   # doctest: +SKIP
>>> runner = RolloutRunner(lambda: RemoteEnvironment(url, token="t"), policy)  # doctest: +SKIP
>>> [t.reward for t in runner.run_sync(tasks)]                         # doctest: +SKIP
[1.0, 0.0, ...]

Snapshots stay on the server: :meth:`RemoteEnvironment.snapshot` returns the snapshot's id,
which only the same session can restore. If the server stops, the next call raises
:class:`~referee.service.errors.ServerUnavailable` (the rollout runner records it as an
infrastructure fault and retries the rollout from a fresh environment, hence a new session).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from referee.envs.base import ChatMessage, Environment, StepResult
from referee.errors import ConfigError
from referee.service.client import AsyncClient, Client, RetryPolicy
from referee.service.errors import RemoteNotFound, ServerUnavailable
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["RemoteEnvironment"]

_log = logging.getLogger(__name__)


class RemoteEnvironment(Environment):
    """The server's environment ``env`` (``"code"``, ``"code-single"``, any it registered).

    ``client_or_url``: an :class:`AsyncClient` (shared by many environments of one event
    loop, and closed by its owner), or the server's URL (this environment makes its own client
    with ``token``, ``timeout`` and ``retries``, and closes it in :meth:`close`; use a URL where
    each environment runs on its own event loop, as the TRL adapter's do).

    After an episode, ``verdict`` holds the server's verdict (its ``verifier`` names what
    judged it) and ``session_id`` the session it ran in.
    """

    def __init__(
        self,
        client_or_url: AsyncClient | str,
        env: str = "code",
        *,
        token: str | None = None,
        timeout: float = 120.0,
        retries: int | RetryPolicy = RetryPolicy(),
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = env
        self.env = env
        #: How the server makes the environment: ``single_turn``, ``tools``, ``max_turns``.
        self.options = dict(options or {})
        self._given = client_or_url if isinstance(client_or_url, AsyncClient) else None
        self._url = client_or_url if isinstance(client_or_url, str) else client_or_url.base_url
        self._settings: dict[str, Any] = {"token": token, "timeout": timeout, "retries": retries}
        self._own: AsyncClient | None = None
        self.session_id: str | None = None
        self.verdict: Verdict | None = None
        self._tools: list[dict[str, Any]] | None = None  # None: not asked for yet
        self._done = False

    async def reset(self, task: Task) -> list[ChatMessage]:
        """Open a session on the server for ``task.id`` (closing this environment's previous
        one); returns the episode's first messages."""
        await self._close_session()
        opened = await self.client().open_session(self.env, task.id, self.options)
        self.session_id = opened.session_id
        self._tools = opened.tools
        self._done, self.verdict = False, None
        return opened.messages

    def tools(self) -> list[dict[str, Any]]:
        """The tools the server's environment offers: those sent at ``reset``, or before the
        first episode those ``POST /v1/tools`` names for this environment and options (a
        trainer reads them to build its prompts before any reset)."""
        if self._tools is None:
            with Client(self._url, **self._settings) as client:
                self._tools = client.tools(self.env, self.options)
        return list(self._tools)

    async def step(self, message: ChatMessage) -> StepResult:
        step = await self.client().step(self._session(), message)
        self._done = step.done
        if step.verdict is not None:
            self.verdict = step.verdict
        return step

    @property
    def done(self) -> bool:
        return self._done

    async def verify(self) -> Verdict:
        """The server's verdict: the one its last step brought (it judges an episode as it
        ends), else asked for (``POST .../verify``, e.g. after a turn limit here)."""
        if self.verdict is None or not self._done:
            self.verdict = await self.client().verify_session(self._session())
        return self.verdict

    async def snapshot(self) -> str:
        """The id of a snapshot kept by the server, for :meth:`restore` in this session."""
        return await self.client().snapshot(self._session())

    async def restore(self, snapshot: Any) -> None:
        if not isinstance(snapshot, str):
            raise ConfigError(
                f"a RemoteEnvironment restores a snapshot id (str), got {type(snapshot).__name__}"
            )
        self._done = await self.client().restore(self._session(), snapshot)
        self.verdict = None  # the state changed; ask the server again

    async def close(self) -> None:
        """Close the session (safe twice). A session or server already gone is not an error:
        there is nothing left to release."""
        await self._close_session()
        own, self._own = self._own, None
        if own is not None:
            await own.aclose()

    def client(self) -> AsyncClient:
        """The client this environment talks through. One of its own is made on first use,
        so it belongs to the event loop the episode runs on, and again after :meth:`close`."""
        if self._given is not None:
            return self._given
        if self._own is None:
            self._own = AsyncClient(self._url, **self._settings)
        return self._own

    async def _close_session(self) -> None:
        session_id, self.session_id = self.session_id, None
        if session_id is None:
            return
        try:
            await self.client().close_session(session_id)
        except (RemoteNotFound, ServerUnavailable) as e:
            _log.debug("session %s was already gone: %s", session_id, e)

    def _session(self) -> str:
        if self.session_id is None:
            raise ConfigError("no session is open; call reset(task) first")
        return self.session_id
