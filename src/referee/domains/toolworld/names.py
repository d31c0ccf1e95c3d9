"""Seeded names, products, dates and subjects the families draw from (small fixed pools, so a
seed gives the same world on every machine)."""

from __future__ import annotations

import datetime as dt
import random

__all__ = ["FIRST", "LAST", "PRODUCTS", "SUBJECTS", "TITLES", "day", "person"]

FIRST = [
    "Ana",
    "Ben",
    "Chloe",
    "Dev",
    "Elif",
    "Farid",
    "Grace",
    "Hugo",
    "Ines",
    "Jon",
    "Kira",
    "Liam",
]
LAST = ["Lopez", "Lopes", "Berg", "Bergman", "Okafor", "Novak", "Silva", "Sato", "Khan", "Moreau"]
#: (name, price in cents); neighbours are near-misses of each other ("Blue mug", "Blue mug XL").
PRODUCTS = [
    ("Blue mug", 1200),
    ("Blue mug XL", 1500),
    ("Desk lamp", 3900),
    ("Desk lamp mini", 2900),
    ("Wool scarf", 2500),
    ("Wool scarf kids", 1800),
    ("Phone case", 1500),
    ("Phone case slim", 1700),
    ("Notebook A5", 800),
    ("Notebook A4", 1100),
    ("Water bottle", 2000),
    ("Water bottle steel", 2600),
]
TITLES = [
    "Design review",
    "Budget sync",
    "Hiring panel",
    "Roadmap check-in",
    "Launch retro",
    "Vendor call",
]
SUBJECTS = {
    "billing": ["Charged twice", "Invoice missing", "Refund not received", "Wrong VAT on invoice"],
    "bug": ["App crashes on login", "Export button broken", "Outage in EU region", "Sync outage"],
    "question": ["How to add a seat", "Do you offer discounts", "API rate limits", "SSO setup"],
}


def day(base: dt.date, offset: int) -> str:
    """``base`` plus ``offset`` days, as an ISO date."""
    return (base + dt.timedelta(days=offset)).isoformat()


def person(rng: random.Random, taken: set[str]) -> str:
    """A full name not in ``taken`` (added to it)."""
    while True:
        name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
        if name not in taken:
            taken.add(name)
            return name
