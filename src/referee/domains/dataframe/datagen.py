"""Seeded input tables for the dataframe families: a small shop's customers and orders.

Every table is CSV text made with :class:`random.Random` (reproducible on any machine, no numpy
version in the way). :class:`Shape` says how rough the data is: how many rows, how many missing
values, duplicated rows, how skewed the orders are towards one customer, and whether some
regions or categories are left empty. The families draw the visible sample and each hidden set
with a different seed and shape, so a program fitted to the sample meets other values, and every
hidden set carries the edge cases the instruction speaks of.

>>> text = orders_csv(random.Random(0), Shape(rows=3))
>>> text.splitlines()[0]
'order_id,customer_id,order_date,amount,status,category,quantity'
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace

__all__ = [
    "CATEGORIES",
    "CUSTOMERS_SCHEMA",
    "ORDERS_SCHEMA",
    "REGIONS",
    "STOCK_SCHEMA",
    "Shape",
    "customers_csv",
    "hidden_shapes",
    "orders_csv",
    "stock_csv",
    "to_csv",
]

REGIONS = ("north", "south", "east", "west")
CATEGORIES = ("books", "games", "music", "tools")
STATUSES = ("paid", "refunded", "pending")
ORDERS_SCHEMA = {
    "order_id": "int",
    "customer_id": "int",
    "order_date": "date",
    "amount": "float",
    "status": "str",
    "category": "str",
    "quantity": "int",
}
CUSTOMERS_SCHEMA = {"customer_id": "int", "name": "str", "region": "str", "signup_date": "date"}
STOCK_SCHEMA = {"store": "str", "item": "str", "q1": "float", "q2": "float", "q3": "float"}
_START = dt.date(2024, 1, 1)
_PRICES = (9.99, 19.99, 49.99)


@dataclass(frozen=True)
class Shape:
    """How a generated table looks. Rates are per row (or per cell for ``null_rate``)."""

    rows: int = 30
    customers: int = 8
    null_rate: float = 0.05
    dup_rate: float = 0.05
    skew: float = 0.0  # the share of orders that go to customer 1
    days: int = 120  # orders fall in [2024-01-01, + days)
    empty_region: bool = False  # one region gets no customer
    messy: bool = False  # raw text: statuses in mixed case and spaces, amounts as text
    gap: bool = False  # no order in February: an empty month (and weeks) between others
    shuffled: bool = False  # rows not in order_id order
    idle_customers: int = 2  # customers (ids after ``customers``) who never order
    absent_category: bool = False  # no order of the last category


def hidden_shapes(difficulty: float, count: int = 4) -> list[Shape]:
    """The shapes of a task's hidden sets: typical, rough (many missing values and
    duplicates), skewed (one customer holds most orders), and small with empty groups."""
    d = difficulty
    base = Shape(
        rows=int(30 + 170 * d),
        customers=int(6 + 14 * d),
        null_rate=0.03 + 0.12 * d,
        dup_rate=0.04 + 0.1 * d,
        days=int(60 + 240 * d),
    )
    shapes = [
        base,
        replace(base, null_rate=min(0.3, base.null_rate * 2.5), dup_rate=base.dup_rate * 2.5),
        replace(base, skew=0.6, rows=base.rows + 40),
        replace(
            base,
            rows=14,
            customers=5,
            days=90,
            empty_region=True,
            gap=True,
            absent_category=True,
        ),
    ]
    return shapes[:count]


def _fmt(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


def to_csv(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """CSV text; ``None`` is an empty cell. Values never hold commas or quotes here."""
    lines = [",".join(header)]
    lines += [",".join(_fmt(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


def _maybe(rng: random.Random, value: object, rate: float) -> object:
    return None if rng.random() < rate else value


def customers_csv(rng: random.Random, shape: Shape) -> str:
    """``customers``: ids 1..n, a name, a region (missing at ``null_rate``), a signup date."""
    regions = list(REGIONS[:-1] if shape.empty_region else REGIONS)
    rows = []
    for cid in range(1, shape.customers + shape.idle_customers + 1):
        region = regions[(cid - 1) % len(regions)] if cid <= len(regions) else rng.choice(regions)
        rows.append(
            [
                cid,
                f"cust{cid:03d}",
                _maybe(rng, region, shape.null_rate) if cid > len(regions) else region,
                _START - dt.timedelta(days=rng.randrange(0, 400)),
            ]
        )
    return to_csv(list(CUSTOMERS_SCHEMA), rows)


def _messy_status(rng: random.Random, status: str) -> str:
    form = rng.choice([status, status.upper(), status.title(), f" {status}", f"{status} "])
    return form


def orders_csv(
    rng: random.Random,
    shape: Shape,
    *,
    null_customers: bool = True,
    null_dates: bool = False,
    exact_dups: bool = True,
) -> str:
    """``orders`` (``ORDERS_SCHEMA``): unique order ids, customers drawn with ``skew`` towards
    customer 1, missing amounts and quantities (and customers, dates where asked); duplicated
    rows at ``dup_rate`` (exact copies, or, with ``exact_dups`` False, the same order id with
    other values). With ``messy``, statuses and amounts are raw text."""
    rows: list[list[object]] = []
    for i in range(shape.rows):
        oid = 1000 + 3 * i + rng.randint(0, 2)  # unique, in file order
        if rng.random() < shape.skew:
            cid: object = 1
        else:
            cid = rng.randint(1, shape.customers)
        if null_customers:
            cid = _maybe(rng, cid, shape.null_rate)
        offset = rng.randrange(shape.days)
        if shape.gap and 31 <= offset < 60:  # February 2024 left empty
            offset = 60 + (offset - 31) if offset - 31 + 60 < shape.days else offset - 31
        day: object = _START + dt.timedelta(days=offset)
        if null_dates:
            day = _maybe(rng, day, shape.null_rate)
        # List prices often (ties within a customer: ranks and dedupes must handle them).
        amount: object = (
            rng.choice(_PRICES) if rng.random() < 0.4 else round(rng.uniform(1, 200), 2)
        )
        amount = _maybe(rng, amount, shape.null_rate)
        status = rng.choices(STATUSES, weights=(6, 2, 2))[0]
        category = rng.choice(CATEGORIES[:-1] if shape.absent_category else CATEGORIES)
        quantity = _maybe(rng, rng.randint(1, 5), shape.null_rate)
        if shape.messy:
            status = _messy_status(rng, status)
            if amount is None:
                amount = rng.choice(["", "n/a"])
            else:
                amount = rng.choice([f"{amount:.2f}", f" {amount:.2f}", f"{amount:.1f}"])
        rows.append([oid, cid, day, amount, status, category, quantity])
    # At least one duplicate in every table that has any: the dedupe must always matter.
    n_dups = max(1, round(shape.dup_rate * shape.rows)) if rows and shape.dup_rate > 0 else 0
    for _ in range(n_dups):
        src = rng.choice(rows)
        copy = list(src)
        if not exact_dups:
            value = round(rng.uniform(1, 200), 2)
            copy[3] = f"{value:.2f}" if shape.messy else value
            copy[6] = rng.randint(1, 5)
        rows.insert(rng.randrange(len(rows) + 1), copy)
    if shape.shuffled:
        rng.shuffle(rows)
    return to_csv(list(ORDERS_SCHEMA), rows)


def stock_csv(rng: random.Random, shape: Shape) -> str:
    """``stock``: one row per (store, item) with units sold per quarter, some missing, some 0."""
    stores = [f"s{i}" for i in range(1, 2 + shape.customers // 3)]
    items = ["apple", "pear", "plum", "fig", "kiwi", "lime"]
    pairs = [(s, it) for s in stores for it in items]
    rng.shuffle(pairs)
    pairs = sorted(pairs[: max(2, min(len(pairs), shape.rows // 3))])
    rows = []
    for store, item in pairs:
        values = [
            _maybe(rng, float(rng.choice([0, rng.randint(1, 90)])), shape.null_rate * 2)
            for _ in range(3)
        ]
        rows.append([store, item, *values])
    return to_csv(list(STOCK_SCHEMA), rows)
