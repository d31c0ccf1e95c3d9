"""``referee demo``: the sandbox on real tasks and against hostile programs."""

from __future__ import annotations

import typer

from referee.cli.console import Out


def demo() -> None:
    """Demonstrate the sandbox: real tasks verified, hostile programs contained (on stdout)."""
    from referee.demo import run_demo

    raise typer.Exit(run_demo(Out()))


def register(app: typer.Typer) -> None:
    """Add ``referee demo`` to ``app``."""
    app.command()(demo)
