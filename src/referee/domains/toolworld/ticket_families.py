"""Ticket family: ``ticket-triage``.

The difficulty knob adds open tickets to triage (steps), an outage to escalate, a duplicate to
close, a closed ticket of the same requester (which must not be touched) and other requesters'
tickets with near-miss addresses.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from referee.domains.toolworld.names import SUBJECTS, day
from referee.domains.toolworld.scenario import Scenario, dump_sql
from referee.domains.toolworld.tickets import TEAMS, TICKET_SCHEMA

__all__ = ["ticket_triage"]

_TICKET = (
    "INSERT INTO tickets (id, requester, subject, category, priority, status, team, duplicate_of, "
    "created_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def ticket_triage(seed: int, difficulty: float) -> Scenario:
    """Triage one requester's open tickets: team by category, outages urgent, a duplicate closed."""
    rng = random.Random(f"ticket-triage:{seed}")
    today = dt.date(2026, 5, 1) + dt.timedelta(days=rng.randrange(60))
    company = rng.choice(["acme", "globex", "initech", "umbrella"])
    requester = f"ops@{company}.example"
    near = [f"ops@{company}-eu.example", f"op@{company}.example", f"ops@{company}.example.net"]
    rows: list[tuple[str, tuple[Any, ...]]] = []
    next_id = [200 + rng.randrange(100)]

    def add(who: str, category: str, subject: str, status: str = "open") -> int:
        tid = next_id[0]
        next_id[0] += 1 + rng.randrange(2)
        rows.append(
            (
                _TICKET,
                (
                    tid,
                    who,
                    subject,
                    category,
                    "normal",
                    status,
                    None,
                    None,
                    day(today, -rng.randrange(1, 20)),
                ),
            )
        )
        return tid

    n = 1 + int(3 * difficulty)
    mine: list[tuple[int, str, str]] = []
    for i in range(n):
        category = rng.choice(sorted(SUBJECTS))
        subjects = SUBJECTS[category]
        subject = (
            subjects[i % len(subjects)] if category != "bug" or difficulty >= 0.4 else subjects[0]
        )
        mine.append((add(requester, category, subject), category, subject))
    duplicate = None
    if difficulty >= 0.5:
        first_id, category, subject = mine[0]
        duplicate = (add(requester, category, subject), first_id)
    if difficulty >= 0.3:
        add(requester, "billing", "Old invoice question", status="closed")
    for _ in range(2 + int(8 * difficulty)):  # others' tickets, some from near-miss addresses
        category = rng.choice(sorted(SUBJECTS))
        add(rng.choice([*near, "help@other.example"]), category, rng.choice(SUBJECTS[category]))
    reference: list[dict[str, Any]] = [
        {"name": "search_tickets", "arguments": {"requester": requester, "status": "open"}}
    ]
    for tid, category, subject in mine:
        reference.append({"name": "get_ticket", "arguments": {"ticket_id": tid}})
        reference.append(
            {"name": "assign_team", "arguments": {"ticket_id": tid, "team": TEAMS[category]}}
        )
        if "outage" in subject.lower():
            reference.append(
                {"name": "set_priority", "arguments": {"ticket_id": tid, "priority": "urgent"}}
            )
    if duplicate is not None:
        reference.append(
            {
                "name": "close_ticket",
                "arguments": {
                    "ticket_id": duplicate[0],
                    "resolution": "duplicate",
                    "duplicate_of": duplicate[1],
                },
            }
        )
    instruction = (
        f"Triage the open tickets of {requester}: assign each to the team of its category "
        "(billing to billing, bug to tech, question to sales) and set priority 'urgent' on those "
        "whose subject mentions an outage."
        + (
            " If one of them repeats the subject of an earlier open ticket of theirs, close it as "
            "a duplicate of the earlier one instead of triaging it."
            if duplicate is not None
            else ""
        )
    )
    return Scenario(
        family="ticket-triage",
        world="tickets",
        sql=dump_sql(TICKET_SCHEMA, rows),
        instruction=instruction,
        reference=reference,
        checks=[
            (
                "requester's tickets",
                "SELECT id, priority, status, team, duplicate_of FROM tickets "
                f"WHERE requester = '{requester}' ORDER BY id",
            ),
            (
                "others untouched",
                f"SELECT COUNT(*) FROM tickets WHERE requester != '{requester}' "
                "AND (team IS NOT NULL OR status != 'open' OR priority != 'normal')",
            ),
        ],
        context={"today": today.isoformat()},
        structure=(
            f"open={n},duplicate={int(duplicate is not None)},closed={int(difficulty >= 0.3)}"
        ),
        features={"open_tickets": float(n), "distractors": float(len(rows) - n)},
    )
