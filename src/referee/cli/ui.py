"""``referee ui``: the dashboard of a run folder, served."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from referee.cli.console import err
from referee.cli.files import track_store
from referee.optional import require_extra


def ui(
    run: Annotated[Path, typer.Option("--run", help="The run folder (holds track.sqlite).")],
    port: Annotated[int, typer.Option(min=1, max=65535, help="The port to listen on.")] = 8765,
    host: Annotated[
        str, typer.Option(help="The address to listen on (loopback: this machine only).")
    ] = "127.0.0.1",
) -> None:
    """Serve the dashboard of a run folder: runs, curves, trajectories, the audit queue."""
    require_extra("ui", needed_for="referee ui")
    from referee.ui.server import serve

    track_store(run).close()  # a wrong --run fails here, with the fix, not in the browser
    if host not in ("127.0.0.1", "localhost", "::1"):
        err.print(
            f"[yellow]referee: the dashboard has no login: anyone who reaches {host}:{port} "
            "can read these runs and label trajectories[/]"
        )
    serve(
        run,
        host=host,
        port=port,
        on_listening=lambda url: err.print(
            f"referee: dashboard of {run} at {url} (Ctrl-C stops it)"
        ),
    )


def register(app: typer.Typer) -> None:
    """Add ``referee ui`` to ``app``."""
    app.command()(ui)
