"""The function-level verifier on HumanEval: canonical solutions, wrong ones, infra failures."""

import pytest

from referee.errors import SandboxError
from referee.verify.function import FunctionVerifier


def test_all_164_canonical_solutions_pass_repeatably(humaneval, verifier):
    for _ in range(2):
        verdicts = verifier.verify_many([(t, t.hidden["reference"]) for t in humaneval.values()])
        failed = [(v.task_id, v.counts(), v.infra_error) for v in verdicts if not v.passed]
        assert failed == []
        assert all(v.reward == 1.0 for v in verdicts)


def test_recording_captured_the_tests_inputs(humaneval):
    assert len(humaneval) == 164
    assert all(len(t.hidden["inputs"]) == len(t.hidden["expected"]) > 0 for t in humaneval.values())
    assert sum(len(t.hidden["inputs"]) for t in humaneval.values()) > 1000


def test_a_wrong_solution_fails_with_partial_credit(humaneval, verifier):
    task = humaneval["HumanEval/2"]  # truncate_number, wrong below 3
    v = verifier.verify(task, "    return number - int(number) if number > 3 else 0.0\n")
    assert not v.passed and 0 < v.reward < 1
    assert {t.status for t in v.tests} == {"passed", "failed"}


def test_a_different_but_correct_answer_is_accepted_by_the_tasks_own_test(humaneval, verifier):
    task = humaneval["HumanEval/32"]  # find_zero: any root is right
    # Scans from the right, so it finds the largest root where the reference finds another.
    bisection = """
    x = 100.0
    while poly(xs, x) * poly(xs, x - 0.5) > 0 and x > -1e6:
        x -= 0.5
    lo, hi = x - 0.5, x
    for _ in range(200):
        mid = (lo + hi) / 2
        if poly(xs, lo) * poly(xs, mid) <= 0:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2
"""
    v = verifier.verify(task, bisection)
    assert v.passed, v
    assert any("accepted by the task's own test" in t.detail for t in v.tests)
    assert "replay_s" in v.timings


def test_a_wrong_root_is_rejected_by_the_replay(humaneval, verifier):
    v = verifier.verify(humaneval["HumanEval/32"], "    return 0.123\n")
    assert not v.passed


def test_outcomes_are_type_strict_before_replay(humaneval, verifier):
    task = humaneval["HumanEval/0"]
    # Returning 1/0 instead of True/False differs from the reference; the task's own test
    # (`assert candidate(...) == True`) accepts it, as plain Python would.
    as_ints = (
        task.hidden["reference"]
        .replace("return True", "return 1")
        .replace("return False", "return 0")
    )
    v = verifier.verify(task, as_ints)
    assert v.passed and "replay_s" in v.timings


def test_a_sandbox_failure_is_an_infra_error_never_a_pass(humaneval, harness_sb):
    class BrokenSandbox:
        preload = harness_sb.preload
        python_workers = 1

        def run_python(self, *a, **k):
            raise SandboxError("injected fault")

    v = FunctionVerifier(BrokenSandbox()).verify(humaneval["HumanEval/1"], "    return []\n")
    assert v.infra_error and "injected fault" in v.infra_error
    assert not v.passed and v.reward == 0.0


def test_a_task_without_recorded_tests_is_an_infra_error(verifier):
    from referee.tasks.humaneval import humaneval_tasks

    draft = humaneval_tasks()[0]
    v = verifier.verify(draft, draft.hidden["reference"])
    assert v.infra_error and "missing inputs" in v.infra_error


@pytest.mark.parametrize("timeout_case", ["    import time\n    time.sleep(30)\n"])
def test_timeouts_are_failures(humaneval, verifier, timeout_case):
    v = verifier.verify(humaneval["HumanEval/2"], timeout_case)
    assert not v.passed and all(t.status in ("timeout", "missing") for t in v.tests)


def test_a_verifier_crash_is_an_infra_error(humaneval, verifier, monkeypatch):
    def boom(*a, **k):
        raise RuntimeError("bug in the verifier")

    monkeypatch.setattr(verifier, "_judge", boom)
    task = humaneval["HumanEval/0"]
    v = verifier.verify(task, task.hidden["reference"])
    assert not v.passed and v.reward == 0.0 and "verifier crashed" in v.infra_error
