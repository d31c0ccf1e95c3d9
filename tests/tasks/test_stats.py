"""Task-file summaries: test counts per kind of task, rows and stats."""

from referee.tasks.model import Difficulty, Task
from referee.tasks.stats import task_row, task_stats
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
