"""The toolworld families as :data:`~referee.domains.FamilyGenerator` values (what
``referee tasks generate NAME`` calls).

>>> tasks = shop_refund(2, 0.5, 0)
>>> [t.kind.value for t in tasks], tasks[0].provenance.unit.startswith("toolworld:shop-refund:")
(['toolworld', 'toolworld'], True)
"""

from __future__ import annotations

from referee.domains.toolworld.office_families import calendar_schedule as _calendar
from referee.domains.toolworld.office_families import mail_followup as _mail
from referee.domains.toolworld.scenario import family_generator
from referee.domains.toolworld.shop_families import shop_cancel as _cancel
from referee.domains.toolworld.shop_families import shop_exchange as _exchange
from referee.domains.toolworld.shop_families import shop_refund as _refund
from referee.domains.toolworld.ticket_families import ticket_triage as _triage

__all__ = [
    "FAMILIES",
    "calendar_schedule",
    "mail_followup",
    "shop_cancel",
    "shop_exchange",
    "shop_refund",
    "ticket_triage",
]

shop_refund = family_generator("shop-refund", _refund)
shop_cancel = family_generator("shop-cancel", _cancel)
shop_exchange = family_generator("shop-exchange", _exchange)
calendar_schedule = family_generator("calendar-schedule", _calendar)
mail_followup = family_generator("mail-followup", _mail)
ticket_triage = family_generator("ticket-triage", _triage)

#: Family name -> generator.
FAMILIES = {
    "shop-refund": shop_refund,
    "shop-cancel": shop_cancel,
    "shop-exchange": shop_exchange,
    "calendar-schedule": calendar_schedule,
    "mail-followup": mail_followup,
    "ticket-triage": ticket_triage,
}
