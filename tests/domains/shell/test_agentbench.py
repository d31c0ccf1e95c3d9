"""The ``agentbench-os`` import on a few real records of inspect-evals' AgentBench OS data: the
gold passes and an empty answer fails in the sandbox, wrong answers fail as inspect-evals'
scorer fails them (its comparison scripts, run in the check), and a record that cannot be
reproduced here is refused with a one-line reason."""

from __future__ import annotations

import doctest

import pytest

import referee.domains.shell.agentbench as agentbench
from referee.domains.shell.agentbench import ANSWER_FILE, load_records, record_row
from referee.domains.shell.imports import validated_tasks
from referee.tasks.imports.rows import Row, RowError
from referee.tasks.model import Task


def _record(subset: str, number: int) -> dict:
    return next(r for r in load_records(subset) if r["id"] == number)


def _task(subset: str, number: int) -> Task:
    data = record_row(subset, _record(subset, number), f"agentbench {subset}")
    rows = [Row(f"agentbench {subset}", number, data, by_line=False)]
    (task,) = validated_tasks(rows, "heldout", source="agentbench-os")
    return task


def _says(text: str) -> str:
    return f"printf '%s\\n' '{text}' > {ANSWER_FILE}"


def test_the_package_ships_both_splits():
    assert len(load_records("dev")) == 26 and len(load_records("test")) == 119


def test_an_integer_question_is_judged_by_the_packages_integer_match(shell_verifier):
    # dev 17: "Find out count of linux users on this system" (example: getent passwd | wc -l)
    task = _task("dev", 17)
    assert task.id == "agentbench-os/dev-17" and ANSWER_FILE in task.user_prompt
    assert shell_verifier.verify(task, task.hidden["reference"]).passed
    assert not shell_verifier.verify(task, "").passed
    count = "$(getent passwd | wc -l)"
    right = f'echo "{count}" > {ANSWER_FILE}'
    assert shell_verifier.verify(task, right).passed
    wrong = f'echo "$(( {count} + 1 ))" > {ANSWER_FILE}'
    assert not shell_verifier.verify(task, wrong).passed
    # integer-match.py compares int(a) == int(b): padding passes there, and so here
    assert shell_verifier.verify(task, f'echo "  {count}" > {ANSWER_FILE}').passed


def test_a_match_question_with_a_background_writer(shell_verifier):
    # dev 0: a process writes 'succeed' every second; the answer is the interval (match "1")
    task = _task("dev", 0)
    assert shell_verifier.verify(task, _says("1")).passed
    assert not shell_verifier.verify(task, _says("2")).passed
    assert not shell_verifier.verify(task, _says(" 1")).passed  # str(match) == submission


def test_a_record_whose_init_script_the_package_lacks_is_refused():
    with pytest.raises(RowError, match=r"init/stock-log\.sh of the AgentBench repository"):
        record_row("test", _record("test", 0), "agentbench test")


def test_a_record_whose_gold_cannot_run_here_is_refused_naming_the_failure():
    data = record_row("dev", _record("dev", 18), "agentbench dev")  # useradd in its init
    bad: list[RowError] = []
    rows = [Row("agentbench dev", 18, data, by_line=False)]
    assert list(validated_tasks(rows, "heldout", bad.append, source="agentbench-os")) == []
    assert len(bad) == 1 and "useradd" in str(bad[0]) and "\n" not in str(bad[0])


def test_paths_move_into_the_systems_root():
    assert agentbench._home("cat /root/log /home/jack/x /usr/bin /tmp/a") == (
        "cat /workspace/root/log /workspace/home/jack/x /workspace/root/bin /workspace/tmp/a"
    )


def test_docstrings():
    assert doctest.testmod(agentbench).failed == 0
