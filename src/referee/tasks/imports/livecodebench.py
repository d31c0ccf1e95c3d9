"""LiveCodeBench rows as program tasks (``referee tasks import livecodebench FILE``).

A row (``code_generation_lite``): ``question_id``, ``question_title``, ``question_content``,
``platform``, ``contest_date``, ``starter_code``, ``difficulty`` (easy|medium|hard),
``public_test_cases`` (JSON text: a list of ``{"input", "output", "testtype": "stdin" |
"functional"}``), ``private_test_cases`` (the same list as JSON text, pickled, compressed with
zlib and base64-encoded; older releases store the JSON text itself) and ``metadata`` (JSON text,
``{"func_name": ...}`` for functional problems: LeetCode's ``class Solution`` methods).

Unpickling runs code a pickle asks for, and these files come from elsewhere: the private cases
are read by :func:`decode_private_cases` with an unpickler that refuses every global (no class,
no function can be named), so only plain strings, lists and dicts come out.

Functional cases hold their arguments one JSON value a line; they become the schema's argument
list (:func:`~referee.tasks.imports.program.functional_case`). Ids: ``livecodebench/<question_id>``.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import pickle
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

from referee.tasks.imports.program import difficulty_of, listed_cases, program_task
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.model import Task

__all__ = ["UnsafePickle", "decode_private_cases", "livecodebench_tasks"]

_MAX_DECOMPRESSED = 1 << 30  # 1 GiB: a zlib bomb stops here


class UnsafePickle(pickle.UnpicklingError):
    """A pickle that names a global (a class or function), which plain data never needs."""


class _DataOnly(pickle.Unpickler):
    """Strings, numbers, lists, dicts, tuples: what pickle builds without naming a global.
    LiveCodeBench pickles a ``str`` (the JSON text), so nothing more is ever needed."""

    def find_class(self, module: str, name: str) -> NoReturn:
        raise UnsafePickle(f"the pickle asks for {module}.{name}; only plain data is allowed")


def decode_private_cases(text: str) -> Any:
    """LiveCodeBench's ``private_test_cases``: JSON text, or base64 → zlib → pickle → JSON
    text. Raises ``ValueError`` (with why) for anything else, :class:`UnsafePickle` for a
    pickle that would run code."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError):
        raise ValueError("neither JSON nor base64 text") from None
    try:
        z = zlib.decompressobj()
        raw = z.decompress(packed, _MAX_DECOMPRESSED)
        if z.unconsumed_tail:
            raise ValueError("decompresses to more than 1 GiB")
    except zlib.error as e:
        raise ValueError(f"base64 text that is not zlib data ({e})") from None
    try:
        value = _DataOnly(io.BytesIO(raw)).load()
    except UnsafePickle:
        raise
    except Exception as e:  # a truncated or corrupt pickle: any of a dozen error types
        raise ValueError(f"zlib data that is not a pickle ({type(e).__name__}: {e})") from None
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as e:
            raise ValueError(f"the pickled text is not JSON ({e.msg})") from None
    return value


def livecodebench_tasks(
    split: str, path: str | Path, on_bad_row: OnBadRow | None = None
) -> Iterator[Task]:
    """The problems of a LiveCodeBench file (JSONL as published, JSON or Parquet)."""
    for row in iter_rows(path, on_bad_row):
        with skipping(on_bad_row):
            yield _task(row, split)


def _task(row: Row, split: str) -> Task:
    qid = row.get("question_id", (str, int))
    metadata = row.json("metadata", default={})
    if not isinstance(metadata, dict):
        raise row.error("metadata", "expected a JSON object")
    fn_name = metadata.get("func_name") or None
    public, found = listed_cases(
        row, "public_test_cases", row.json("public_test_cases", default=[]), fn_name
    )
    private_text = row.get("private_test_cases", str, default="")
    private: list[dict[str, str]] = []
    if private_text:
        try:
            decoded = decode_private_cases(private_text)
        except (ValueError, UnsafePickle) as e:
            raise row.error("private_test_cases", str(e)) from None
        private, found_private = listed_cases(row, "private_test_cases", decoded, fn_name)
        found = found or found_private
    if not public and not private:
        raise row.error("private_test_cases", "no test cases, public or private")
    return program_task(
        name=f"livecodebench/{qid}",
        source="livecodebench",
        statement=row.get("question_content", str),
        title=row.get("question_title", str, default=None),
        cases=[*public, *private],
        split=split,
        examples=public,
        fn_name=found,
        starter_code=row.get("starter_code", str, default=""),
        difficulty=difficulty_of(row.data.get("difficulty")),
        generator="referee.tasks.imports.livecodebench",
    )
