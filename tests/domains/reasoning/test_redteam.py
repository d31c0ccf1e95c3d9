"""The reasoning corpus holds: no exploit passes or earns more than the empty answer, and the
eval payload never runs."""

from __future__ import annotations

import pytest

pytest.importorskip("reasoning_gym", reason="the reasoning extra (requirements.lock has it)")

from referee.domains import run_corpus


def test_every_exploit_is_held():
    outcomes = run_corpus("reasoning")
    assert len(outcomes) >= 8 * 2 * 10
    broken = [o for o in outcomes if not o.held]
    assert not broken, broken[:5]
