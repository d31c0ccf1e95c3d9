"""The ``dataframe-rows`` import source: your own dataframe tasks from a JSONL file.

One task per line (``referee tasks import dataframe-rows FILE --out tasks.jsonl``):

* ``id`` (text): the task's name, e.g. ``"acme/monthly-revenue-v1"``;
* ``instruction`` (text): what the pipeline must do (the prompt adds the tables and the contract);
* ``inputs`` (object): table name -> CSV text, or the path of a ``.csv`` or ``.parquet`` file
  (relative to the JSONL file's folder): the visible sample;
* ``reference`` (text): a Python program defining ``transform(tables) -> DataFrame``;
* ``schema`` (object, optional): table name -> column -> ``int|float|str|bool|date``; inferred
  from the visible CSV when absent;
* ``hidden_inputs`` (list of objects like ``inputs``, optional): the input sets the answer is
  judged on. When absent, the grader makes up to four from the sample (rows drawn with
  repeats, twice; every other row; reversed with a repeat), seeded by the id, and keeps those
  whose expected output differs from the sample's;
* ``rules`` (list, optional): validation rules (``unique``, ``not_null``, ``total``,
  ``row_count``, ``sorted_by``; :func:`referee.domains.dataframe.compare.check_rules`);
* ``ordered`` (bool, optional): the row order of the output matters.

Every row is checked before anything runs; then each reference runs in the sandbox on every
input set. A malformed row, or a reference that fails on a set, is a
:class:`~referee.errors.TaskError` naming the file, the row and the field, and nothing is
written.
"""

from __future__ import annotations

import csv
import io
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from referee.domains.dataframe.build import Draft, build_tasks, check_draft
from referee.domains.dataframe.spec import COLUMN_TYPES
from referee.errors import TaskError
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.model import Task

__all__ = ["infer_schema", "load_rows"]

_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?$")


def infer_schema(text: str) -> dict[str, str]:
    """Column types of CSV ``text``: ``int``, ``float``, ``bool``, ``date`` where every
    non-empty cell fits, else ``str``.

    >>> infer_schema("a,b,c,d\\n1,2.5,2024-01-02,x\\n,3,,y\\n")
    {'a': 'int', 'b': 'float', 'c': 'date', 'd': 'str'}
    """
    reader = csv.reader(io.StringIO(text))
    header = next(reader, [])
    columns: list[list[str]] = [[] for _ in header]
    for row in reader:
        for j, cell in enumerate(row[: len(header)]):
            if cell != "":
                columns[j].append(cell)
    schema = {}
    for name, cells in zip(header, columns, strict=True):
        if cells and all(_INT.match(c) for c in cells):
            schema[name] = "int"
        elif cells and all(_FLOAT.match(c) or _INT.match(c) for c in cells):
            schema[name] = "float"
        elif cells and all(c in ("True", "False", "true", "false") for c in cells):
            schema[name] = "bool"
        elif cells and all(_DATE.match(c) for c in cells):
            schema[name] = "date"
        else:
            schema[name] = "str"
    return schema


def _table_text(row: Row, field: str, name: str, value: Any, folder: Path) -> str:
    if not isinstance(value, str):
        raise row.error(field, f"table {name!r} must be CSV text or a file path")
    if "\n" not in value and value.strip().endswith((".csv", ".parquet")):
        path = (folder / value.strip()).resolve()
        if not path.is_file():
            raise row.error(field, f"table {name!r}: no file {str(path)!r}")
        if path.suffix == ".parquet":
            import pandas as pd  # type: ignore[import-untyped]  # for Parquet inputs only

            try:
                return str(pd.read_parquet(path).to_csv(index=False))
            except Exception as e:
                raise row.error(field, f"table {name!r}: unreadable Parquet ({e})") from None
        return path.read_text()
    if "\n" not in value.strip() and "," not in value:
        raise row.error(field, f"table {name!r}: neither CSV text nor a .csv/.parquet path")
    return value if value.endswith("\n") else value + "\n"


