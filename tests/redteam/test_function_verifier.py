"""The exploit corpus against the function-level verifier: every exploit is rejected."""

import pytest

from referee.verify.redteam import EXPLOITS, REDTEAM_TASKS, run_corpus

pytestmark = pytest.mark.hostile

TARGETS = tuple(f"HumanEval/{i}" for i in REDTEAM_TASKS)  # what `referee redteam` attacks


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


@pytest.mark.parametrize(
    "payload",
    [
        "'[' * 100000",  # a frame nested too deep for the JSON parser
        "json.dumps({'i': 0, 'out': ['list', [['list', [['list', []]]]]] * 1}) + '[' * 5000",
        "json.dumps({'i': 0, 'out': 5})",
        "json.dumps([1, 2, 3])",
    ],
)
def test_malformed_frames_cannot_turn_a_failure_into_an_infra_error(humaneval, verifier, payload):
    # The channel's prefix (with its nonce) is in the harness module, which the candidate
    # can import like anything else: it forges a frame and exits.
    code = f"""
    import json, os, referee_harness as H
    os.write(1, H._CHANNEL.prefix + ({payload}).encode() + b'\\n')
    os._exit(0)
"""
    v = verifier.verify(humaneval["HumanEval/0"], code)
    assert v.infra_error is None and not v.passed and v.reward == 0.0
