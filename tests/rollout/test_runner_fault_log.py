"""A server that is down is said once, not once per rollout and retry (issue 20: an
unreachable OpenAI server repeated the same retry line nine times)."""

from __future__ import annotations

import logging

import pytest

from referee.errors import PolicyError
from referee.policy import ScriptedPolicy
from referee.rollout import RolloutRunner
from tests.rollout.fakes import AnswerEnv, Tracker, task


def server_down(messages, tools):  # type: ignore[no-untyped-def]
    raise PolicyError("could not reach http://127.0.0.1:9/v1/chat/completions")


def test_the_same_fault_is_logged_once_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    r = RolloutRunner(
        lambda: AnswerEnv(Tracker()), ScriptedPolicy(server_down), retry_backoff_s=0.0
    )
    with caplog.at_level(logging.WARNING, logger="referee.rollout.runner"):
        out = r.run_sync([task(f"down/{i}") for i in range(3)])
    assert all(t.error is not None and t.error.kind == "infra" for t in out)
    assert sum(t.attempts for t in out) == 9  # each trajectory still records its attempts
    lines = [rec.getMessage() for rec in caplog.records]
    assert len(lines) == 2, lines
    assert "could not reach" in lines[0]
    assert lines[1].startswith("the same policy fault 8 more times")
