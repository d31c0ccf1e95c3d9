"""The pytest verifier on small repository tasks, and the exploit patches of its red team."""

import pytest

from referee.verify.redteam_pytest import PYTEST_EXPLOITS, repository_tasks, run_pytest_corpus


@pytest.fixture(scope="module")
def tasks():
    return repository_tasks()


@pytest.fixture(scope="module")
def pv():
    from referee.verify.pytest_verifier import PytestVerifier

    with PytestVerifier(timeout_s=60) as v:
        yield v


def test_reference_patches_pass_and_empty_patches_fail(tasks, pv):
    for task in tasks:
        good = pv.verify(task, task.hidden["reference_patch"])
        assert good.passed and good.reward == 1.0, good
        assert {t.detail for t in good.tests} == {"FAIL_TO_PASS", "PASS_TO_PASS"}
        empty = pv.verify(task, "")
        assert not empty.passed and empty.reward == 0.0  # nothing fixed: old tests earn nothing
        assert {t.status for t in empty.tests if t.detail == "PASS_TO_PASS"} == {"passed"}


def test_a_patch_that_does_not_apply_is_the_candidates_failure(tasks, pv):
    v = pv.verify(tasks[0], "--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-x\n+y\n")
    assert not v.passed and v.infra_error is None
    assert "does not apply" in v.tests[0].detail


@pytest.mark.hostile
@pytest.mark.parametrize("exploit", PYTEST_EXPLOITS, ids=[e.name for e in PYTEST_EXPLOITS])
def test_exploit_patches_are_rejected_on_every_task(tasks, pv, exploit):
    [result] = run_pytest_corpus(pv, tasks, [exploit])  # the rule `referee redteam` applies
    assert result.rejected and result.max_reward == 0.0, (exploit.name, result)
    for task, v in zip(tasks, result.verdicts, strict=True):
        assert not v.passed, (exploit.name, task.id, v)
        assert v.infra_error is None, v.infra_error
        f2p = [t for t in v.tests if t.detail.startswith("FAIL_TO_PASS")]
        assert f2p and all(t.status != "passed" for t in f2p), (exploit.name, task.id, v)
        assert v.reward == 0.0, (exploit.name, task.id, v.reward)


def test_a_fix_that_breaks_an_old_test_earns_partial_reward(tasks, pv):
    from referee.verify.redteam_pytest import diff

    task = tasks[0]  # calc: fixing add() while breaking sub()
    old = task.payload["files"]["calc/ops.py"]
    patch = diff("calc/ops.py", old, old.replace("a - b", "a + b"))
    v = pv.verify(task, patch)
    assert not v.passed and v.reward == 0.0  # F2P fixed, the only P2P broken: 1 x 0


def test_forged_reports_are_caught_by_the_canaries(tasks, pv):
    forger = next(e for e in PYTEST_EXPLOITS if e.name == "register-forging-plugin")
    for task in tasks:
        v = pv.verify(task, forger.make(task))
        assert "forged-report" in {f.kind for f in v.flags} and v.reward == 0.0


def test_patches_touching_tests_or_config_are_flagged(tasks, pv):
    for name in ("edit-the-tests", "pytest-ini-deselects", "conftest-forces-pass"):
        exploit = next(e for e in PYTEST_EXPLOITS if e.name == name)
        flags = pv.verify(tasks[0], exploit.make(tasks[0])).flags
        assert "touches-tests-or-config" in {f.kind for f in flags}


def test_a_grader_that_cannot_start_is_an_infra_error_not_a_zero(tasks):
    from referee.sandbox import Sandbox
    from referee.verify.pytest_verifier import PytestVerifier

    # A sandbox without the grader's pytest: the runner fails before any candidate code runs.
    with Sandbox(python_workers=1) as sb:
        v = PytestVerifier(sb).verify(tasks[0], tasks[0].hidden["reference_patch"])
    assert v.infra_error and "did not start" in v.infra_error
    assert not v.passed and v.reward == 0.0


def test_the_corpus_rule_counts_a_passed_fail_to_pass_or_an_infra_error_as_getting_through():
    from referee.verify.redteam_pytest import PatchExploitResult
    from referee.verify.verdict import TestOutcome, Verdict

    def verdict(**kw):
        return Verdict(task_id="t", reward=0.0, passed=False, **kw)

    f2p_failed = TestOutcome(name="a", status="failed", detail="FAIL_TO_PASS")
    f2p_passed = TestOutcome(name="a", status="passed", detail="FAIL_TO_PASS")
    exploit = PYTEST_EXPLOITS[0]
    assert PatchExploitResult(exploit, (verdict(tests=(f2p_failed,)),)).rejected
    assert not PatchExploitResult(exploit, (verdict(tests=(f2p_passed,)),)).rejected
    assert not PatchExploitResult(exploit, (verdict(tests=()),)).rejected  # nothing ran
    infra = verdict(tests=(f2p_failed,), infra_error="sandbox died")
    assert not PatchExploitResult(exploit, (infra,)).rejected
    paid = Verdict(task_id="t", reward=0.5, passed=False, tests=(f2p_failed,))
    assert not PatchExploitResult(exploit, (paid,)).rejected
