"""referee.train.verl without veRL: rows from `referee tasks export --format verl` judged by
compute_score and compute_score_batch in the real sandbox (veRL's own code path drives them in
tests/trainers/test_verl_contract.py, in the trainer's venv)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.tasks import Task, generate
from referee.tasks.kinds import TaskKind
from referee.tasks.model import write_tasks
from referee.train import verl
from referee.verify.dispatch import VerifierSet
from referee.verify.verdict import Verdict

EXPLOITS = [
    "import sys\nsys.exit(0)\n",  # leave before the checks run
    "```python\nprint('All tests passed')\n```",  # a hard-coded report
]


@pytest.fixture(scope="module")
def tasks(harness_sb) -> list[Task]:
    """Two recorded train tasks, and a held-out one."""
    from referee.verify.record import record_function_tasks

    drafts = [
        generate("list-pipeline", difficulty=0.3, seed=11),
        generate("recurrence", difficulty=0.3, seed=13),
        generate("string-pipeline", difficulty=0.3, seed=12, split="heldout"),
    ]
    return record_function_tasks(harness_sb, drafts)


@pytest.fixture(scope="module", autouse=True)
def verifiers(harness_sb):
    verl.set_verifiers(VerifierSet(harness_sb))
    yield
    verl.set_verifiers(None)


@pytest.fixture(scope="module")
def files(tasks: list[Task], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The task file and both exports, written by the CLI."""
    d = tmp_path_factory.mktemp("verl")
    write_tasks(d / "tasks.jsonl", tasks)
    out: dict[str, Any] = {"tasks": d / "tasks.jsonl"}
    for split in ("train", "heldout"):
        path = d / f"{split}.parquet"
        args = ["tasks", "export", str(d / "tasks.jsonl"), "--format", "verl"]
        args += ["--out", str(path), "--split", split, "--json"]
        res = CliRunner().invoke(app, args)
        assert res.exit_code == 0, res.output
        out[split] = (json.loads(res.stdout), pq.read_table(path).to_pylist())
    return out


def _gold(task: Task) -> str:
    """Prose and a fenced block holding the whole function, as a chat model answers."""
    code = task.payload["code_prompt"] + task.hidden["reference"]
    return f"Here is my solution:\n```python\n{code}```\nIt handles every case."


def _score(row: dict[str, Any], text: str, **kw: Any) -> dict[str, Any]:
    gt = row["reward_model"]["ground_truth"]
    return verl.compute_score(row["data_source"], text, gt, row["extra_info"], **kw)


def test_export_writes_verls_columns_and_keeps_heldout_apart(files, tasks):
    summary, rows = files["train"]
    assert summary["rows"] == 2 and summary["left_out"] == {"heldout": 1}
    assert [r["extra_info"]["task_id"] for r in rows] == [t.id for t in tasks[:2]]
    row = rows[0]
    assert set(row) == {"data_source", "prompt", "ability", "reward_model", "extra_info"}
    assert row["data_source"] == "referee/code" and row["ability"] == "code"
    assert row["prompt"] == [m.model_dump() for m in tasks[0].prompt]
    assert row["reward_model"] == {"style": "rule", "ground_truth": tasks[0].id}
    assert Task.model_validate_json(row["extra_info"]["referee_task"]) == tasks[0]
    # The evaluation file: held-out tasks only, their hidden data left in the task file.
    summary, held = files["heldout"]
    assert summary["left_out"] == {"train": 2} and len(held) == 1
    assert held[0]["extra_info"]["split"] == "heldout"
    assert held[0]["extra_info"]["referee_tasks"] == str(files["tasks"].resolve())
    assert tasks[2].hidden["reference"] not in json.dumps(held)


def test_gold_scores_one_and_empty_or_exploits_zero(files, tasks):
    _, rows = files["train"]
    for row, task in zip(rows, tasks, strict=False):
        got = _score(row, _gold(task))
        assert got["score"] == 1.0 and got["passed"] == 1.0
        assert got["tests_passed"] == got["tests_total"] > 0
        assert set(got) == {"score", "passed", "tests_passed", "tests_total", "hack_flags"}
        for bad in ["", *EXPLOITS]:
            low = _score(row, bad)
            assert low["score"] == 0.0 and low["passed"] == 0.0, (bad, low)


