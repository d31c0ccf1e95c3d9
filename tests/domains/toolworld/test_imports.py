"""The toolworld-rows import: a world module run in the sandbox, checked rows, clear errors."""

import json
import shutil
from pathlib import Path

import pytest

from referee.domains.toolworld.verifier import ToolworldVerifier
from referee.errors import TaskError
from referee.tasks.imports import import_tasks
from referee.tasks.model import read_tasks

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    out = tmp_path_factory.mktemp("tw") / "tasks.jsonl"
    summary = import_tasks("toolworld-rows", DATA / "library_rows.jsonl", out, split="train")
    assert summary.count == 2
    return read_tasks(out)


def rows_file(tmp_path, rows):
    shutil.copy(DATA / "library_world.py", tmp_path / "library_world.py")
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def good_row():
    return json.loads((DATA / "library_rows.jsonl").read_text().splitlines()[0])


def test_imported_tasks_pass_their_reference_and_fail_when_empty(imported):
    with_ref, without_ref = imported
    assert with_ref.id == "library/lend-dune-v1" and with_ref.split == "train"
    assert {t["function"]["name"] for t in with_ref.payload["tools"]} == {"find_book", "lend"}
    v = ToolworldVerifier()
    try:
        assert v.verify(with_ref, with_ref.hidden["reference"]).passed
        assert not v.verify(with_ref, "").passed
        # Over-action: the goal and another loan; the store diff from the reference catches it.
        over = [
            *json.loads(with_ref.hidden["reference"]),
            {"name": "lend", "arguments": {"book_id": 2, "member": "ana"}},
        ]
        assert not v.verify(with_ref, json.dumps(over)).passed
        # Without a reference only the assertions and the policy judge.
        lend = [{"name": "lend", "arguments": {"book_id": 2, "member": "cy"}}]
        assert v.verify(without_ref, json.dumps(lend)).passed
        hidden = [
            {"name": "_private", "arguments": {}},
            {"name": "lend", "arguments": {"book_id": "x"}},
        ]
        verdict = v.verify(without_ref, json.dumps(hidden))
        assert not verdict.passed and verdict.flags[0].kind == "toolworld:hidden-tool"
    finally:
        v.close()


def test_dispatch_runs_imported_worlds_in_the_sets_sandbox(imported):
    from referee.verify.dispatch import VerifierSet

    task = imported[0]
    with VerifierSet() as vs:
        verdicts = list(vs.verify_many([(task, task.hidden["reference"]), (task, "")]))
    assert [v.passed for v in verdicts] == [True, False]


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"instruction": None}, "instruction", "missing"),
        ({"world": "nowhere.py"}, "world", "no file"),
        ({"assertions": [{"sql": "SELECT 1"}]}, "assertions", "'expect'"),
        (
            {"assertions": [{"sql": "SELECT COUNT(*) FROM loans", "expect": [[1]]}]},
            "assertions",
            "empty episode would pass",
        ),
        (
            {"reference": [{"name": "lend", "arguments": {"book_id": 3, "member": "ana"}}]},
            "reference",
            "does not pass",
        ),
    ],
)
def test_a_malformed_row_names_file_row_and_field_and_nothing_is_written(
    tmp_path, change, field, words
):
    bad = {**good_row(), **change}
    path = rows_file(tmp_path, [good_row(), bad])
    out = tmp_path / "out.jsonl"
    with pytest.raises(TaskError) as e:
        import_tasks("toolworld-rows", path, out)
    assert f"{path}:2: field {field!r}" in str(e.value) and words in str(e.value)
    assert not out.exists()


def test_an_imported_world_runs_turn_by_turn_in_the_environment(imported):
    from referee.envs import SyncEnvironment, make_env

    task = imported[0]
    env = SyncEnvironment(make_env("toolworld"))
    try:
        env.reset(task)
        assert [t["function"]["name"] for t in env.tools()] == ["find_book", "lend"]
        found = env.step(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "1",
                        "type": "function",
                        "function": {"name": "find_book", "arguments": '{"title": "Dune"}'},
                    }
                ],
            }
        )
        assert json.loads(found.observations[0]["content"])[0]["book_id"] == 1
        missing = env.step(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "2",
                        "type": "function",
                        "function": {
                            "name": "lend",
                            "arguments": '{"book_id": 7, "member": "ana"}',
                        },
                    }
                ],
            }
        )
        assert missing.observations[0]["content"] == "error: ToolError: book 7 not found"
        env.step(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "3",
                        "type": "function",
                        "function": {
                            "name": "lend",
                            "arguments": '{"book_id": 1, "member": "ana"}',
                        },
                    }
                ],
            }
        )
        env.step({"role": "assistant", "content": "Lent."})
        assert env.done and env.verify().passed
    finally:
        env.close()


def test_a_world_that_breaks_its_own_store_is_an_infra_error_not_a_verdict(imported):
    task = imported[1]
    hostile = task.payload["module"] + (
        "\n\ndef find_book(db, title: str):\n"
        "    import os\n"
        "    os.remove('state.db')\n"
        "    os.symlink('/etc/passwd', 'state.db')\n"
        "    return []\n\n"
        "TOOLS = [find_book, lend]\n"
    )
    broken = task.model_copy(update={"payload": {**task.payload, "module": hostile}})
    v = ToolworldVerifier()
    try:
        verdict = v.verify(broken, json.dumps([{"name": "find_book", "arguments": {"title": "x"}}]))
    finally:
        v.close()
    assert verdict.infra_error and "symlink" in verdict.infra_error and not verdict.passed
