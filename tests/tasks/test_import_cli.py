"""`referee tasks import NAME FILE --out TASKS.jsonl`: the file sources on the command line,
their errors (exit 2, file:row:field), and no half-written output."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.errors import TaskError
from referee.tasks.imports import import_tasks
from referee.tasks.model import read_tasks
from referee.tasks.split import assign_split, unit_of

FIXTURES = Path(__file__).parents[1] / "fixtures" / "imports"
GOOD = {
    "apps": ("apps/test.jsonl", 3),
    "taco": ("taco/train.jsonl", 2),
    "codecontests": ("codecontests/test.parquet", 2),
    "livecodebench": ("livecodebench/test.jsonl", 3),
    "deepcoder": ("deepcoder/primeintellect.jsonl", 3),
    "verl": ("verl/train.parquet", 2),
}
BAD = {
    "apps": "apps/malformed.jsonl",
    "taco": "taco/malformed.jsonl",
    "codecontests": "codecontests/malformed.parquet",
    "livecodebench": "livecodebench/malformed.jsonl",
    "deepcoder": "deepcoder/malformed.jsonl",
    "verl": "verl/malformed.parquet",
}


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _flat(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("source", sorted(GOOD))
def test_tasks_import_source_file_writes_program_tasks(tmp_path, source):
    name, count = GOOD[source]
    out = tmp_path / "tasks.jsonl"
    r = invoke("tasks", "import", source, str(FIXTURES / name), "--out", str(out))
    assert r.exit_code == 0, r.output
    tasks = read_tasks(out)  # hashes verified, ids unique
    assert len(tasks) == count and {t.kind.value for t in tasks} == {"program"}
    assert {t.split for t in tasks} == {"heldout"}
    assert all(t.id.startswith(f"{source}/") for t in tasks)
    assert f"wrote {count} {source} tasks" in _flat(r.output)


@pytest.mark.parametrize("source", sorted(BAD))
def test_a_malformed_file_exits_2_naming_row_and_field_and_writes_nothing(tmp_path, source):
    out = tmp_path / "tasks.jsonl"
    r = invoke("tasks", "import", source, str(FIXTURES / BAD[source]), "--out", str(out))
    assert r.exit_code == 2, r.output
    message = _flat(r.output)
    assert message.startswith("referee: ") and "field '" in message
    assert Path(BAD[source]).name in message
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_an_existing_output_survives_a_failed_import(tmp_path):
    out = tmp_path / "tasks.jsonl"
    out.write_text("old\n")
    with pytest.raises(TaskError, match=r"malformed\.jsonl:2"):
        import_tasks("apps", FIXTURES / "apps" / "malformed.jsonl", out, split="train")
    assert out.read_text() == "old\n" and list(tmp_path.iterdir()) == [out]


def test_the_split_options_and_the_summary(tmp_path):
    out = tmp_path / "t.jsonl"
    r = invoke(
        "tasks", "import", "apps", str(FIXTURES / "apps" / "test.jsonl"), "--out", str(out),
        "--split", "train",
    )  # fmt: skip
    assert r.exit_code == 0 and {t.split for t in read_tasks(out)} == {"train"}
    assert "1 stdin" in _flat(r.output) and "2 function" in _flat(r.output)
    summary = import_tasks(
        "livecodebench", FIXTURES / "livecodebench" / "test.jsonl", out, heldout=0.5
    )
    assert summary.count == 3 and sum(summary.splits.values()) == 3
    written = read_tasks(out)
    assert [t.split for t in written] == [assign_split(unit_of(t), 0.5) for t in written]
    assert summary.splits.get("train", 0) == sum(t.split == "train" for t in written)


def test_file_and_option_mistakes_exit_2_before_any_work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    apps = str(FIXTURES / "apps" / "test.jsonl")
    cases = [
        (("apps", "--out", "x.jsonl"), "'apps' reads a dataset file: give it"),
        (("humaneval", apps, "--out", "x.jsonl"), "'humaneval' takes no file"),
        (("apps", apps, "--out", "x.jsonl", "--subset", "s"), "takes no option subset"),
        (("apps", apps, "--out", "x.jsonl", "--augment", "3"), "drop --augment"),
        (("apps", str(tmp_path / "none.jsonl"), "--out", "x.jsonl"), "no such file"),
    ]
    for args, message in cases:
        r = invoke("tasks", "import", *args)
        assert r.exit_code == 2, (args, r.output)
        assert message in _flat(r.output), (args, r.output)
    assert list(tmp_path.iterdir()) == []


def test_duplicate_ids_are_an_error_and_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    row = (FIXTURES / "apps" / "test.jsonl").read_text().splitlines()[0]
    (tmp_path / "dup.jsonl").write_text(row + "\n" + row + "\n")
    r = invoke("tasks", "import", "apps", str(tmp_path / "dup.jsonl"), "--out", "o.jsonl")
    assert r.exit_code == 2
    assert "two rows make the task id 'apps/4000'" in _flat(r.output)
    assert not (tmp_path / "o.jsonl").exists()
