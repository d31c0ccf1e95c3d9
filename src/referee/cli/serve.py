"""``referee serve``: referee's API (and trainers' protocols) over HTTP."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from referee.cli.console import err
from referee.optional import require_extra

if TYPE_CHECKING:
    from referee.service.config import ServeConfig
    from referee.service.engine import RemoteVerifier
    from referee.tasks.model import Task


def serve(
    tasks: Annotated[
        list[str], typer.Option("--tasks", help="Task JSONL file or URL (repeat for more).")
    ],
    host: Annotated[str, typer.Option(help="The address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="The port to listen on.")] = 8000,
    tokens: Annotated[
        Path | None,
        typer.Option("--tokens", help="Bearer tokens, one per line (or name:token)."),
    ] = None,
    no_auth: Annotated[
        bool, typer.Option("--no-auth", help="Serve without tokens (loopback only).")
    ] = False,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Sandbox workers (default: CPUs + 1).")
    ] = None,
    max_body_mb: Annotated[float, typer.Option(help="Largest request body in MB.")] = 16.0,
    queue: Annotated[
        int, typer.Option(min=1, help="Work units admitted at once; past it: 429.")
    ] = 256,
    deadline: Annotated[
        float, typer.Option(help="The longest a request may run, in seconds.")
    ] = 60.0,
    session_ttl: Annotated[
        float, typer.Option(help="Seconds before an idle session expires.")
    ] = 600.0,
    max_sessions: Annotated[
        int,
        typer.Option(
            min=1, help="Sessions open at once (every protocol's together); past it: 429."
        ),
    ] = 256,
    compat: Annotated[
        list[str] | None,
        typer.Option(
            "--compat",
            help="Turn on a trainer protocol without tokens: sandbox-fusion, openrlhf, slime, "
            "nemo-gym, openenv (repeat for more).",
        ),
    ] = None,
    drain_timeout: Annotated[
        float, typer.Option(help="SIGTERM: seconds work in flight may take to finish.")
    ] = 120.0,
    ray: Annotated[
        str | None,
        typer.Option(
            "--ray",
            help="Verify on a Ray pool of sandbox actors: a cluster's ADDRESS, or 'local'.",
        ),
    ] = None,
    ray_actors: Annotated[int, typer.Option(min=1, help="Sandbox actors in the --ray pool.")] = 2,
) -> None:
    """Serve referee's API (and trainers' protocols with --compat) over HTTP until SIGTERM.

    Routes: GET /health, GET /metrics, POST /v1/verify, POST /v1/exec, /v1/sessions/...
    (see referee.service.app)."""
    require_extra("serve", needed_for="referee serve")
    from referee.service.compat import compat_warnings
    from referee.service.config import ServeConfig
    from referee.service.server import bind
    from referee.service.server import serve as run_server
    from referee.service.state import Service

    config = ServeConfig(
        tasks=tuple(tasks),
        host=host,
        port=port,
        tokens_file=str(tokens) if tokens is not None else None,
        no_auth=no_auth,
        workers=workers,
        max_body_mb=max_body_mb,
        queue=queue,
        deadline_cap_s=deadline,
        session_ttl_s=session_ttl,
        max_sessions=max_sessions,
        compat=tuple(compat or ()),
        drain_timeout_s=drain_timeout,
        ray=ray,
        ray_actors=ray_actors,
    )
    bind(host, port).close()  # a busy port fails now, before the tasks and sandbox load
    service = Service.start(config, remote=_ray_pool(config) if ray is not None else None)
    for line in compat_warnings(config.compat):
        err.print(f"[yellow]referee: {line}[/]", highlight=False)

    def announce(url: str) -> None:
        auth = "no auth (loopback)" if no_auth else f"tokens from {tokens}"
        if ray is not None:
            auth += f", verifying on {ray_actors} Ray sandbox actors ({ray})"
        err.print(
            f"referee: serving {len(service.engine.tasks)} tasks at {url} with "
            f"{service.engine.workers} sandbox workers, {auth} (SIGTERM drains and stops)",
            markup=False,
            highlight=False,
        )

    run_server(service, on_listening=announce)


def _ray_pool(config: ServeConfig) -> Callable[[list[Task]], RemoteVerifier]:
    """``--ray``: the pool of sandbox actors that verifies the loaded tasks. Made here, on top of
    both: the cluster's actors hold the service's engine, so the service does not import it."""

    def make(tasks: list[Task]) -> RemoteVerifier:
        from referee.cluster import SandboxPool

        return SandboxPool(
            tasks,
            actors=config.ray_actors,
            address=config.ray,
            deadline_cap_s=config.deadline_cap_s,
        )

    return make


def register(app: typer.Typer) -> None:
    """Add ``referee serve`` to ``app``."""
    app.command()(serve)
