"""The seeded generator of the shop databases every SQL family asks about.

One schema, four tables (``customers``, ``products``, ``orders``, ``order_items``), with the
things that make SQL go wrong: NULLs (a city, a tier, a status, a price left blank), duplicates
(customers who share a name, an article listed twice, an order line entered twice), dates and
prices on a coarse grid (so a bound like ``>= '2024-03-01'`` meets rows *on* it and ``>`` differs
from ``>=``), keys that point at nothing on record (an order of a deleted customer, a line of a
deleted product: an inner join differs from an outer one), orders without lines, customers
without orders and products never sold, and skewed groups (a few customers place most orders).
Each instance of a task draws its own contents from its own seed and a *profile* (plain,
NULL-heavy, duplicate-heavy, small), so a query that only fits the sample shown in the prompt,
or ignores NULLs, duplicates or missing keys, fails somewhere.

>>> db = generate_database(seed=1, size=0.0)
>>> db.table_names
['customers', 'products', 'orders', 'order_items']
>>> generate_database(seed=1, size=0.0) == db
True
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from referee.domains.sql.database import Database, Table

__all__ = [
    "CATEGORIES",
    "CITIES",
    "PROFILES",
    "STATUSES",
    "TIERS",
    "generate_database",
    "order_dates",
    "price_grid",
    "signup_dates",
]

CITIES = ("Lisbon", "Oslo", "Quito", "Lima", "Kyoto", "Perth")
FIRST_NAMES = (
    "Ana", "Ben", "Chen", "Dara", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun",
    "Kim", "Lea", "Max", "Nia", "Omar", "Pia", "Raj", "Sol", "Tom", "Uma",
)  # fmt: skip
LAST_NAMES = ("Silva", "Berg", "Mora", "Sato", "Khan", "Novak", "Reyes", "Ito")
CATEGORIES = ("books", "garden", "toys", "tools", "music")
STATUSES = ("shipped", "pending", "cancelled", "returned")
TIERS = ("gold", "silver", "bronze")
#: plain, NULL-heavy, duplicate-heavy, small: instance ``i`` of a task uses ``PROFILES[i % 4]``.
PROFILES = ("plain", "nulls", "duplicates", "small")


def price_grid() -> list[float]:
    """The prices products take: multiples of 2.5 from 5 to 60 (thresholds come from it too)."""
    return [2.5 * k for k in range(2, 25)]


def order_dates() -> list[str]:
    """The dates orders fall on: the 1st, 10th and 20th of each month of 2023 and 2024."""
    return [
        date(y, m, d).isoformat() for y in (2023, 2024) for m in range(1, 13) for d in (1, 10, 20)
    ]


def signup_dates() -> list[str]:
    """The dates customers sign up on: the 1st and 15th of each month of 2021 to 2023."""
    return [
        date(y, m, d).isoformat() for y in (2021, 2022, 2023) for m in range(1, 13) for d in (1, 15)
    ]


def generate_database(
    seed: int,
    size: float = 0.5,
    profile: str = "plain",
    *,
    shuffle: bool = False,
    anchors: Sequence[tuple[str, Mapping[str, Any]]] = (),
) -> Database:
    """A shop database drawn from ``seed``; ``size`` in [0, 1] scales the row counts and
    ``profile`` (one of :data:`PROFILES`) shifts the NULL, duplicate and orphan rates.

    ``shuffle`` stores each table's rows in a random order (a query without ORDER BY then
    meets them out of id order); each anchor ``(table, {column: value})`` overwrites those
    columns of a random row of the table, so that rows sit exactly on a question's bounds."""
    rng = random.Random(f"referee-sql-db:{seed}:{size:.3f}:{profile}")
    db = _draw(rng, size, profile)
    if not anchors and not shuffle:
        return db
    tables = []
    for t in db.tables:
        rows = [list(r) for r in t.rows]
        names = t.column_names
        for table, values in anchors:
            if table == t.name and rows:
                row = rows[rng.randrange(len(rows))]
                for column, value in values.items():
                    row[names.index(column)] = value
        if shuffle:
            rng.shuffle(rows)
        tables.append(Table(t.name, t.columns, tuple(map(tuple, rows))))
    return Database(tuple(tables))


