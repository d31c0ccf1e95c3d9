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


# --- task files at fsspec URLs (issue 13) -----------------------------------------------------


def test_task_files_round_trip_through_s3_and_errors_name_the_url_and_line(s3):
    bucket, _ = s3
    url = f"s3://{bucket}/tasks/t.jsonl"
    tasks = [_task(name=f"t/n{i}-v1") for i in range(3)]
    assert write_tasks(url, tasks) == 3
    assert read_tasks(url) == tasks
    with pytest.raises(
        TaskError, match=rf"cannot read task file 's3://{bucket}/nope.jsonl': No such"
    ):
        read_tasks(f"s3://{bucket}/nope.jsonl")
    bad = dict(_task().model_dump(mode="json"), split="validation")
    from referee.storage import write_bytes

    write_bytes(f"s3://{bucket}/bad.jsonl", b"\n" + json.dumps(bad).encode() + b"\n")
    with pytest.raises(TaskError, match=rf"^s3://{bucket}/bad.jsonl:2: field 'split'"):
        read_tasks(f"s3://{bucket}/bad.jsonl")


def test_a_write_that_fails_half_way_leaves_the_old_task_file(tmp_path):
    def failing():
        yield _task(name="t/new-v1")
        raise RuntimeError("the source ran dry")

    for path in (tmp_path / "t.jsonl", f"memory://referee-model-{id(tmp_path)}/t.jsonl"):
        write_tasks(path, [_task()])
        with pytest.raises(RuntimeError):
            write_tasks(path, failing())
        assert [t.id for t in read_tasks(path)] == ["t/one-v1"]
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]
