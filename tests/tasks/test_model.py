import json

import pytest

from referee.errors import TaskError
from referee.tasks.model import Task, read_tasks, write_tasks


def _task(**kw):
    return Task.create(
        name=kw.pop("name", "t/one-v1"),
        prompt="Do it.",
        payload={"entry_point": "f"},
        hidden={"reference": "x"},
        **kw,
    )


def test_ids_and_content_hash():
    named = _task()
    assert named.id == "t/one-v1" and len(named.content_hash) == 64
    unnamed = Task.create(prompt="Do it.")
    assert unnamed.id.startswith("sha256:") and unnamed.id[7:] == unnamed.content_hash[:16]
    assert _task().content_hash == named.content_hash  # content decides the hash
    assert _task(answer_format="text").content_hash != named.content_hash


def test_jsonl_round_trip(tmp_path):
    path = tmp_path / "t.jsonl"
    tasks = [_task(name=f"t/n{i}-v1") for i in range(3)]
    assert write_tasks(path, tasks) == 3
    assert read_tasks(path) == tasks


def test_malformed_line_names_the_line_and_field(tmp_path):
    path = tmp_path / "t.jsonl"
    good = _task().model_dump(mode="json")
    bad = dict(good, split="validation")
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(TaskError, match=r"t\.jsonl:2: field 'split'"):
        read_tasks(path)


def test_invalid_json_names_the_line(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text("\n{not json\n")
    with pytest.raises(TaskError, match=r":2: not valid JSON"):
        read_tasks(path)


def test_tampered_content_is_detected(tmp_path):
    path = tmp_path / "t.jsonl"
    data = _task().model_dump(mode="json")
    data["hidden"]["reference"] = "changed"
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(TaskError, match="content changed"):
        read_tasks(path)


def test_duplicate_ids_are_refused(tmp_path):
    path = tmp_path / "t.jsonl"
    write_tasks(path, [_task(), _task()])
    with pytest.raises(TaskError, match="appears twice"):
        read_tasks(path)


def test_newer_schema_is_refused_with_a_fix(tmp_path):
    path = tmp_path / "t.jsonl"
    data = _task().model_dump(mode="json")
    data["schema_version"] = 99
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(TaskError, match="upgrade referee"):
        read_tasks(path)
