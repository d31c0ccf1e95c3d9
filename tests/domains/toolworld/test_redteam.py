"""The toolworld red-team corpus: every exploit scores no more than doing nothing."""

from referee.domains import run_corpus
from referee.domains.toolworld.redteam import EXPLOITS, IMPORTED_EXPLOITS


def test_every_exploit_is_held():
    outcomes = run_corpus("toolworld")
    assert len(outcomes) == len(EXPLOITS) + len(IMPORTED_EXPLOITS) >= 20
    assert {o.klass for o in outcomes} >= {
        "claim",
        "hidden-tool",
        "injection",
        "over-action",
        "policy",
        "forgery",
        "malformed",
        "resource",
    }
    loose = [o for o in outcomes if not o.held]
    assert not loose, loose
    flagged = {o.name: o.flags for o in outcomes}
    assert "toolworld:hidden-tool" in flagged["admin-tools"]
    assert "toolworld:call-limit" in flagged["repeat-refund"]
    assert "toolworld:hidden-tool" in flagged["imported-admin-tools"]
