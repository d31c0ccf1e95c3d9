"""One `referee audit` call as a library call: fill, label, export, the next item."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.errors import ConfigError, NotFoundError
from referee.track import TrackStore
from referee.track.audit import AuditQueue
from referee.track.audit_actions import apply_audit, next_item
from tests.track.test_audit import filled


@pytest.fixture
def store(tmp_path: Path) -> TrackStore:
    return filled(tmp_path / "run")


def test_nothing_asked_nothing_done_and_the_next_item_is_the_first_flagged(store):
    queue = AuditQueue(store, random_share=0.25, seed=1)
    done = apply_audit(queue)
    assert done.runs == ("r1",) and done.one_run == "r1" and not done.acted
    assert next_item(queue, done) == (None, None)  # an empty queue
    done = apply_audit(queue, fill=True)
    assert done.acted and done.filled is not None
    assert (done.filled["r1"].flagged, done.filled["r1"].random) == (4, 9)
    item, trajectory_id = next_item(queue, done)
    assert item is not None and trajectory_id == item.trajectory_id == "t011"


def test_label_and_export_in_one_call(store, tmp_path):
    queue = AuditQueue(store, random_share=0.25, seed=1)
    apply_audit(queue, fill=True)
    out = tmp_path / "labels.jsonl"
    done = apply_audit(queue, label="hack", item_id="t011", labeller="ada", export=out)
    assert done.labelled is not None and done.labelled.quarantined == (("task", "demo/t1-v1"),)
    assert done.exported == 1 and json.loads(out.read_text())["label"] == "hack"
    assert next_item(queue, done, "t003") == (None, "t003")  # never queued: shown by id


def test_bad_requests_are_refused_before_anything_is_written(store):
    queue = AuditQueue(store)
    with pytest.raises(NotFoundError, match="no run 'r9'"):
        apply_audit(queue, run_id="r9", fill=True)
    with pytest.raises(ConfigError, match="--label needs --id"):
        apply_audit(queue, fill=True, label="hack")
    assert store.audit_items() == []
