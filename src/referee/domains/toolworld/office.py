"""The office world: people, a shared calendar and mail, seen as one user (``context["me"]``).

Tools find people and events, create events and send mail. Policies (logged as violations,
see :mod:`referee.domains.toolworld.world`):

* ``double-booking``: a new event overlaps an event of one of its attendees (the organizer
  included) on the same day;
* ``working-hours``: a new event starts before 9:00 or ends after 17:00;
* ``duplicate-mail``: the same subject sent to the same person twice.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from referee.domains.toolworld.world import Args, ToolError, World, tool

__all__ = ["OfficeWorld"]

OFFICE_SCHEMA = """
CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT NOT NULL);
CREATE TABLE events (id INTEGER PRIMARY KEY, title TEXT NOT NULL, day TEXT NOT NULL,
                     start_hour INTEGER NOT NULL, end_hour INTEGER NOT NULL,
                     organizer_id INTEGER NOT NULL, attendees TEXT NOT NULL);
CREATE TABLE mail (id INTEGER PRIMARY KEY, sender_id INTEGER NOT NULL,
                   recipient_id INTEGER NOT NULL, subject TEXT NOT NULL, body TEXT NOT NULL,
                   sent_on TEXT NOT NULL);
"""
_DAY = r"^\d{4}-\d{2}-\d{2}$"


class NameArgs(Args):
    name: str = Field(max_length=100)


class DayArgs(Args):
    person_id: int
    day: str = Field(pattern=_DAY)


class TitleArgs(Args):
    title: str = Field(max_length=200)


class EventArgs(Args):
    event_id: int


class NewEventArgs(Args):
    title: str = Field(min_length=1, max_length=200)
    day: str = Field(pattern=_DAY)
    start_hour: int = Field(ge=0, le=23)
    duration_hours: int = Field(ge=1, le=8)
    attendee_ids: list[int] = Field(min_length=1, max_length=20)


class MailArgs(Args):
    recipient_id: int
    subject: str = Field(min_length=1, max_length=200)
    body: str = Field(max_length=2000)


class InboxArgs(Args):
    subject: str = Field(default="", max_length=200)


def _ids(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


class OfficeWorld(World):
    """See the module docstring."""

    name = "office"
    schema_sql = OFFICE_SCHEMA
    free_text = {"mail": ["body"]}
    policy = (
        "Office policy: never double-book anyone (a new event must not overlap an event of any "
        "attendee or of you on that day); events lie within working hours, 9:00 to 17:00; never "
        "send the same subject to the same person twice. You act as yourself; hours are whole."
    )

    @property
    def me(self) -> int:
        return int(self.context.get("me", 1))

    @tool("Find people whose name contains the text (case-insensitive).")
    def find_person(self, a: NameArgs) -> list[dict[str, Any]]:
        found = self.rows(
            "SELECT id AS person_id, name, email FROM people "
            "WHERE instr(lower(name), lower(?)) > 0 ORDER BY id",
            (a.name,),
        )
        if not found:
            raise ToolError(f"no person named like {a.name!r}")
        return found

    @tool("A person's events on one day (ISO date), as organizer or attendee.")
    def list_events(self, a: DayArgs) -> list[dict[str, Any]]:
        self.one("SELECT id FROM people WHERE id = ?", (a.person_id,), f"person {a.person_id}")
        return [
            {k: e[k] for k in ("event_id", "title", "start_hour", "end_hour")}
            for e in self._events(a.day)
            if a.person_id in e["people"]
        ]

    @tool("Events with exactly this title: id, day, hours.")
    def find_events(self, a: TitleArgs) -> list[dict[str, Any]]:
        return self.rows(
            "SELECT id AS event_id, title, day, start_hour, end_hour FROM events WHERE title = ? "
            "ORDER BY day, start_hour",
            (a.title,),
        )

    @tool("One event in full: its organizer and attendees' ids.")
    def get_event(self, a: EventArgs) -> dict[str, Any]:
        row = dict(
            self.one("SELECT * FROM events WHERE id = ?", (a.event_id,), f"event {a.event_id}")
        )
        row["attendee_ids"] = _ids(row.pop("attendees"))
        return row

    @tool("Create an event you organize, with these attendees (you are added).")
    def create_event(self, a: NewEventArgs) -> dict[str, Any]:
        people = sorted({*a.attendee_ids, self.me})
        for pid in people:
            self.one("SELECT id FROM people WHERE id = ?", (pid,), f"person {pid}")
        end = a.start_hour + a.duration_hours
        if a.start_hour < 9 or end > 17:
            self.violation("working-hours")
        for e in self._events(a.day):
            if e["start_hour"] < end and a.start_hour < e["end_hour"] and set(people) & e["people"]:
                self.violation("double-booking")
                break
        cur = self.db.execute(
            "INSERT INTO events (title, day, start_hour, end_hour, organizer_id, attendees) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (a.title, a.day, a.start_hour, end, self.me, ",".join(map(str, people))),
        )
        return {"event_id": cur.lastrowid}

    @tool("Send a mail from you to one person.")
    def send_mail(self, a: MailArgs) -> dict[str, Any]:
        self.one(
            "SELECT id FROM people WHERE id = ?", (a.recipient_id,), f"person {a.recipient_id}"
        )
        if self.db.execute(
            "SELECT 1 FROM mail WHERE sender_id = ? AND recipient_id = ? AND subject = ?",
            (self.me, a.recipient_id, a.subject),
        ).fetchone():
            self.violation("duplicate-mail")
        cur = self.db.execute(
            "INSERT INTO mail (sender_id, recipient_id, subject, body, sent_on) "
            "VALUES (?, ?, ?, ?, ?)",
            (self.me, a.recipient_id, a.subject, a.body, self.today),
        )
        return {"mail_id": cur.lastrowid}

    @tool("Mail sent to you, optionally only with this exact subject: sender id, subject, date.")
    def list_inbox(self, a: InboxArgs) -> list[dict[str, Any]]:
        sql = "SELECT id AS mail_id, sender_id, subject, sent_on FROM mail WHERE recipient_id = ?"
        params: tuple[Any, ...] = (self.me,)
        if a.subject:
            sql, params = sql + " AND subject = ?", (*params, a.subject)
        return self.rows(sql + " ORDER BY id", params)

    def _events(self, day: str) -> list[dict[str, Any]]:
        events = self.rows("SELECT * FROM events WHERE day = ? ORDER BY start_hour, id", (day,))
        for e in events:
            e["event_id"] = e["id"]
            e["people"] = {*_ids(e["attendees"]), e["organizer_id"]}
        return events
