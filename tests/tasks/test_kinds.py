"""The typed task kind: explicit in schema version 2, inferred once for version-1 files."""

import hashlib
import json

import pytest

from referee.errors import TaskError
from referee.tasks.kinds import TaskKind, infer_kind, parse_kind
from referee.tasks.model import TASK_SCHEMA_VERSION, Task, read_tasks, write_tasks


def _v1_line(answer_format="code", hidden=None, payload=None, task_id="old/one-v1"):
    """A task line as referee wrote them before tasks had a kind, hash and all, by hand."""
    hidden = {"reference": "return 1"} if hidden is None else hidden
    payload = {"entry_point": "f"} if payload is None else payload
    prompt = [{"role": "user", "content": "Do it."}]
    body = {
        "domain": "code",
        "prompt": prompt,
        "payload": payload,
        "hidden": hidden,
        "answer_format": answer_format,
    }
    digest = hashlib.sha256(
        json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    ).hexdigest()
    return {
        "schema_version": 1,
        "id": task_id,
        "domain": "code",
        "prompt": prompt,
        "payload": payload,
        "hidden": hidden,
        "answer_format": answer_format,
        "difficulty": {"estimate": None, "features": {}},
        "split": "train",
        "provenance": {"source": "unknown"},
        "content_hash": digest,
    }


def test_schema_version_moved_on():
    assert TASK_SCHEMA_VERSION == 2
    t = Task.create(name="t/new-v1", prompt="Do it.", kind=TaskKind.FUNCTION)
    assert t.schema_version == 2 and t.kind is TaskKind.FUNCTION


@pytest.mark.parametrize(
    "answer_format, hidden, kind",
    [
        ("code", {"reference": "return 1"}, TaskKind.FUNCTION),
        ("patch", {"fail_to_pass": ["t::a"], "pass_to_pass": []}, TaskKind.REPO_PATCH),
        ("patch", {"kind": "testgen", "mutants": []}, TaskKind.TEST_WRITING),
        ("text", {}, TaskKind.CUSTOM),
        ("tool-state", {"number": 3}, TaskKind.CUSTOM),
    ],
)
def test_a_version_1_file_is_read_with_its_kind_inferred_and_its_hash_verified(
    tmp_path, answer_format, hidden, kind
):
    path = tmp_path / "old.jsonl"
    line = _v1_line(answer_format, hidden)
    path.write_text(json.dumps(line) + "\n")
    [task] = read_tasks(path)
    assert task.kind is kind
    assert task.schema_version == 1 and task.content_hash == line["content_hash"]
    task.verify_hash()  # the old hash, which covered no kind, still holds
    # Tampering is still caught in an old file.
    line["hidden"] = {**hidden, "extra": 1}
    path.write_text(json.dumps(line) + "\n")
    with pytest.raises(TaskError, match="content changed"):
        read_tasks(path)


def test_a_version_1_task_written_again_carries_its_kind(tmp_path):
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps(_v1_line("patch", {"kind": "testgen", "mutants": []})) + "\n")
    [task] = read_tasks(old)
    new = tmp_path / "new.jsonl"
    write_tasks(new, [task])
    data = json.loads(new.read_text())
    assert data["kind"] == "test-writing" and data["schema_version"] == 1
    assert read_tasks(new) == [task]


def test_version_2_round_trip_keeps_the_kind(tmp_path):
    tasks = [
        Task.create(name="t/f-v1", prompt="p", kind="function", answer_format="code"),
        Task.create(name="t/p-v1", prompt="p", kind="repo-patch", answer_format="patch"),
        Task.create(name="t/w-v1", prompt="p", kind="test-writing", answer_format="patch"),
        Task.create(name="t/g-v1", prompt="p", kind="program", answer_format="code"),
        Task.create(name="t/c-v1", prompt="p", kind="custom", answer_format="text"),
    ]
    path = tmp_path / "t.jsonl"
    write_tasks(path, tasks)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["kind"] for x in lines] == [
        "function",
        "repo-patch",
        "test-writing",
        "program",
        "custom",
    ]
    assert all(x["schema_version"] == 2 for x in lines)
    back = read_tasks(path)
    assert back == tasks and [t.kind for t in back] == [t.kind for t in tasks]


