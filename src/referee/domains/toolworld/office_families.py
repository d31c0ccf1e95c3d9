"""Office families: ``calendar-schedule`` and ``mail-followup``.

The difficulty knob adds attendees (steps), busier calendars, events on the days next to the
asked one (near-miss dates), people with similar names, a meeting of the same title on another
day, and replies that exclude some attendees from a follow-up.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from referee.domains.toolworld.names import TITLES, day, person
from referee.domains.toolworld.office import OFFICE_SCHEMA
from referee.domains.toolworld.scenario import Scenario, dump_sql

__all__ = ["calendar_schedule", "mail_followup"]

_EVENT = (
    "INSERT INTO events (id, title, day, start_hour, end_hour, organizer_id, attendees) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_MAIL = (
    "INSERT INTO mail (id, sender_id, recipient_id, subject, body, sent_on) "
    "VALUES (?, ?, ?, ?, ?, ?)"
)
ME = 1


class _Office:
    def __init__(self, rng: random.Random, people: int) -> None:
        self.rng = rng
        self.today = dt.date(2026, 4, 1) + dt.timedelta(days=rng.randrange(60))
        self.rows: list[tuple[str, tuple[Any, ...]]] = []
        taken: set[str] = set()
        self.people: dict[int, str] = {}
        for pid in range(1, people + 1):
            name = person(rng, taken)
            self.people[pid] = name
            email = name.lower().replace(" ", ".") + "@corp.example"
            self.rows.append(("INSERT INTO people VALUES (?, ?, ?)", (pid, name, email)))
        self.next_event = 10 + rng.randrange(20)
        self.next_mail = 50 + rng.randrange(20)
        self.busy: dict[tuple[str, int], set[int]] = {}

    def event(
        self, title: str, on: str, start: int, end: int, organizer: int, people: list[int]
    ) -> int:
        eid = self.next_event
        self.next_event += 1
        attendees = sorted({*people, organizer})
        self.rows.append(
            (_EVENT, (eid, title, on, start, end, organizer, ",".join(map(str, attendees))))
        )
        for pid in attendees:
            self.busy.setdefault((on, pid), set()).update(range(start, end))
        return eid

    def mail(self, sender: int, recipient: int, subject: str, on: str) -> None:
        self.rows.append(
            (_MAIL, (self.next_mail, sender, recipient, subject, "Thanks, noted.", on))
        )
        self.next_mail += 1

    def sql(self) -> str:
        return dump_sql(OFFICE_SCHEMA, self.rows)


def calendar_schedule(seed: int, difficulty: float) -> Scenario:
    """Schedule a meeting with some colleagues at the earliest hour all are free that day."""
    rng = random.Random(f"calendar-schedule:{seed}")
    office = _Office(rng, 6 + int(8 * difficulty))
    k = 1 + int(3 * difficulty)
    duration = 2 if difficulty >= 0.5 else 1
    guests = rng.sample(sorted(p for p in office.people if p != ME), k)
    target = day(office.today, 1 + rng.randrange(10))
    everyone = [ME, *guests]
    # Busy hours on the day itself, more of them with difficulty, leaving a slot free.
    for _ in range(1 + int(6 * difficulty)):
        pid = rng.choice(everyone)
        start = rng.randrange(9, 16)
        office.event(rng.choice(TITLES) + " prep", target, start, start + 1, pid, [pid])
    # Near-miss dates: the neighbouring days are busy early, where a misread day would fit.
    for offset in (-1, 1) if difficulty >= 0.3 else ():
        office.event("Offsite", day(dt.date.fromisoformat(target), offset), 9, 13, ME, guests)
    slot = next(
        (
            h
            for h in range(9, 18 - duration)
            if not any(
                set(range(h, h + duration)) & office.busy.get((target, p), set()) for p in everyone
            )
        ),
        None,
    )
    if slot is None:  # a day too full: start again with the next seed's draw
        return calendar_schedule(seed + 10_000, difficulty)
    title = rng.choice(TITLES)
    names = ", ".join(office.people[g] for g in guests)
    instruction = (
        f"Please schedule a {duration}-hour meeting titled '{title}' on {target} with {names}, "
        "at the earliest whole hour from 9:00 (ending by 17:00) when all of us, you included, "
        "are free."
    )
    reference: list[dict[str, Any]] = [
        {"name": "find_person", "arguments": {"name": office.people[g]}} for g in guests
    ]
    reference += [
        {"name": "list_events", "arguments": {"person_id": p, "day": target}} for p in everyone
    ]
    reference.append(
        {
            "name": "create_event",
            "arguments": {
                "title": title,
                "day": target,
                "start_hour": slot,
                "duration_hours": duration,
                "attendee_ids": sorted(guests),
            },
        }
    )
    return Scenario(
        family="calendar-schedule",
        world="office",
        sql=office.sql(),
        instruction=instruction,
        reference=reference,
        checks=[
            (
                "the meeting",
                "SELECT day, start_hour, end_hour, attendees FROM events "
                f"WHERE title = '{title}' AND day = '{target}'",
            ),
            ("event count", "SELECT COUNT(*) FROM events"),
        ],
        context={"today": office.today.isoformat(), "me": ME},
        structure=f"attendees={k},hours={duration},near={int(difficulty >= 0.3)}",
        features={
            "attendees": float(k),
            "busy_events": float(len(office.rows) - len(office.people)),
        },
    )


def mail_followup(seed: int, difficulty: float) -> Scenario:
    """Mail a follow-up to the attendees of a past meeting (not those who already replied)."""
    rng = random.Random(f"mail-followup:{seed}")
    office = _Office(rng, 6 + int(8 * difficulty))
    title = rng.choice(TITLES)
    others = sorted(p for p in office.people if p != ME)
    attendees = rng.sample(others, 2 + int(3 * difficulty))
    held = day(office.today, -1 - rng.randrange(5))
    office.event(title, held, 10, 11, ME, attendees)
    if difficulty >= 0.3:  # the same title on another day, with other people
        office.event(
            title, day(office.today, -8 - rng.randrange(5)), 14, 15, ME, rng.sample(others, 3)
        )
    replied: list[int] = []
    if difficulty >= 0.5:
        replied = attendees[: 1 + int(difficulty >= 0.8)]
        for pid in replied:
            office.mail(pid, ME, f"Re: {title}", office.today.isoformat())
        stranger = next(p for p in others if p not in attendees)
        office.mail(stranger, ME, f"Re: {title}", office.today.isoformat())  # not an attendee
    for _ in range(int(6 * difficulty)):  # unrelated mail
        office.mail(rng.choice(others), ME, rng.choice(TITLES) + " notes", held)
    subject = f"Follow-up: {title}"
    recipients = [p for p in attendees if p not in replied]
    instruction = (
        f"Send a mail with subject '{subject}' (write any short body) to every attendee of the "
        f"'{title}' meeting held on {held}, except me"
        + (
            f", and except those who already wrote to me with subject 'Re: {title}'"
            if replied
            else ""
        )
        + ". One mail per person."
    )
    reference: list[dict[str, Any]] = [{"name": "find_events", "arguments": {"title": title}}]
    reference.append(
        {
            "name": "get_event",
            "arguments": {"event_id": office.next_event - (2 if difficulty >= 0.3 else 1)},
        }
    )
    if replied:
        reference.append({"name": "list_inbox", "arguments": {"subject": f"Re: {title}"}})
    reference += [
        {
            "name": "send_mail",
            "arguments": {
                "recipient_id": p,
                "subject": subject,
                "body": "Thanks for joining; notes follow.",
            },
        }
        for p in sorted(recipients)
    ]
    return Scenario(
        family="mail-followup",
        world="office",
        sql=office.sql(),
        instruction=instruction,
        reference=reference,
        checks=[
            (
                "recipients",
                f"SELECT recipient_id FROM mail WHERE subject = '{subject}' ORDER BY recipient_id",
            ),
            ("mail count", "SELECT COUNT(*) FROM mail"),
        ],
        context={"today": office.today.isoformat(), "me": ME},
        structure=(
            f"attendees={len(attendees)},replied={len(replied)},same_title={int(difficulty >= 0.3)}"
        ),
        features={"recipients": float(len(recipients)), "distractors": float(len(office.rows))},
    )
