"""veRL code datasets (Parquet rows of the RL data format) as program tasks.

A row: ``data_source`` (``codecontests``, ``apps``, ``codeforces``, ``taco``, or a hub name such
as ``likaixin/TACO-verified``), ``prompt`` (the chat messages the trainer sends, ``[{"role",
"content"}]``), ``ability``, ``reward_model`` (``{"style": "rule", "ground_truth": JSON text
{"inputs", "outputs", "fn_name"?}}``) and ``extra_info`` (``{"index", "split", ...}``).

The row's own messages are the task's prompt, as the trainer sent them (they already say how to
answer); the ground truth becomes the hidden cases, with APPS's wrapped outputs unwrapped as for
APPS (the code sources of veRL datasets descend from it). Ids: ``verl/<data_source>-<index>``
with ``extra_info.index`` (the row's place in the file from 0 without one). The file's own
``extra_info.split`` is not used: the import's split is.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

from referee.tasks.imports.program import apps_cases, program_task
from referee.tasks.imports.rows import OnBadRow, Row, iter_rows, skipping
from referee.tasks.model import Task

__all__ = ["verl_tasks"]

_ROLES = {"system", "user", "assistant"}


def verl_tasks(split: str, path: str | Path, on_bad_row: OnBadRow | None = None) -> Iterator[Task]:
    """The code rows of a veRL dataset file (Parquet as veRL writes it, JSONL or JSON)."""
    for index, row in enumerate(iter_rows(path, on_bad_row)):
        with skipping(on_bad_row):
            yield _task(row, index, split)


def _messages(row: Row) -> list[dict[str, str]]:
    prompt = row.get("prompt", (list, tuple))
    messages = []
    for i, m in enumerate(prompt):
        if (
            not isinstance(m, Mapping)
            or m.get("role") not in _ROLES
            or not isinstance(m.get("content"), str)
        ):
            raise row.error(
                "prompt", f"message {i}: expected {{role: system|user|assistant, content: text}}}}"
            )
        messages.append({"role": str(m["role"]), "content": str(m["content"])})
    if not any(m["role"] == "user" for m in messages):
        raise row.error("prompt", "no user message")
    return messages


def _task(row: Row, position: int, split: str) -> Task:
    source = row.get("data_source", str).strip()
    reward = row.get("reward_model", Mapping)
    truth = reward.get("ground_truth")
    if isinstance(truth, str):
        truth = row.decode("reward_model.ground_truth", truth)
    if not isinstance(truth, Mapping) or "inputs" not in truth:
        raise row.error(
            "reward_model.ground_truth",
            f"data_source {source!r}: expected the JSON text of {{inputs, outputs, fn_name?}} "
            "(a code data source: codecontests, apps, codeforces, taco...)",
        )
    cases, fn_name = apps_cases(row, "reward_model.ground_truth", truth)
    if not cases:
        raise row.error("reward_model.ground_truth", "no test cases")
    extra = row.data.get("extra_info") or {}
    if not isinstance(extra, Mapping):
        raise row.error("extra_info", "expected an object")
    index = extra.get("index", position)
    if isinstance(index, bool) or not isinstance(index, (int, str)):
        raise row.error("extra_info", f"'index' is an integer or a string, got {index!r}")
    messages = _messages(row)
    statement = next(m["content"] for m in reversed(messages) if m["role"] == "user")
    return program_task(
        name=f"verl/{source}-{index}",
        source="verl",
        statement=statement,
        cases=cases,
        split=split,
        fn_name=fn_name,
        prompt=messages,
        generator=f"referee.tasks.imports.verl ({source})",
    )
