"""Fixtures of the numeric domain's tests: one numeric sandbox and one task per problem
structure (references recorded in it), made once per session."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def numeric_box():
    from referee.domains.numeric.sandbox import numeric_sandbox

    box = numeric_sandbox(python_workers=1)
    yield box
    box.close()


@pytest.fixture(scope="session")
def numeric_verifier(numeric_box):
    from referee.domains.numeric.verifier import NumericVerifier

    return NumericVerifier(numeric_box)


@pytest.fixture(scope="session")
def tasks(numeric_box):
    """``unit -> task`` at difficulty 0.3, one per structure of every family."""
    from referee.domains.numeric.families import make_task
    from referee.domains.numeric.problems import PROBLEMS

    return {p.unit: make_task(p, difficulty=0.3, seed=21, sandbox=numeric_box) for p in PROBLEMS}
