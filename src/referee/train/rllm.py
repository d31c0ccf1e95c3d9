"""Task rows for rLLM's datasets.

rLLM (``rllm-org/rllm`` 0.3.0.pre, not on the package index here, so not imported or tested
against the package) registers datasets as lists of dicts
(``DatasetRegistry.register_dataset(name, rows, split)``) whose rows its workflows receive as
``task: dict``; its examples' rows hold ``question``, ``ground_truth`` and ``data_source``.
:func:`rllm_row` writes that shape for a referee task, with the task id as ``ground_truth`` (and
``task_id``) so that a referee reward or evaluator finds the task
(:func:`referee.train.lookup.resolve_task`); never the task's hidden tests. The recorded
signatures are in ``tests/trainers/fixtures/signatures/rllm.json``.
"""

from __future__ import annotations

from typing import Any

from referee.tasks.model import Task

__all__ = ["rllm_row"]


def rllm_row(task: Task, index: int = 0) -> dict[str, Any]:
    """One rLLM dataset row for ``task``: the prompt as ``question`` (and as ``messages``), the
    task id as ``ground_truth``."""
    user = [m.content for m in task.prompt if m.role == "user"]
    return {
        "question": "\n\n".join(user),
        "messages": [m.model_dump() for m in task.prompt],
        "ground_truth": task.id,
        "data_source": f"referee/{task.domain}",
        "task_id": task.id,
        "split": task.split,
        "index": index,
    }
