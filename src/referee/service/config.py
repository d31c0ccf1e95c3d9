"""``ServeConfig``: everything ``referee serve`` is told, checked before the server starts.

>>> ServeConfig(tasks=("tasks.jsonl",), no_auth=True).deadline_cap_s
60.0
>>> ServeConfig(tasks=("t.jsonl",), host="0.0.0.0", no_auth=True)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
referee.errors.ConfigError: --no-auth is allowed on loopback only (...), not on 0.0.0.0; ...
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.errors import ConfigError

__all__ = ["COMPAT_PROTOCOLS", "LOOPBACK_HOSTS", "ServeConfig"]

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
#: Trainer protocols ``--compat`` can turn on. Their clients send no referee token, so each is
#: off by default and announced at start-up when on.
COMPAT_PROTOCOLS = ("sandbox-fusion", "openrlhf", "slime", "nemo-gym", "openenv")


@dataclass(frozen=True)
class ServeConfig:
    """The server's settings; see ``referee serve --help`` for each."""

    tasks: tuple[str, ...]
    host: str = "127.0.0.1"
    port: int = 8000
    tokens_file: str | None = None
    no_auth: bool = False
    workers: int | None = None  # sandbox workers (threads and fork-server workers); None: CPUs+1
    max_body_mb: float = 16.0
    #: Admitted work units (samples, exec runs, session steps) running or waiting; past it: 429.
    queue: int = 256
    #: The longest any request may run; a request's own deadline is capped by it.
    deadline_cap_s: float = 60.0
    session_ttl_s: float = 600.0  # idle sessions expire and free their sandboxes
    #: Sessions open at once, every protocol's together; the next one gets a 429.
    max_sessions: int = 256
    max_json_depth: int = 64
    compat: tuple[str, ...] = ()
    drain_timeout_s: float = 120.0  # SIGTERM: how long work in flight may take to finish
    backend: str = "bwrap"  # "local" only for trusted code on machines without bubblewrap
    #: Verify on a Ray pool of sandbox actors: a cluster's address, or "local" (a Ray
    #: instance started here); None: on this server's own sandbox.
    ray: str | None = None
    ray_actors: int = 2

    def __post_init__(self) -> None:
        if not self.tasks:
            raise ConfigError("give at least one --tasks FILE: the tasks the server judges")
        if self.tokens_file is None and not self.no_auth:
            raise ConfigError(
                "refusing to serve without authentication: give --tokens FILE (one token per "
                "line, or name:token), or --no-auth on a loopback address"
            )
        if self.tokens_file is not None and self.no_auth:
            raise ConfigError("give --tokens FILE or --no-auth, not both")
        if self.no_auth and self.host not in LOOPBACK_HOSTS:
            raise ConfigError(
                "--no-auth is allowed on loopback only (127.0.0.1, ::1, localhost), not on "
                f"{self.host}; give --tokens FILE to serve on other addresses"
            )
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"--port must be between 0 and 65535, got {self.port}")
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {self.workers}")
        if self.ray_actors < 1:
            raise ConfigError(f"--ray-actors must be at least 1, got {self.ray_actors}")
        if not 0 < self.max_body_mb <= 1024:
            raise ConfigError(
                f"--max-body-mb must be above 0 and at most 1024, got {self.max_body_mb:g}"
            )
        if self.queue < 1:
            raise ConfigError(f"--queue must be at least 1, got {self.queue}")
        if not 0 < self.deadline_cap_s <= 3600:
            raise ConfigError(
                f"--deadline must be above 0 and at most 3600 seconds, got {self.deadline_cap_s:g}"
            )
        if self.max_sessions < 1:
            raise ConfigError(f"--max-sessions must be at least 1, got {self.max_sessions}")
        if not self.session_ttl_s > 0:
            raise ConfigError(f"--session-ttl must be above 0 seconds, got {self.session_ttl_s:g}")
        unknown = [c for c in self.compat if c not in COMPAT_PROTOCOLS]
        if unknown:
            raise ConfigError(
                f"unknown --compat protocol(s) {', '.join(unknown)}; known: "
                + ", ".join(COMPAT_PROTOCOLS)
            )

    @property
    def max_body_bytes(self) -> int:
        return int(self.max_body_mb * 1024 * 1024)
