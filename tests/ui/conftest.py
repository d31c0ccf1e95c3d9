"""A sample store for the dashboard tests: two runs, alerts, flags, metrics, a filled queue."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.track import TrackStore
from referee.track.audit import AuditQueue
from referee.ui.sample_store import build_sample_store


def make_store(path: Path) -> TrackStore:
    store = build_sample_store(path, steps=12, per_step=6)
    AuditQueue(store, random_share=0.1, seed=0).fill("grpo-curriculum")
    return store


@pytest.fixture(scope="session")
def template_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run folder built once; tests get copies (building one takes most of a second)."""
    path = tmp_path_factory.mktemp("template") / "run"
    make_store(path).close()  # closing checkpoints the WAL into track.sqlite
    return path


@pytest.fixture
def store(template_store: Path, tmp_path: Path) -> Iterator[TrackStore]:
    folder = shutil.copytree(template_store, tmp_path / "run")
    s = TrackStore(folder, create=False)
    yield s
    s.close()
