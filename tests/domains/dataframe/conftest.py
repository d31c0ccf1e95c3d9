"""One dataframe verifier (one sandbox with pandas preloaded) and one task per family, shared by
the module's tests: building them is the slow part."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from referee.domains.dataframe.build import build_tasks
from referee.domains.dataframe.execute import dataframe_sandbox
from referee.domains.dataframe.families import FAMILIES, draft_for
from referee.domains.dataframe.verifier import DataframeVerifier
from referee.sandbox import Limits
from referee.tasks.model import Task


@pytest.fixture(scope="session")
def df_verifier() -> Iterator[DataframeVerifier]:
    """The verifier with its default limits (generous: a loaded CI machine stays far below)."""
    with DataframeVerifier(dataframe_sandbox(python_workers=2), own_sandbox=True) as v:
        yield v


@pytest.fixture(scope="session")
def hostile_verifier(df_verifier: DataframeVerifier) -> DataframeVerifier:
    """The same sandbox with short limits: an endless loop costs 2 s, not 10."""
    return DataframeVerifier(df_verifier.sandbox, limits=Limits(timeout_s=2.0, memory_mb=768))


@pytest.fixture(scope="session")
def df_tasks(df_verifier: DataframeVerifier) -> dict[str, Task]:
    """One task per family at difficulty 0.6, by family name."""
    tasks = build_tasks([draft_for(f, 0.6, 3) for f in FAMILIES], df_verifier.sandbox)
    return {t.provenance.generator or "": t for t in tasks}
