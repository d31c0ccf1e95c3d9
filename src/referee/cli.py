"""The ``referee`` command line: each command a thin call into the library.

Exit codes: 0 when referee did its job (whatever the sandboxed program did), 2 for bad arguments
or a missing dependency (the message names the fix), 1 for an infrastructure failure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from referee.errors import ConfigError, RefereeError, SandboxError, SandboxUnavailable

app = typer.Typer(
    name="referee",
    help="Post-training on verifiable tasks: sandbox, tasks, verifiers, loop, tracking.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
err = Console(stderr=True)


def _fail(message: str, code: int = 2) -> typer.Exit:
    err.print(f"[bold red]referee:[/] {message}")
    return typer.Exit(code)


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


@app.command("exec", context_settings={"allow_interspersed_args": False})
def exec_(
    cmd: Annotated[list[str] | None, typer.Argument(help="The command and its arguments.")] = None,
    python: Annotated[
        Path | None, typer.Option("--python", help="Run this Python file on the fast path.")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Wall-clock limit in seconds.")] = 10.0,
    memory: Annotated[int, typer.Option(help="Memory limit in MB.")] = 512,
    file: Annotated[
        list[str] | None, typer.Option("--file", help="DEST=SRC: put host file SRC at DEST.")
    ] = None,
    stdin: Annotated[Path | None, typer.Option(help="File to feed on standard input.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON ExecResult.")] = False,
    backend: Annotated[str, typer.Option(help="bwrap (isolated) or local (UNSAFE).")] = "bwrap",
) -> None:
    """Run a command (after --) or a Python file (--python) in the sandbox."""
    from referee.sandbox import Limits, Sandbox

    try:
        if bool(cmd) == bool(python):
            raise ConfigError(
                "give either a command after `--` or `--python FILE`, not both or neither"
            )
        limits = Limits(timeout_s=timeout, memory_mb=memory)
        files = _parse_files(file or [])
        data = None
        if stdin is not None:
            try:
                data = stdin.read_bytes()
            except OSError as e:
                raise ConfigError(f"--stdin: cannot read {str(stdin)!r}: {e.strerror}") from e
        source = None
        if python is not None:
            try:
                source = python.read_bytes()
            except OSError as e:
                raise ConfigError(f"--python: cannot read {str(python)!r}: {e.strerror}") from e
        with Sandbox(backend=backend, python_workers=1) as sb:  # type: ignore[arg-type]
            if source is not None:
                assert python is not None
                result = sb.run_python(
                    source, name=python.name, files=files, stdin=data, limits=limits
                )
            else:
                result = sb.run(list(cmd or []), files=files, stdin=data, limits=limits)
    except (ConfigError, SandboxUnavailable) as e:
        raise _fail(str(e), 2) from None
    except SandboxError as e:
        raise _fail(f"sandbox failure (not the program's fault): {e}", 1) from None
    except RefereeError as e:
        raise _fail(str(e), 1) from None
    if as_json:
        sys.stdout.write(result.model_dump_json() + "\n")
        return
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    err.print(f"[dim]referee: {result.summary()}[/]")


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show which isolation layers this machine provides."""
    from referee.sandbox import Sandbox

    try:
        with Sandbox(python_workers=1) as sb:
            layers = sb.isolation()
            probe = sb.run_python("print('ok')")
    except (SandboxUnavailable, SandboxError) as e:
        raise _fail(str(e), 2) from None
    info = {"layers": layers, "fast_path_ok": probe.stdout == "ok\n", "probe": probe.summary()}
    if as_json:
        print(json.dumps(info))
        return
    for layer in layers:
        err.print(f"[green]✓[/] {layer}")
    err.print(f"fast path: {probe.summary()}")


@app.command()
def demo() -> None:
    """Demonstrate the sandbox: real tasks verified, hostile programs contained."""
    from referee.demo import run_demo

    try:
        raise typer.Exit(run_demo(err))
    except (SandboxUnavailable, ConfigError) as e:
        raise _fail(str(e), 2) from None


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    app()