def test_bare_code_and_a_body_are_answers_too(files, tasks):
    row, task = files["train"][1][0], tasks[0]
    assert _score(row, task.payload["code_prompt"] + task.hidden["reference"])["score"] == 1.0
    assert _score(row, task.hidden["reference"], binary=True)["score"] == 1.0


def test_heldout_rows_score_from_their_task_file_and_heldout_tasks_never_train(files, tasks):
    held = files["heldout"][1][0]
    assert _score(held, _gold(tasks[2]))["score"] == 1.0  # an evaluation row
    training = dict(held, extra_info={**held["extra_info"], "split": "train"})
    with pytest.raises(verl.HeldOutTask, match="held out and must never reach training"):
        _score(training, _gold(tasks[2]))
    embedded = {"task_id": tasks[2].id, "referee_task": tasks[2].model_dump_json()}
    with pytest.raises(verl.HeldOutTask, match="split=None"):
        verl.compute_score("referee/code", "x", tasks[2].id, embedded)


def test_a_missing_task_is_an_error_naming_the_fix(files, tasks, monkeypatch):
    monkeypatch.delenv(verl.TASKS_ENV, raising=False)
    with pytest.raises(verl.TaskNotFound, match="referee tasks export"):
        verl.compute_score("referee/code", "x", tasks[0].id, {"split": "train"})
    with pytest.raises(verl.TaskNotFound, match="names no referee task"):
        verl.compute_score("referee/code", "x", None, None)
    with pytest.raises(verl.TaskNotFound, match="no task 'nope/x-v1' in"):
        verl.compute_score("referee/code", "x", "nope/x-v1", None, tasks=str(files["tasks"]))
    # The id alone, with the task file given by the environment: found.
    monkeypatch.setenv(verl.TASKS_ENV, str(files["tasks"]))
    got = verl.compute_score("referee/code", _gold(tasks[1]), tasks[1].id, {"split": "train"})
    assert got["score"] == 1.0
    with pytest.raises(Exception, match="is not the id of the task"):
        _score(dict(files["train"][1][0], reward_model={"ground_truth": tasks[1].id}), "x")


def test_batch_judges_in_order(files, tasks):
    _, rows = files["train"]
    texts = [_gold(tasks[0]), EXPLOITS[0], "", _gold(tasks[1])]
    picked = [rows[0], rows[0], rows[1], rows[1]]
    got = verl.compute_score_batch(
        [r["data_source"] for r in picked],
        texts,
        [r["reward_model"]["ground_truth"] for r in picked],
        [r["extra_info"] for r in picked],
    )
    assert [g["score"] for g in got] == [1.0, 0.0, 0.0, 1.0]


def test_batch_deadline_kills_a_hung_candidate_and_raises(files, tasks):
    _, rows = files["train"]
    hang = "```python\n" + tasks[0].payload["code_prompt"] + "    while True:\n        pass\n```"
    started = time.monotonic()
    with pytest.raises(verl.InfraError, match=r"1 of 2 sample\(s\).*deadline of 2 s passed"):
        verl.compute_score_batch(
            ["referee/code"] * 2,
            [hang, _gold(tasks[1])],
            [r["reward_model"]["ground_truth"] for r in rows],
            [r["extra_info"] for r in rows],
            deadline_s=2.0,
        )
    assert time.monotonic() - started < 3.0


def test_an_infrastructure_error_raises_after_one_retry(files, harness_sb):
    calls = []

    class Broken:
        def verify(self, task: Task, answer: str, /) -> Verdict:
            calls.append(task.id)
            return Verdict.infra(task.id, "sandbox died", "broken")

        def close(self) -> None:
            pass

    verl.set_verifiers(VerifierSet(harness_sb, verifiers={TaskKind.FUNCTION: Broken()}))
    try:
        with pytest.raises(verl.InfraError, match="sandbox died"):
            _score(files["train"][1][0], "x")
        assert len(calls) == 2
    finally:
        verl.set_verifiers(VerifierSet(harness_sb))


def test_unknown_format_and_bad_split_are_refused(files, tmp_path: Path):
    base = ["tasks", "export", str(files["tasks"]), "--out", str(tmp_path / "x.parquet")]
    res = CliRunner().invoke(app, [*base, "--format", "skyrl-nope"])
    assert res.exit_code == 2 and "choose one of: verl" in res.output
    res = CliRunner().invoke(app, [*base, "--format", "verl", "--split", "all"])
    assert res.exit_code == 2 and "'train' or 'heldout'" in res.output
