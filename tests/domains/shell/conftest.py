"""Shared fixtures of the shell domain's tests: one verifier (on the session's sandbox) and one
task of each family at full difficulty, made once."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from referee.domains import generate_family
from referee.domains.shell import FAMILY_MODULES
from referee.tasks.model import Task


@pytest.fixture(scope="session")
def shell_verifier(sandbox: object) -> Iterator[object]:
    from referee.domains.shell.verifier import ShellVerifier

    with ShellVerifier(sandbox) as v:  # type: ignore[arg-type]
        yield v


@pytest.fixture(scope="session")
def family_tasks() -> dict[str, Task]:
    """One task of each family at difficulty 1 (every fault and distractor in place)."""
    return {f: generate_family(f, count=1, difficulty=1.0, seed=0)[0] for f in FAMILY_MODULES}
