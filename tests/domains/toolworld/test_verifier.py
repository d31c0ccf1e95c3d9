"""The toolworld verifier: the whole store, the goal assertions and the policy decide."""

import json
import sqlite3

import pytest

from referee.domains import generate_family
from referee.domains.toolworld.calls import parse_calls
from referee.domains.toolworld.verifier import ToolworldVerifier
from referee.verify.dispatch import VerifierSet


@pytest.fixture(scope="module")
def verifier():
    v = ToolworldVerifier()
    yield v
    v.close()


def status(verdict, name):
    return next(t.status for t in verdict.tests if t.name == name)


def plan(task):
    return json.loads(task.hidden["reference"])


def test_hermes_tool_call_blocks_in_a_models_text_are_replayed(verifier):
    t = generate_family("shop-refund", count=1, difficulty=0.4, seed=2)[0]
    text = (
        "Let me help.\n"
        + "\n".join(f"<tool_call>{json.dumps(c)}</tool_call>" for c in plan(t))
        + "\nAll refunded!"
    )
    assert verifier.verify(t, text).passed


def test_a_plan_in_a_fenced_json_block_is_replayed_and_prose_alone_is_not(verifier):
    t = generate_family("shop-refund", count=1, difficulty=0.4, seed=2)[0]
    text = "Here is my plan:\n```json\n" + json.dumps(plan(t)) + "\n```\nDone."
    assert verifier.verify(t, text).passed
    assert verifier.verify(t, "```json\n[]\n```\nI refunded it.").reward == 0.0


def test_cancel_without_confirmation_reaches_the_goal_state_but_fails_on_policy(verifier):
    t = generate_family("shop-cancel", count=1, difficulty=0.2, seed=4)[0]
    skipped = [c for c in plan(t) if c["name"] != "confirm_with_user"]
    v = verifier.verify(t, json.dumps(skipped))
    assert status(v, "store") == "passed" and status(v, "policy") == "failed"
    assert not v.passed and v.reward == 0.0 and "confirm-before-cancel" in v.tests[-1].detail


def test_an_extra_change_anywhere_in_the_store_fails_the_store_test(verifier):
    t = generate_family("ticket-triage", count=1, difficulty=0.0, seed=4)[0]
    db = sqlite3.connect(":memory:")
    db.executescript(t.payload["init_sql"])
    requester = plan(t)[0]["arguments"]["requester"]
    other = db.execute("SELECT id FROM tickets WHERE requester != ?", (requester,)).fetchone()[0]
    extra = [
        *plan(t),
        {"name": "set_priority", "arguments": {"ticket_id": other, "priority": "low"}},
    ]
    v = verifier.verify(t, json.dumps(extra))
    assert not v.passed
    # The assertions on the target rows may hold; the diff of the whole store does not.
    assert status(v, "store") == "failed" and "unexpected changes" in v.tests[0].detail


def test_wrong_arguments_get_the_worlds_real_errors_and_change_nothing():
    from referee.domains.toolworld.session import open_session

    t = generate_family("shop-refund", count=1, difficulty=0.0, seed=1)[0]
    session = open_session(t)
    try:
        missing = session.call("get_order", {"order_id": 99999})
        typed = session.call("refund_order", {"order_id": "seventeen", "amount_cents": 5})
        extra = session.call("get_customer", {"customer_id": 1, "actor": "admin"})
        unknown = session.call("drop_tables", {})
        assert missing.observation() == "error: order 99999 not found"
        assert "invalid arguments for refund_order: order_id" in typed.error
        assert "actor" in extra.error and "Extra inputs" in extra.error
        assert "unknown tool 'drop_tables'" in unknown.error and not unknown.violations
        assert session.dump() == session.initial
    finally:
        session.close()


def test_calls_that_cannot_be_read_become_errors_not_crashes():
    calls = parse_calls('[{"name": "a", "arguments": "{bad"}, 3, {"arguments": {}}]')
    assert [bool(c.error) for c in calls] == [True, True, True]
    assert parse_calls("<tool_call>{not json</tool_call>")[0].error


def test_dispatch_judges_toolworld_tasks_by_kind():
    t = generate_family("calendar-schedule", count=1, difficulty=0.5, seed=2)[0]
    with VerifierSet() as vs:
        verdicts = list(vs.verify_many([(t, t.hidden["reference"]), (t, "[]")]))
    assert [v.passed for v in verdicts] == [True, False]
    assert verdicts[0].verifier == "toolworld@1"


def test_a_chat_transcript_is_replayed_by_its_assistant_tool_calls(verifier):
    t = generate_family("shop-cancel", count=1, difficulty=0.0, seed=6)[0]
    transcript = [{"role": "user", "content": "..."}]
    for i, c in enumerate(plan(t)):
        fn = {"name": c["name"], "arguments": json.dumps(c["arguments"])}
        transcript.append(
            {"role": "assistant", "content": "", "tool_calls": [{"id": str(i), "function": fn}]}
        )
        transcript.append({"role": "tool", "tool_call_id": str(i), "content": "ok (forged)"})
    assert verifier.verify(t, json.dumps(transcript)).passed
    assert not verifier.verify(t, json.dumps(transcript[:-4])).passed
