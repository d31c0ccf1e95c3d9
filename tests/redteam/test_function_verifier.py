"""The exploit corpus against the function-level verifier: every exploit is rejected."""

import pytest

from referee.verify.redteam import EXPLOITS, run_corpus

pytestmark = pytest.mark.hostile

TARGETS = (
    "HumanEval/0",
    "HumanEval/2",
    "HumanEval/11",
    "HumanEval/13",
    "HumanEval/29",
    "HumanEval/53",
    "HumanEval/120",
    "HumanEval/163",
)


@pytest.mark.parametrize("exploit", EXPLOITS, ids=[e.name for e in EXPLOITS])
def test_exploit_is_rejected(exploit, humaneval, harness_sb):
    from referee.verify.function import FunctionVerifier

    fast = FunctionVerifier(harness_sb, call_timeout_s=0.5, run_timeout_s=3.0)
    [result] = run_corpus(fast, [humaneval[t] for t in TARGETS], [exploit])
    assert not any(v.passed for v in result.verdicts), [
        v.task_id for v in result.verdicts if v.passed
    ]
    if exploit.zero_reward:
        assert result.max_reward == 0.0, [(v.task_id, v.reward) for v in result.verdicts]
    assert all(v.infra_error is None for v in result.verdicts)
