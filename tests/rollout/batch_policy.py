"""A policy with ``generate_batch`` that answers list-ops tasks right or wrong on demand, and
the tasks it answers: for the batched single-turn route's tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from referee.policy.base import Generation, Sampling


def list_ops_tasks(folder: Path, count: int = 5) -> list[Any]:
    """``count`` recorded list-ops tasks, made in ``folder``."""
    from typer.testing import CliRunner

    from referee.cli import app
    from referee.tasks.model import read_tasks

    out = folder / "tasks.jsonl"
    args = ["tasks", "generate", "list-ops", "--out", str(out), "--count", str(count)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    return read_tasks(out)


class BatchPolicy:
    """Answers with each task's reference in a chat-style fence (the whole function, then a
    usage block after it, as small chat models write) where ``good`` says so, else prose; it
    records every batch it was asked for."""

    def __init__(self, tasks: list[Any], good: set[int]) -> None:
        self.by_prompt = {t.prompt[-1].content: (i, t) for i, t in enumerate(tasks)}
        self.good = good
        self.batches: list[tuple[list[int], int | None]] = []

    async def generate_batch(self, conversations: list[Any], sampling: Sampling) -> list[Any]:
        indices, out = [], []
        for messages in conversations:
            i, task = self.by_prompt[messages[-1]["content"]]
            indices.append(i)
            if i in self.good:
                code = task.payload["code_prompt"] + task.hidden["reference"]
                text = f"Here it is:\n```python\n{code}```\n"
            else:
                text = "I am not sure how to write this."
            out.append(Generation(message={"role": "assistant", "content": text},
                                  completion_tokens=len(text.split())))  # fmt: skip
        self.batches.append((indices, sampling.seed))
        return out
