"""Dataset rows written to one file: Parquet or JSON lines, by the path's suffix, at a path or
any fsspec URL, whole or not at all (:mod:`referee.storage`). The trainer exports of a task file
(:mod:`referee.tasks.trainer_rows`) and of a track store (:mod:`referee.track.export`) write
through it."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from referee.errors import ConfigError, StoreError
from referee.optional import require_extra
from referee.storage import atomic_writer

__all__ = ["write_dataset"]


def write_dataset(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> int:
    """Write rows as Parquet (``.parquet``) or JSON lines (``.jsonl``, ``.json``).

    Both load with ``datasets.Dataset.from_parquet`` / ``from_json``. Returns the row count.

    >>> write_dataset([{"prompt": [{"role": "user", "content": "hi"}], "task_id": "t"}],
    ...               "rows.jsonl")                                       # doctest: +SKIP
    1
    """
    suffix = Path(path).suffix.lower()
    if suffix == ".parquet":
        require_extra("parquet", needed_for="writing Parquet")
        import pyarrow as pa  # type: ignore[import-untyped]
        import pyarrow.parquet as pq  # type: ignore[import-untyped]

        try:
            table = pa.Table.from_pylist(list(rows))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise StoreError(
                f"cannot write {path}: the rows' columns mix types ({e}); write a .jsonl file "
                "instead, or make the column's values one type"
            ) from e
        with atomic_writer(path, "wb", option="export", parents=True) as f:
            pq.write_table(table, f)
    elif suffix in (".jsonl", ".json"):
        with atomic_writer(path, "w", option="export", parents=True) as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    else:
        raise ConfigError(f"cannot tell the format of {path}: name it *.parquet or *.jsonl")
    return len(rows)
