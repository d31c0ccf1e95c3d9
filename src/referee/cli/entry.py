"""The Typer app every command registers on, and the console entry point that runs it."""

from __future__ import annotations

import copy
import sys

import typer
import typer.main

from referee.cli.group import RefereeGroup, silence_stdout

app = typer.Typer(
    name="referee",
    help="Post-training on verifiable tasks: sandbox, tasks, verifiers, loop, tracking.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=RefereeGroup,
)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"referee {version('referee')}")
        raise typer.Exit()


@app.callback()
def _options(
    version: bool = typer.Option(
        False,
        "--version",
        help="Print referee's version and exit.",
        callback=_print_version,
        is_eager=True,
    ),
) -> None:
    """The options of ``referee`` itself (before any command)."""


def app_for(args: list[str]) -> typer.Typer:
    """The app to parse ``args`` with: ``app`` itself, or, when ``args`` start with the name of
    one of its commands or groups, a copy of it that registers only that one. Typer turns every
    registered command into a parser before it parses anything (each option's annotation
    evaluated: ~45 ms for all of them, on every start); running one command needs only its own.
    Help, a typo (whose suggestions need every name) and options before the command get the
    whole app."""
    if not args:
        return app
    one = copy.copy(app)
    one.registered_commands = [
        c
        for c in app.registered_commands
        if c.callback is not None
        and (c.name or typer.main.get_command_name(c.callback.__name__)) == args[0]
    ]
    one.registered_groups = [g for g in app.registered_groups if g.name == args[0]]
    if len(one.registered_commands) + len(one.registered_groups) != 1:
        return app
    return one


def main() -> None:
    """The command line (``python -m referee.cli``; ``referee`` and ``python -m referee`` come
    here through :func:`referee.__main__.main`, which may start ``verify``'s sandbox first)."""
    one = app_for(sys.argv[1:])
    try:
        if one is app:
            app()
        else:
            # Always a group, as the whole app is (typer makes an app of one command that
            # command itself, which would take the command's name for an argument).
            typer.main.get_group(one)()
    except BrokenPipeError:  # closed while Click wrote (help piped into `head`)
        silence_stdout()
        sys.exit(0)
