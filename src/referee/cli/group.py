"""The exit-code policy, in one place: how an error becomes one line on stderr and a status.

One policy for every command (:func:`referee.errors.exit_code_for`, applied once, here, by the
app's command group; ``exec`` has a table of its own and relays the program's status, as
``timeout`` and ``docker run`` do: :func:`referee.errors.exec_exit_status`, 125 for its own
failures): 0 when referee did its job; 2 for what the user can fix: a bad argument or setting
(``ConfigError``, and out-of-range numeric options), a bad task file (``TaskError``), a missing
sandbox layer (``SandboxUnavailable``), a run, trajectory or store that is not there
(``NotFoundError``); 1 for any other failure of referee or its infrastructure
(``SandboxError``, ``VerifierError``, ``StoreError``, ``PolicyError``), and for a verdict the
command exists to give (an exploit got through, a split leaks). A reader that closed the pipe
(``referee tasks list F | head -1``) ends the command quietly, with 0. An error prints one
plain-text line on stderr, ``referee: <message>``, the message naming the fix.
"""

from __future__ import annotations

import re
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from referee.cli.console import say_error
from referee.errors import ConfigError, RefereeError, SandboxError, exit_code_for


class RefereeGroup(TyperGroup):
    """The one place a :class:`RefereeError`, or the parser's refusal of the command line,
    becomes one line on stderr and an exit code (the command's table:
    :func:`referee.errors.exit_code_for`; a usage error counts as a ``ConfigError``)."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, cmd, rest = super().resolve_command(ctx, args)
        ctx.meta["referee.command"] = name
        return name, cmd, rest

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        # `referee --bogus`: refused before any command is invoked.
        try:
            return super().parse_args(ctx, args)
        except typer.TyperException as e:
            code = report(ctx, e)
            if code is None:
                raise
            raise typer.Exit(code) from None

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # `referee tasks list F | head -1`: the reader had enough
            silence_stdout()
            raise typer.Exit(0) from None
        except (RefereeError, typer.TyperException) as e:
            code = report(ctx, e)
            if code is None:
                raise
            raise typer.Exit(code) from None


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what is still
    buffered for a reader that has gone does not fail again (Python's recipe for SIGPIPE)."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test's capture): nothing to flush
        pass
    finally:
        os.close(devnull)


def report(ctx: Any, e: Exception) -> int | None:
    """Say what went wrong in one line and return the exit code; None for what is not an error
    of referee or of the command line (the help a group prints when called without arguments),
    which Click handles as before."""
    command = ctx.meta.get("referee.command")
    if isinstance(e, RefereeError):
        message = str(e)
        if isinstance(e, SandboxError) and exit_code_for(e) == 1:
            message = f"sandbox failure (not the program's fault): {message}"
        say_error(message)
        return exit_code_for(e, command)
    usage = usage_line(e)
    if usage is None:
        return None
    say_error(usage)
    # The parser's refusals count as the command's own failures: `referee exec --timeout x`
    # is not a program that exited 2.
    return exit_code_for(ConfigError(usage), command)


def usage_line(e: Exception) -> str | None:
    """Click's refusal of a command line (an unknown command or option, a value that does not
    parse or is out of range, a missing option: its ``UsageError``, exit code 2) as one line
    naming the help to read, instead of Click's boxed usage panel; None for anything else."""
    if not isinstance(e, typer.TyperException) or e.exit_code != 2:
        return None
    if type(e).__name__ == "NoArgsIsHelpError":  # the help, asked for by giving no arguments
        return None  # (matched by name, as typer does: the class is not exported)
    ctx = getattr(e, "ctx", None)
    where = ctx.command_path if ctx is not None else "referee"
    message = " ".join(e.format_message().split())
    message = re.sub(r"\. Did you mean (.+)\?$", r" (did you mean \1?)", message).rstrip(".")
    return f"{message}; see {where} --help"
