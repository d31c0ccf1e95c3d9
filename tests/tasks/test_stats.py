"""Task-file summaries: test counts per kind of task, rows and stats."""

from referee.tasks.model import Difficulty, Task
from referee.tasks.stats import stats_lines, task_row, task_stats
from referee.verify.dispatch import count_tests

FUNC = Task.create(name="d/f-v1", prompt="f", split="heldout", hidden={"inputs": [[1], [2], [3]]})
REPO = Task.create(
    name="d/r-v1",
    prompt="r",
    answer_format="patch",
    split="train",
    payload={"kind": "bugfix"},
    hidden={"fail_to_pass": ["a"], "pass_to_pass": ["b", "c"]},
    difficulty=Difficulty(estimate=0.5),
)
GEN = Task.create(
    split="heldout",
    name="d/t-v1",
    prompt="t",
    kind="test-writing",
    answer_format="patch",
    hidden={"mutants": [1, 2]},
    payload={"kind": "testgen"},
)


def test_count_tests_by_what_the_task_holds():
    assert [count_tests(t) for t in (FUNC, REPO, GEN)] == [3, 3, 2]
    assert count_tests(Task.create(name="d/e-v1", prompt="e")) == 0


def test_row_and_stats():
    assert task_row(REPO, count_tests) == {
        "id": "d/r-v1", "split": "train", "domain": REPO.domain, "answer_format": "patch",
        "tests": 3,
    }  # fmt: skip
    stats = task_stats([FUNC, REPO, GEN], count_tests)
    assert stats["tasks"] == 3 and stats["by_split"] == {"heldout": 2, "train": 1}
    assert stats["by_kind"] == {"function": 1, "bugfix": 1, "testgen": 1}
    assert stats["difficulty_mean"] == 0.5
    assert (stats["tests_total"], stats["tests_min"], stats["tests_max"]) == (8, 2, 3)
    assert (
        task_stats([], count_tests)["tests_min"] == 0
        and task_stats([], count_tests)["difficulty_mean"] is None
    )


def test_stats_lines_read_as_text_largest_count_first():
    lines = stats_lines(task_stats([FUNC, REPO, GEN], count_tests))
    assert lines[:2] == ["tasks: 3", "by split: heldout 2, train 1"]
    assert "by kind: bugfix 1, function 1, testgen 1" in lines
    assert "difficulty mean: 0.5" in lines and "tests: 8 (per task 2 to 3)" in lines
    assert not any(c in "".join(lines) for c in "{}'")  # never a Python dict
    assert "by split: none" in stats_lines(task_stats([], count_tests))


def test_stats_lines_say_the_kinds_once_when_both_counts_agree():
    # issue 33: "by kind" and "by task kind" printed the same counts twice.
    lines = stats_lines(task_stats([FUNC, FUNC], count_tests))
    kinds = [line for line in lines if " kind: " in line]
    assert kinds == ["by kind: function 2"], lines
    # Synthesized tasks: what synth made differs from their typed kinds, so both are shown.
    lines = stats_lines(task_stats([FUNC, REPO, GEN], count_tests))
    assert "by task kind: function 1, repo-patch 1, test-writing 1" in lines
