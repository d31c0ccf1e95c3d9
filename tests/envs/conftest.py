"""Fixtures of the environment tests: one runtime, recorded function tasks, synthesised
repository tasks from tests/fixtures/minirepo (a few seconds, once per session)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.envs.helpers import MINIREPO


@pytest.fixture(scope="session")
def runtime(harness_sb):
    from referee.envs import CodeRuntime

    rt = CodeRuntime(sandbox=harness_sb)
    yield rt
    rt.close()


@pytest.fixture(scope="session")
def fn_tasks(harness_sb):
    """Recorded procedural tasks, one per family."""
    from referee.tasks import generate
    from referee.verify.record import record_function_tasks

    drafts = [
        generate("list-pipeline", difficulty=0.3, seed=11),
        generate("string-pipeline", difficulty=0.3, seed=12),
        generate("recurrence", difficulty=0.3, seed=13),
    ]
    return record_function_tasks(harness_sb, drafts)


@pytest.fixture
def fn_task(fn_tasks):
    return fn_tasks[0]


@pytest.fixture(scope="session")
def mini_tasks(tmp_path_factory):
    """Bug-fixing and test-writing tasks synthesised from the fixture repository."""
    from referee.synth.pipeline import synthesize

    store = "file://" + str(tmp_path_factory.mktemp("env-artifacts"))
    report = synthesize(str(MINIREPO), kinds=("bugfix", "testgen"), limit=4, seed=3, store=store)
    by_kind: dict[str, list[Any]] = {}
    for t in report.tasks:
        by_kind.setdefault(t.payload["kind"], []).append(t)
    assert by_kind.get("bugfix") and by_kind.get("testgen"), report.to_json()
    return by_kind
