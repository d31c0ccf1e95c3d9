"""Where the commands write besides their result: stderr (messages, progress)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape

err = Console(stderr=True, soft_wrap=True)  # messages stay on one line, for grep and logs


class Out(Console):
    """A console on stdout, for a command's result. When the reader closes the pipe early
    (`referee doctor | head -1`) rich would exit 1 (an infrastructure failure, by the exit-code
    policy); this raises BrokenPipeError instead, which the command group ends quietly with 0."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def print_json_lines(objects: Iterable[Mapping[str, Any]]) -> None:
    """A listing's ``--json``: one JSON object per line on stdout (docs/getting-started.md)."""
    for obj in objects:
        print(json.dumps(obj))


def say_error(message: str) -> None:
    """``referee: <message>`` on stderr."""
    # The message is plain text: brackets in it ("local:PATH[#DEVICE]") are not markup.
    err.print(f"[bold red]referee:[/] {escape(message)}")


def progress_printer(what: str) -> Callable[[int, int], None]:
    """A progress callback ``(done, total)`` for stderr: one line per call, rewritten in place
    on a terminal, each on its own line when piped (a log keeps them)."""
    tty = sys.stderr.isatty()
    t0 = time.perf_counter()

    def show(done: int, total: int) -> None:
        line = f"{done}/{total} {what} ({time.perf_counter() - t0:.0f}s)"
        if tty:
            sys.stderr.write("\r" + line + ("\n" if done >= total else ""))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    return show
