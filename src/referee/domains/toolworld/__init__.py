"""Agentic tool worlds: simulated applications with typed tools over a SQLite store.

Three built-in worlds (a shop, an office with calendar and mail, a ticketing system), six
families (``shop-refund``, ``shop-exchange``, ``shop-cancel``, ``calendar-schedule``,
``mail-followup``, ``ticket-triage``), judged by the final state of the whole store against
the goal state and by the policy violations in the world's action log (:mod:`.judge`). The
agent only sends tool calls: in the ``toolworld`` environment turn by turn, or as one plan of
calls replayed by the verifier.
Worlds imported as Python modules (source ``toolworld-rows``) run in the sandbox.

Everything registers lazily: importing this package loads none of its modules.

>>> from referee.domains import family_names
>>> family_names("toolworld") # doctest: +NORMALIZE_WHITESPACE
['calendar-schedule', 'mail-followup', 'shop-cancel', 'shop-exchange', 'shop-refund',
 'ticket-triage']
"""

from referee.domains.kit import Domain, FamilyPart, Source
from referee.tasks.kinds import TaskKind

__all__ = ["DOMAIN", "register"]

#: Each family, the function of :mod:`.families` that makes it, and what it asks for.
_FAMILIES = {
    "shop-refund": ("shop_refund", "refund delivered orders within the window"),
    "shop-exchange": ("shop_exchange", "exchange an order for a cheaper variant"),
    "shop-cancel": ("shop_cancel", "cancel a pending order (confirm first), change an address"),
    "calendar-schedule": ("calendar_schedule", "schedule a meeting at the earliest free hour"),
    "mail-followup": ("mail_followup", "mail a follow-up to a meeting's attendees"),
    "ticket-triage": ("ticket_triage", "triage a requester's open tickets"),
}

DOMAIN = Domain(
    "toolworld",
    package=__name__,
    kind=TaskKind.TOOLWORLD,
    families={
        name: FamilyPart(
            f"families:{function}", f"tool world: {what} (final store + policy judged)"
        )
        for name, (function, what) in _FAMILIES.items()
    },
    verifier="verifier:make_verifier",
    count_tests="verifier:count_tests",
    env="env:ToolworldEnv",
    sources=(
        Source(
            "toolworld-rows",
            "imports:toolworld_rows",
            "tool-world tasks: a world module + SQLite file, JSONL rows with goal assertions",
        ),
    ),
    corpus="redteam:run_corpus",
)


def register() -> None:
    """Simulated applications with typed tools, judged by the final store and the policy."""
    DOMAIN.register()