def _draw(rng: random.Random, size: float, profile: str) -> Database:
    null_rate = {"plain": 0.08, "nulls": 0.3, "duplicates": 0.05, "small": 0.1}[profile]
    dup_rate = {"plain": 0.05, "nulls": 0.03, "duplicates": 0.25, "small": 0.0}[profile]
    # Rows whose key points at nothing on record (a deleted customer or product): they tell
    # an inner join from an outer one.
    orphan_rate = {"plain": 0.04, "nulls": 0.08, "duplicates": 0.04, "small": 0.0}[profile]
    scale = 0.4 if profile == "small" else 1.0
    n_customers = max(5, int((10 + 30 * size) * scale * rng.uniform(0.8, 1.2)))
    n_products = max(4, int((8 + 14 * size) * scale * rng.uniform(0.8, 1.2)))
    n_orders = max(6, int(n_customers * rng.uniform(1.8, 3.0)))

    def maybe(value: Any, rate: float = null_rate) -> Any:
        return None if rng.random() < rate else value

    customers: list[list[Any]] = []
    signups = signup_dates()
    for cid in range(1, n_customers + 1):
        if customers and rng.random() < dup_rate:
            name = rng.choice(customers)[1]  # a namesake: same name, another customer
        else:
            name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        customers.append(
            [
                cid,
                name,
                maybe(rng.choice(CITIES)),
                rng.choice(signups),
                maybe(rng.choice(TIERS), null_rate * 2),
            ]
        )
    grid = price_grid()
    products: list[list[Any]] = []
    for pid in range(1, n_products + 1):
        if products and rng.random() < dup_rate:  # the same article twice: prices tie
            products.append([pid, products[-1][1], products[-1][2], products[-1][3]])
            continue
        products.append(
            [pid, f"item-{pid:02d}", rng.choice(CATEGORIES), maybe(rng.choice(grid), null_rate / 2)]
        )
    # Skewed: customer k is chosen with weight 1/k; a fifth of them never order at all.
    buyers = [c[0] for c in customers if rng.random() > 0.2] or [customers[0][0]]
    weights = [1.0 / (i + 1) for i in range(len(buyers))]
    rng.shuffle(buyers)
    dates = order_dates()
    orders: list[list[Any]] = []
    for oid in range(1, n_orders + 1):
        buyer = rng.choices(buyers, weights)[0]
        if rng.random() < orphan_rate:
            buyer = n_customers + rng.randint(1, 3)
        orders.append(
            [
                oid,
                buyer,
                rng.choice(dates),
                maybe(rng.choices(STATUSES, (6, 2, 1, 1))[0], null_rate / 2),
            ]
        )
    sold = [p for p in products if rng.random() > 0.15] or products[:1]
    items: list[list[Any]] = []
    for order in orders:
        lines = 0 if rng.random() < orphan_rate else rng.randint(1, 3)  # some orders: no lines
        for product in rng.sample(sold, k=min(len(sold), lines)):
            base = product[3] if product[3] is not None else rng.choice(grid)
            line = [order[0], product[0], rng.randint(1, 5), base]
            if rng.random() < orphan_rate:
                line[1] = n_products + rng.randint(1, 3)
            elif rng.random() < orphan_rate / 2:
                line[0] = n_orders + rng.randint(1, 3)
            items.append(line)
            if rng.random() < dup_rate:
                items.append(list(line))  # the same line entered twice
    return Database(
        (
            Table(
                "customers",
                (
                    ("id", "INTEGER"),
                    ("name", "TEXT"),
                    ("city", "TEXT"),
                    ("signup_date", "DATE"),
                    ("tier", "TEXT"),
                ),
                tuple(map(tuple, customers)),
            ),
            Table(
                "products",
                (("id", "INTEGER"), ("name", "TEXT"), ("category", "TEXT"), ("price", "REAL")),
                tuple(map(tuple, products)),
            ),
            Table(
                "orders",
                (
                    ("id", "INTEGER"),
                    ("customer_id", "INTEGER"),
                    ("order_date", "DATE"),
                    ("status", "TEXT"),
                ),
                tuple(map(tuple, orders)),
            ),
            Table(
                "order_items",
                (
                    ("order_id", "INTEGER"),
                    ("product_id", "INTEGER"),
                    ("quantity", "INTEGER"),
                    ("unit_price", "REAL"),
                ),
                tuple(map(tuple, items)),
            ),
        )
    )
