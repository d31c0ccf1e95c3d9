"""The first verdict of a one-shot ``referee verify``, judged before the command line loads.

A one-shot ``referee verify --json`` on a busy machine spent most of the time to its first
verdict importing libraries that judging one sample does not need: pydantic (its import and
the first model built, about 0.1 CPU-second, 0.3 s of wall time at load 4), typer and rich
(bench/RESULTS.md §52). :func:`judge_first` reads the samples file's first sample and its task
straight from the two files, judges it with the :class:`~referee.verify.function.
FunctionVerifier` on the sandbox :mod:`referee.verify.early` started, exactly as the command's
:class:`~referee.verify.dispatch.VerifierSet` would (the same verifier, the same metering),
and prints it; the command then reads both files as always and takes this verdict for its
first pair (:func:`referee.verify.early.take_first`) instead of judging it again. The output
is the same verdicts in the same order.

It judges only what it can vouch for: a local task file, a first sample of a ``function``
task that has no ``language``, and a task line that is JSON of a known schema version whose
content hash matches (the checks the full reader makes of it that decide what is judged).
Anything else returns None, and the command judges the first sample itself, as before.
One difference remains, by design: when a *later* line of either file is bad, the command
still refuses the files (exit 2, naming the line), but after this first verdict was printed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from referee.sandbox import Sandbox
    from referee.verify.verdict import Verdict

__all__ = ["FirstSample", "FirstVerdict", "first_sample", "judge_first", "paths_of"]

#: The task schema versions whose hash this module knows how to compute (the task model's).
_VERSIONS = (1, 2)


@dataclass(frozen=True)
class FirstSample:
    """The first sample of a samples file and its task, as read from the raw files: what
    :class:`~referee.verify.function.FunctionVerifier` reads of a task (``id``, ``payload``,
    ``hidden``)."""

    id: str
    payload: dict[str, Any]
    hidden: dict[str, Any]
    completion: str


@dataclass(frozen=True)
class FirstVerdict:
    """A first sample's verdict, judged before the command line loaded."""

    task_id: str
    completion: str
    verdict: Verdict


def paths_of(argv: list[str]) -> tuple[str, str, bool] | None:
    """``--tasks``, ``--samples`` and whether ``--json`` was given, from a ``referee verify``
    command line (without the program's name); None when either path is missing or given
    twice.

    >>> paths_of(["verify", "--tasks", "t.jsonl", "--samples=s.jsonl", "--json"])
    ('t.jsonl', 's.jsonl', True)
    >>> paths_of(["verify", "--tasks", "t.jsonl"]) is None
    True
    """
    found: dict[str, list[str]] = {"--tasks": [], "--samples": []}
    as_json = False
    rest = argv[1:]
    for i, arg in enumerate(rest):
        if arg == "--json":
            as_json = True
        for name, values in found.items():
            if arg == name and i + 1 < len(rest):
                values.append(rest[i + 1])
            elif arg.startswith(name + "="):
                values.append(arg.split("=", 1)[1])
    if any(len(v) != 1 for v in found.values()):
        return None
    return found["--tasks"][0], found["--samples"][0], as_json


def first_sample(tasks: str, samples: str) -> FirstSample | None:
    """The first sample of ``samples`` with its task from ``tasks``, when both are what this
    module judges (see the module docstring); else None."""
    if "://" in tasks:
        return None
    try:
        sample = _first_line(Path(samples))
        if not isinstance(sample, dict) or "language" in sample:
            return None
        task_id, completion = sample.get("task_id"), sample.get("completion")
        if not isinstance(task_id, str) or not isinstance(completion, str):
            return None
        task = _task_line(Path(tasks), task_id)
    except (OSError, ValueError):
        return None
    if task is None or not _vouched(task):
        return None
    return FirstSample(task_id, task.get("payload", {}), task.get("hidden", {}), completion)


def judge_first(sample: FirstSample, sandbox: Sandbox) -> Verdict:
    """``sample``'s verdict from a :class:`FunctionVerifier` on ``sandbox``, metered as a
    :class:`~referee.verify.dispatch.VerifierSet` meters its verdicts."""
    from referee.sandbox.metering import metering
    from referee.verify.function import FunctionVerifier

    verifier = FunctionVerifier(sandbox)  # not its own sandbox: closing it leaves this one
    with metering() as meter:
        verdict = verifier.verify(sample, sample.completion)
    return verdict.model_copy(update={"sandbox": meter.usage()})


def _first_line(path: Path) -> Any:
    # Split as referee.verify.samples.read_samples splits, so that "first" means the same.
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            return json.loads(line)
    return None


def _task_line(path: Path, task_id: str) -> dict[str, Any] | None:
    """The task ``task_id`` of the file, parsed; None when it is not there. Only lines that
    name the id are parsed (its JSON text is in any line that holds it)."""
    needle = json.dumps(task_id)[1:-1]
    with path.open(encoding="utf-8") as f:
        for line in f:
            if needle not in line:
                continue
            data = json.loads(line)
            if isinstance(data, dict) and data.get("id") == task_id:
                return data
    return None


def _vouched(task: dict[str, Any]) -> bool:
    """Whether the full reader reads ``task`` as this module would judge it: a function task
    of a known schema version, payload and hidden data as objects, its content hash intact."""
    version = task.get("schema_version", 1)
    if type(version) is not int or version not in _VERSIONS:
        return False
    if task.get("kind") != "function" or task.get("answer_format", "code") != "code":
        return False
    payload, hidden, prompt = task.get("payload", {}), task.get("hidden", {}), task.get("prompt")
    if not isinstance(payload, dict) or not isinstance(hidden, dict):
        return False
    if not isinstance(prompt, list) or not all(
        isinstance(m, dict) and set(m) == {"role", "content"} for m in prompt
    ):
        return False
    expected = task.get("content_hash", "")
    if not isinstance(expected, str):
        return False
    from referee.tasks.content_hash import content_hash

    actual = content_hash(
        task.get("domain", "code"),
        [{"role": m["role"], "content": m["content"]} for m in prompt],
        payload,
        hidden,
        task.get("answer_format", "code"),
        "function" if version >= 2 else None,
    )
    return not expected or actual == expected
