"""Entry-point targets for tests/domains/test_plugins.py: a domain that loads, one that raises,
and one that is not callable."""

from __future__ import annotations

from referee.domains import register_family
from referee.tasks.kinds import register_task_kind
from referee.tasks.model import Task

NOT_CALLABLE = 42
CALLS: list[str] = []


def register() -> None:
    """A test domain: one family, one kind."""
    CALLS.append("register")
    register_task_kind("plugin-fixture", answer_format="text")
    register_family("plugin-fixture-family", _generate, domain="plugin-fixture", replace=True)


def broken() -> None:
    """Raises, as a domain with a bug would."""
    raise RuntimeError("the domain's bug\non two lines")


def _generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
    return []