def _tables(row: Row, field: str, value: Any, folder: Path) -> dict[str, str]:
    if not isinstance(value, dict) or not value:
        raise row.error(field, "expected an object: table name -> CSV text or path")
    return {str(k): _table_text(row, field, str(k), v, folder) for k, v in value.items()}


def _generated_sets(name: str, visible: dict[str, str]) -> list[dict[str, str]]:
    """Four hidden sets made from the sample: rows drawn with repeats (twice), every other row,
    and the rows reversed with the first one repeated. Sets whose expected output is the
    sample's are dropped when the task is built (a hard-coded answer would pass them)."""
    rng = random.Random(f"dataframe-rows:{name}")
    sets: list[dict[str, str]] = [{}, {}, {}, {}]
    for table, text in visible.items():
        lines = text.rstrip("\n").split("\n")
        header, body = lines[0], lines[1:]
        drawn = [rng.choice(body) for _ in body] if body else []
        drawn_again = [rng.choice(body) for _ in range(len(body) + 2)] if body else []
        halves = body[::2]
        reversed_rows = [*body[::-1], *body[:1]]
        for s, rows in zip(sets, (drawn, drawn_again, halves, reversed_rows), strict=True):
            s[table] = "\n".join([header, *rows]) + "\n"
    return sets


def _draft(row: Row, folder: Path) -> Draft:
    name = row.get("id", str).strip()
    if not name:
        raise row.error("id", "empty")
    instruction = row.get("instruction", str)
    reference = row.get("reference", str)
    if "def transform" not in reference:
        raise row.error("reference", "must define transform(tables) -> DataFrame")
    visible = _tables(row, "inputs", row.json("inputs"), folder)
    schema_raw = row.json("schema", default=None)
    if schema_raw is None:
        schema = {t: infer_schema(text) for t, text in visible.items()}
    else:
        if not isinstance(schema_raw, dict):
            raise row.error("schema", "expected an object: table -> column -> type")
        schema = {}
        for t, cols in schema_raw.items():
            if not isinstance(cols, dict) or not all(v in COLUMN_TYPES for v in cols.values()):
                raise row.error("schema", f"table {t!r}: column types must be {COLUMN_TYPES}")
            schema[str(t)] = {str(c): str(v) for c, v in cols.items()}
    hidden_raw = row.json("hidden_inputs", default=None)
    if hidden_raw is None:
        hidden = _generated_sets(name, visible)
    elif not isinstance(hidden_raw, list) or not hidden_raw:
        raise row.error("hidden_inputs", "expected a non-empty list of input sets")
    else:
        hidden = [_tables(row, "hidden_inputs", h, folder) for h in hidden_raw]
    rules = row.json("rules", default=[])
    if not isinstance(rules, list):
        raise row.error("rules", "expected a list of rules")
    ordered = row.get("ordered", bool, default=False)
    draft = Draft(
        name=name,
        instruction=instruction,
        schema=schema,
        visible=visible,
        hidden_inputs=hidden,
        reference=reference,
        rules=rules,
        ordered=ordered,
        unit=name,
        source="dataframe-rows",
        distinct_from_sample=hidden_raw is None,
    )
    try:
        check_draft(draft)
    except TaskError as e:
        raise row.error("inputs" if "inputs" in str(e) else "rules", str(e)) from None
    return draft


def load_rows(
    split: str, path: str | Path, on_bad_row: OnBadRow | None = None, **_: Any
) -> Iterator[Task]:
    """The tasks of a ``dataframe-rows`` file (see the module docstring), in ``split``; each
    bad row given to ``on_bad_row`` and skipped, with one."""
    folder = Path(path).resolve().parent
    drafts = []
    for row in iter_rows(path, on_bad_row):  # every row checked before any run
        with skipping(on_bad_row):
            drafts.append((row, _draft(row, folder)))
    tasks = []
    from referee.domains.dataframe.execute import dataframe_sandbox

    with dataframe_sandbox(python_workers=1) as sb:  # the references run one by one
        for row, draft in drafts:
            with skipping(on_bad_row):
                try:
                    [task] = build_tasks([draft], sb)
                except TaskError as e:
                    raise row.error("reference", str(e)) from None
                tasks.append(task.model_copy(update={"split": split}))
    yield from tasks