def test_from_version_2_the_hash_covers_the_kind(tmp_path):
    t = Task.create(name="t/p-v1", prompt="p", kind="repo-patch", answer_format="patch")
    data = t.model_dump(mode="json")
    data["kind"] = "test-writing"  # another verifier would judge it: the hash must notice
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(TaskError, match="content changed"):
        read_tasks(path)


def test_an_unknown_kind_is_a_task_error_naming_the_kinds(tmp_path):
    with pytest.raises(TaskError, match=r"unknown task kind 'quiz'.*'function'.*'test-writing'"):
        Task.create(name="t/q-v1", prompt="p", kind="quiz")
    data = Task.create(name="t/q-v1", prompt="p").model_dump(mode="json")
    data["kind"] = "quiz"
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(data) + "\n")
    with pytest.raises(TaskError, match=r"t\.jsonl:1: unknown task kind 'quiz'.*'repo-patch'"):
        read_tasks(path)
    with pytest.raises(TaskError, match="unknown task kind 3"):
        parse_kind(3)


def test_a_kind_must_fit_the_answer_format():
    with pytest.raises(TaskError, match=r"'function' task answers with answer_format 'code'"):
        Task.create(name="t/x-v1", prompt="p", kind="function", answer_format="patch")
    with pytest.raises(TaskError, match=r"'repo-patch' task answers with answer_format 'patch'"):
        Task.create(name="t/x-v1", prompt="p", kind="repo-patch")
    # A custom task may answer in any format.
    assert Task.create(name="t/x-v1", prompt="p", kind="custom", answer_format="code").kind == (
        "custom"
    )


def test_revised_keeps_the_kind():
    t = Task.create(name="t/w-v1", prompt="p", kind="test-writing", answer_format="patch")
    r = t.revised(hidden={"mutants": [1]})
    assert r.kind is TaskKind.TEST_WRITING and r.content_hash != t.content_hash
    r.verify_hash()


def test_infer_kind_is_the_version_1_rule():
    assert infer_kind({}) is TaskKind.FUNCTION  # answer_format defaults to code
    assert infer_kind({"answer_format": "patch", "hidden": {}}) is TaskKind.REPO_PATCH
    assert infer_kind({"answer_format": "patch", "hidden": {"kind": "testgen"}}) is (
        TaskKind.TEST_WRITING
    )
    assert TaskKind.TEST_WRITING.is_repository and not TaskKind.FUNCTION.is_repository
    assert TaskKind.FUNCTION.answer_format == "code" and TaskKind.CUSTOM.answer_format is None


def test_task_sources_say_their_kind():
    from referee.tasks.humaneval import humaneval_tasks
    from referee.tasks.procedural import generate
    from referee.verify.redteam_pytest import repository_tasks

    assert generate("list-ops", difficulty=0.5, seed=1).kind is TaskKind.FUNCTION
    assert {t.kind for t in humaneval_tasks()[:3]} == {TaskKind.FUNCTION}
    assert {t.kind for t in repository_tasks()} == {TaskKind.REPO_PATCH}


def test_tasks_stats_counts_typed_kinds_and_the_tests_each_kind_counts(tmp_path):
    from typer.testing import CliRunner

    from referee.cli import app

    tasks = [
        Task.create(name="t/f-v1", prompt="p", kind="function", hidden={"inputs": [1, 2]}),
        Task.create(
            name="t/p-v1",
            prompt="p",
            kind="repo-patch",
            answer_format="patch",
            payload={"kind": "bugfix"},  # what synth made
            hidden={"fail_to_pass": ["a"], "pass_to_pass": ["b"]},
        ),
        Task.create(
            name="t/w-v1",
            prompt="p",
            kind="test-writing",
            answer_format="patch",
            payload={"kind": "testgen"},
            hidden={"mutants": [1, 2, 3], "fail_to_pass": ["x"]},
        ),
    ]
    write_tasks(tmp_path / "t.jsonl", tasks)
    r = CliRunner().invoke(app, ["tasks", "stats", str(tmp_path / "t.jsonl"), "--json"])
    assert r.exit_code == 0, r.output
    stats = json.loads(r.stdout.splitlines()[-1])
    assert stats["by_task_kind"] == {"function": 1, "repo-patch": 1, "test-writing": 1}
    assert stats["by_kind"] == {"function": 1, "bugfix": 1, "testgen": 1}
    assert (stats["tests_total"], stats["tests_min"], stats["tests_max"]) == (7, 2, 3)
