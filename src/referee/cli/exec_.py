"""``referee exec``: a command or a Python file, run once in the sandbox."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from referee.cli.console import err
from referee.cli.files import read_bytes
from referee.errors import ConfigError, exec_exit_status


def _parse_files(specs: list[str]) -> dict[str, bytes]:
    from referee.sandbox.paths import safe_relpath

    files: dict[str, bytes] = {}
    for spec in specs:
        dest, sep, src = spec.partition("=")
        if not sep or not dest or not src:
            raise ConfigError(
                f"--file takes DEST=SRC (a workspace path and a host file), got {spec!r}"
            )
        safe_relpath(dest)
        try:
            files[dest] = Path(src).read_bytes()
        except OSError as e:
            raise ConfigError(f"--file {spec!r}: cannot read {src!r}: {e.strerror}") from e
    return files


EXEC_HELP = """Run a command (after --) or a Python file (--python) in the sandbox.

Exit status, as timeout, docker run and bwrap give it: the program's own exit status; 128+N
when signal N ended it; 124 when it ran past --timeout; 126 when the command could not be
invoked, 127 when it was not found. referee's own failures (a bad option, a missing or failing
sandbox) exit 125, with one line on stderr. --json prints the whole result on stdout and exits
with the same status.
"""


def exec_(
    cmd: Annotated[list[str] | None, typer.Argument(help="The command and its arguments.")] = None,
    python: Annotated[
        Path | None, typer.Option("--python", help="Run this Python file on the fast path.")
    ] = None,
    # --timeout and --memory are checked here, by their flags; Limits checks them again.
    timeout: Annotated[float, typer.Option(help="Wall-clock limit in seconds.")] = 10.0,
    memory: Annotated[int, typer.Option(help="Memory limit in MB.")] = 512,
    file: Annotated[
        list[str] | None, typer.Option("--file", help="DEST=SRC: put host file SRC at DEST.")
    ] = None,
    stdin: Annotated[Path | None, typer.Option(help="File to feed on standard input.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON ExecResult.")] = False,
    backend: Annotated[str, typer.Option(help="bwrap (isolated) or local (UNSAFE).")] = "bwrap",
) -> None:
    from referee.sandbox import Limits, Sandbox

    if bool(cmd) == bool(python):
        raise ConfigError(
            "give either a command after `--` or `--python FILE`, not both or neither"
        )
    if not 0 < timeout < float("inf"):  # also refuses nan
        raise ConfigError(f"--timeout must be a number of seconds above 0, got {timeout:g}")
    if memory < 16:
        raise ConfigError(f"--memory must be at least 16 (MB), got {memory}")
    limits = Limits(timeout_s=timeout, memory_mb=memory)
    files = _parse_files(file or [])
    data = read_bytes("--stdin", stdin) if stdin is not None else None
    source = read_bytes("--python", python) if python is not None else None
    with Sandbox(backend=backend, python_workers=1) as sb:  # type: ignore[arg-type]
        if source is not None and python is not None:
            result = sb.run_python(source, name=python.name, files=files, stdin=data, limits=limits)
        else:
            result = sb.run(list(cmd or []), files=files, stdin=data, limits=limits)
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
    else:
        sys.stdout.write(result.stdout)
        sys.stderr.write(result.stderr)
        # Not markup: the summary's "[timeout]" is text.
        err.print(f"referee: {result.summary()}", style="dim", markup=False, highlight=False)
    raise typer.Exit(exec_exit_status(result))


def register(app: typer.Typer) -> None:
    """Add ``referee exec`` to ``app``."""
    app.command("exec", help=EXEC_HELP, context_settings={"allow_interspersed_args": False})(exec_)
