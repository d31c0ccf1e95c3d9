"""DeepMind CodeContests rows as program tasks (``referee tasks import codecontests FILE``).

A row: ``name``, ``description``, ``public_tests``/``private_tests``/``generated_tests``
(``{"input": [...], "output": [...]}``), ``solutions`` (``{"language": [int], "solution":
[str]}``; languages 1 Python 2, 2 C++, 3 Python 3, 4 Java), ``time_limit`` (``{"seconds",
"nanos"}`` or null), ``memory_limit_bytes``, ``difficulty`` (an enum) and ``cf_rating``.

Every test (public, private, generated) is a hidden case; the public ones are the prompt's
examples too. The reference is the first solution in Python 3, else C++, else Java (Python 2 is
not one of the seven languages). Ids are ``codecontests/<name>``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from referee.tasks.imports.program import program_task
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.model import Difficulty, Task

__all__ = ["LANGUAGES", "codecontests_tasks"]

#: CodeContests' language codes, and the name referee gives those it can run.
LANGUAGES: dict[int, str] = {3: "python", 2: "cpp", 4: "java"}
_PREFERENCE = (3, 2, 4)
# The CodeContests difficulty enum: 1-5 easy..hardest; 7-28 Codeforces letters A..V.
_LEVELS = {1: 0.2, 2: 0.4, 3: 0.6, 4: 0.8, 5: 0.95}
_TEST_FIELDS = ("public_tests", "private_tests", "generated_tests")


def codecontests_tasks(
    split: str, path: str | Path, on_bad_row: OnBadRow | None = None
) -> Iterator[Task]:
    """The problems of a CodeContests file (Parquet as published, JSONL or JSON)."""
    for row in iter_rows(path, on_bad_row):
        with skipping(on_bad_row):
            yield _task(row, split)


def _tests(row: Row, field: str) -> list[dict[str, str]]:
    value = row.data.get(field)
    if value is None:
        return []
    if not isinstance(value, Mapping):
        raise row.error(field, "expected {input: [...], output: [...]}")
    inputs, outputs = value.get("input") or [], value.get("output") or []
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise row.error(field, "'input' and 'output' must be lists of texts")
    if len(inputs) != len(outputs):
        raise row.error(field, f"{len(inputs)} inputs but {len(outputs)} outputs")
    if not all(isinstance(x, str) for x in [*inputs, *outputs]):
        raise row.error(field, "every input and output is a text")
    return [{"input": i, "output": o} for i, o in zip(inputs, outputs, strict=True)]


def _reference(row: Row) -> dict[str, str] | None:
    value = row.data.get("solutions")
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise row.error("solutions", "expected {language: [codes], solution: [texts]}")
    languages, sources = value.get("language") or [], value.get("solution") or []
    if not isinstance(languages, list) or not isinstance(sources, list):
        raise row.error("solutions", "'language' and 'solution' must be lists")
    if len(languages) != len(sources):
        raise row.error("solutions", f"{len(languages)} languages but {len(sources)} solutions")
    for code in _PREFERENCE:
        for lang, src in zip(languages, sources, strict=True):
            if lang == code and isinstance(src, str) and src.strip():
                return {"language": LANGUAGES[code], "source": src}
    return None


def _time_limit(row: Row) -> float | None:
    value: Any = row.data.get("time_limit")
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise row.error("time_limit", "expected {seconds, nanos} or null")
    seconds = (value.get("seconds") or 0) + (value.get("nanos") or 0) / 1e9
    return float(seconds) or None


def _memory_mb(row: Row) -> int | None:
    value = row.data.get("memory_limit_bytes")
    if value is None or value == 0:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise row.error("memory_limit_bytes", f"expected a number of bytes, got {value!r}")
    return max(1, value // 2**20)


def _difficulty(row: Row) -> Difficulty:
    rating = row.data.get("cf_rating")
    level = row.data.get("difficulty")
    features: dict[str, float] = {}
    estimate = None
    if isinstance(rating, int) and rating > 0:
        features["cf_rating"] = float(rating)
        estimate = min(1.0, max(0.0, (rating - 800) / 2700))  # Codeforces 800..3500
    elif isinstance(level, int) and level in _LEVELS:
        estimate = _LEVELS[level]
    return Difficulty(estimate=estimate, features=features)


def _task(row: Row, split: str) -> Task:
    name = row.get("name", str)
    description = row.get("description", str)
    public = _tests(row, "public_tests")
    cases = [c for field in _TEST_FIELDS for c in _tests(row, field)]
    if not cases:
        raise row.error("private_tests", "no tests at all (public, private or generated)")
    return program_task(
        name=f"codecontests/{name.strip()}",
        source="codecontests",
        statement=description,
        cases=cases,
        split=split,
        examples=public,
        time_limit_s=_time_limit(row),
        memory_mb=_memory_mb(row),
        reference=_reference(row),
        difficulty=_difficulty(row),
        generator="referee.tasks.imports.codecontests",
    )
