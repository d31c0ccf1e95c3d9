"""Where the commands write besides their result: stderr (messages, progress)."""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

# rich (~25 ms of imports) loads at the first message, not with the command line: a one-shot
# `referee verify --json` prints its first verdict before it writes anything on stderr.


class _Stderr:
    """rich's ``Console`` on stderr, made at its first use; every attribute is the console's
    (``err.print(...)``), and :attr:`console` is the console itself (``Progress(console=...)``
    wants the real one)."""

    _made: Console | None = None

    @property
    def console(self) -> Console:
        if self._made is None:
            from rich.console import Console

            # soft_wrap: messages stay on one line, for grep and logs
            self._made = Console(stderr=True, soft_wrap=True)
        return self._made

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console, name)


err = _Stderr()


def Out(**kwargs: Any) -> Console:  # a class in all but name: `Out(soft_wrap=True)`
    """A console on stdout, for a command's result. When the reader closes the pipe early
    (`referee doctor | head -1`) rich would exit 1 (an infrastructure failure, by the exit-code
    policy); this one raises BrokenPipeError instead, which the command group ends quietly
    with 0."""
    return _out_class()(**kwargs)


@functools.cache
def _out_class() -> type[Console]:
    from rich.console import Console

    class _Out(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return _Out


def print_json_lines(objects: Iterable[Mapping[str, Any]]) -> None:
    """A listing's ``--json``: one JSON object per line on stdout (docs/getting-started.md)."""
    for obj in objects:
        print(json.dumps(obj))


def say_error(message: str) -> None:
    """``referee: <message>`` on stderr."""
    from rich.markup import escape

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
