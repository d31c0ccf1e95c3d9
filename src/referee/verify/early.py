"""The sandbox of a one-shot ``referee verify``, started before the command line is parsed.

A worker's start is mostly waiting for other processes (bubblewrap's namespaces and mounts, the
sandbox's interpreter, the fork server's own start: ~0.1 s), and a one-shot command pays it
before its first verdict. ``python -m referee`` and the ``referee`` script (:mod:`referee.__main__`)
call :func:`start` for a plain ``referee verify`` before they import the command line's
libraries (typer, rich, the parser of ``verify``: another ~0.1 s), so the two overlap;
``referee verify`` then calls :func:`take` with the options it parsed and gets that sandbox, the
very one it would have made (:func:`~referee.verify.function.harness_sandbox` with the grader's
packages), or ``None`` when it was made for other options (it is closed) or not at all.

Nothing here decides anything: a sandbox that cannot start is not reported here (``verify``
makes its own and reports the error as before), and one never taken is closed at exit.

:func:`judge_first` goes one step further: on that sandbox it judges the samples file's first
sample (:mod:`referee.verify.first`, read without pydantic or the task model) and, with
``--json``, prints its verdict before the command line's libraries load; ``verify`` takes it
with :func:`take_first` for its first pair instead of judging that pair again.

>>> take(None) is None       # nothing was started in this process
True
"""

from __future__ import annotations

import atexit
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from referee.sandbox import Sandbox
    from referee.verify.first import FirstVerdict

__all__ = ["judge_first", "plain_verify_workers", "start", "take", "take_first"]

_lock = threading.Lock()
_held: tuple[int | None, Sandbox] | None = None
_first: FirstVerdict | None = None


def plain_verify_workers(argv: list[str]) -> tuple[bool, int | None]:
    """Whether ``argv`` (without the program's name) is a ``referee verify`` that judges here
    (no ``--ray``, no help), and its ``--workers`` (None when not given). Anything this cannot
    read for sure (a malformed ``--workers``) is not plain: the command parses it as before.

    >>> plain_verify_workers(["verify", "--tasks", "t.jsonl", "--workers", "2"])
    (True, 2)
    >>> plain_verify_workers(["verify", "--ray", "local"])[0], plain_verify_workers([])[0]
    (False, False)
    """
    if not argv or argv[0] != "verify":
        return False, None
    workers: int | None = None
    rest = argv[1:]
    for i, arg in enumerate(rest):
        if arg in ("--help", "-h") or arg == "--ray" or arg.startswith("--ray="):
            return False, None
        value = None
        if arg == "--workers":
            value = rest[i + 1] if i + 1 < len(rest) else ""
        elif arg.startswith("--workers="):
            value = arg.split("=", 1)[1]
        if value is not None:
            if not value.isdigit() or int(value) < 1:
                return False, None
            workers = int(value)
    return True, workers


def start(workers: int | None) -> None:
    """Start ``referee verify``'s sandbox for ``--workers workers`` now, its workers in the
    background; a failure to start is left for ``verify`` to meet (and report) itself."""
    global _held
    from referee.errors import RefereeError
    from referee.verify.function import harness_sandbox
    from referee.verify.repo_run import GRADER_PACKAGES

    try:
        sandbox = harness_sandbox(python_workers=workers, python_packages=GRADER_PACKAGES)
        sandbox.warm()
    except RefereeError:
        return
    with _lock:
        if _held is not None:  # started twice: keep the first
            sandbox.close()
            return
        _held = (workers, sandbox)
    atexit.register(_close_untaken)


def judge_first(argv: list[str]) -> None:
    """Judge the first sample of the ``referee verify`` command line ``argv`` on the sandbox
    :func:`start` made, and print its verdict when ``--json`` is given; nothing when there is
    no such sandbox or :func:`~referee.verify.first.first_sample` cannot vouch for the sample
    (the command then judges it itself)."""
    global _first
    with _lock:
        held = _held
    if held is None:
        return
    from referee.verify import first

    paths = first.paths_of(argv)
    sample = first.first_sample(paths[0], paths[1]) if paths is not None else None
    if paths is None or sample is None:
        return
    import json

    try:
        verdict = first.judge_first(sample, held[1])
    except Exception:  # a fault of this shortcut: the command judges the sample itself
        return
    if paths[2]:
        print(json.dumps(verdict.model_dump(mode="json")), flush=True)
    with _lock:
        _first = first.FirstVerdict(sample.id, sample.completion, verdict)


def take_first(task_id: str, completion: str) -> FirstVerdict | None:
    """The verdict :func:`judge_first` made, when it was of the sample (``task_id``,
    ``completion``) the command reads first; else None (and it is dropped)."""
    global _first
    with _lock:
        made, _first = _first, None
    if made is None or (made.task_id, made.completion) != (task_id, completion):
        return None
    return made


def take(workers: int | None) -> Sandbox | None:
    """The sandbox :func:`start` made for ``workers``, now the caller's to close; None when
    none was made, or it was made for other options (then it is closed here)."""
    global _held
    with _lock:
        held, _held = _held, None
    if held is None:
        return None
    if held[0] != workers:
        held[1].close()
        return None
    return held[1]


def _close_untaken() -> None:
    # The command ended before verify took the sandbox (a usage error, a bad file): its
    # workers and scratch space go now, not when the interpreter's threads are torn down.
    global _held
    with _lock:
        held, _held = _held, None
    if held is not None:
        held[1].close()
