"""``Service``: what one server holds — its settings, tokens, engine, sessions, admission
gate and metrics. Routes of every protocol reach it as ``request.app.state.service``.

>>> service = Service.start(ServeConfig(tasks=("he.jsonl",), no_auth=True))  # doctest: +SKIP
>>> app = create_app(service)                                               # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from referee.errors import ConfigError
from referee.service.admission import Admission
from referee.service.auth import ANONYMOUS, Tokens
from referee.service.config import ServeConfig
from referee.service.engine import RemoteVerifier, ServiceEngine
from referee.service.metrics import ServiceMetrics
from referee.service.sessions import Session, SessionStore
from referee.tasks.model import Task

__all__ = ["Service"]

log = logging.getLogger("referee.service")


@dataclass
class Service:
    config: ServeConfig
    tokens: Tokens | None  # None: --no-auth
    engine: ServiceEngine
    sessions: SessionStore
    admission: Admission
    metrics: ServiceMetrics

    @classmethod
    def start(
        cls,
        config: ServeConfig,
        tasks: Sequence[Task] | None = None,
        *,
        remote: Callable[[list[Task]], RemoteVerifier] | None = None,
    ) -> Service:
        """Load the tokens and tasks (``tasks`` given: use those instead of ``config.tasks``)
        and start the engine. Every bad setting fails here, before a port is bound.

        With ``config.ray``, ``remote`` makes the pool that verifies instead of the engine's own
        sandbox from the loaded tasks (``referee serve --ray`` passes a
        :class:`referee.cluster.SandboxPool`'s: the cluster's actors hold this package's engine,
        so the service does not import the cluster back)."""
        from referee.service.tasks_loading import LiveTasks

        tokens = Tokens.load(config.tokens_file) if config.tokens_file is not None else None
        # The --tasks files are re-read when they change, except under --ray: its actors hold
        # the tasks they were started with.
        live: LiveTasks | None = None
        if tasks is None:
            live = LiveTasks(config.tasks)
            tasks = list(live.current().values())
        loaded = list(tasks)
        metrics_ref: list[ServiceMetrics] = []
        if (config.ray is None) != (remote is None):
            raise ConfigError(
                "ServeConfig.ray and Service.start(remote=...) go together: give both (remote "
                "makes the Ray pool from the tasks, as `referee serve --ray` does) or neither"
            )
        engine = ServiceEngine(
            live if live is not None and config.ray is None else loaded,
            workers=config.workers,
            deadline_cap_s=config.deadline_cap_s,
            backend=config.backend,
            on_busy=lambda n: metrics_ref[0].busy(n) if metrics_ref else None,
            on_lost_worker=lambda: metrics_ref[0].lost_worker() if metrics_ref else None,
            remote=remote(loaded) if remote is not None else None,
        )
        metrics = ServiceMetrics(workers=engine.workers, queue_limit=config.queue)
        metrics_ref.append(metrics)
        return cls(
            config=config,
            tokens=tokens,
            engine=engine,
            sessions=SessionStore(ttl_s=config.session_ttl_s, max_sessions=config.max_sessions),
            admission=Admission(config.queue),
            metrics=metrics,
        )

    def caller(self, authorization: str | None) -> str | None:
        """The caller's name from its ``Authorization`` header; None when refused."""
        if self.tokens is None:
            return ANONYMOUS
        return self.tokens.name_of(authorization)

    async def close_session(self, session: Session) -> None:
        session.closed = True
        try:
            await session.env.close()
        except Exception:  # a session that fails to close must not stop the others closing
            log.exception("closing session %s failed", session.id)
            self.metrics.infra_errors.labels("session_close").inc()
        self.metrics.sessions_open.set(len(self.sessions))

    async def expire_sessions(self) -> int:
        expired = self.sessions.expired()
        for s in expired:
            await self.close_session(s)
            self.metrics.sessions_expired.inc()
        return len(expired)

    async def reap_forever(self) -> None:
        """Close idle sessions every few seconds, until cancelled."""
        period = max(0.05, min(5.0, self.config.session_ttl_s / 4))
        while True:
            await asyncio.sleep(period)
            await self.expire_sessions()

    async def close_all_sessions(self) -> None:
        for s in self.sessions.all():
            await self.close_session(s)

    def close(self) -> None:
        self.engine.close()
