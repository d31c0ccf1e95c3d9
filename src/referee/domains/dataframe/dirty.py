"""Seeded dirty inputs for the ``df-pipeline`` family: a raw ``shipments`` export.

Columns: ``shipment_id`` (int), ``version`` (int), ``site``, ``shipped_on``, ``delivered_on``,
``weight``, ``qty``. Each *kind of dirt* a task declares makes its column raw text with the
forms below; the kinds a task does not declare leave their columns clean (typed):

========== ===================================================================================
kind       what the raw export holds
========== ===================================================================================
duplicates exact repeated rows, and re-sent shipments (same id, a higher ``version``, other
           values), the newer version sometimes earlier in the file
categories ``site`` in mixed case, padded with spaces, or as a one-letter code (``N``, ``s``)
dates      dates as ``2024-03-05``, ``2024/03/05`` or ``05.03.2024`` (day first); some ship
           dates impossible (``2024-02-30``) or words
units      ``weight`` with a unit: ``12.5 kg``, ``800 g``, ``3.20 lb``, or a bare number (kg)
types      ``qty`` as text: `` 3``, ``03``, ``3.0``, and some that are no whole number
missing    missing weights and quantities
outliers   weights that cannot be (negative, zero, a ton and more)
cross      delivery dates before the ship date
========== ===================================================================================

Every table holds every form of its kinds at least once (the first rows are forced through
them, then the rows are shuffled), so a 14-row sample and each hidden set exercise every rule
the instruction states; the values, ids and mix differ with the seed.

>>> text = shipments_csv(random.Random(0), Shape(rows=12), frozenset({"units"}))
>>> text.splitlines()[0]
'shipment_id,version,site,shipped_on,delivered_on,weight,qty'
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Collection

from referee.domains.dataframe.datagen import Shape, to_csv

__all__ = ["COLUMNS", "KINDS", "SITES", "input_schema", "shipments_csv"]

#: The kinds of dirt, in the order the pipeline cleans them.
KINDS = ("duplicates", "categories", "dates", "units", "types", "missing", "outliers", "cross")
SITES = ("north", "south", "east", "west")
COLUMNS = ("shipment_id", "version", "site", "shipped_on", "delivered_on", "weight", "qty")
_START = dt.date(2024, 1, 1)
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%d.%m.%Y")
_BAD_DATES = ("2024-02-30", "2024-13-01", "unknown", "soon")
_BAD_QTY = ("three", "2.5", "n/a", "?")
_LB = 0.45359237
_FORCED = 11  # rows 0..10 are forced through the forms (see _row)


def input_schema(kinds: Collection[str]) -> dict[str, str]:
    """The input columns' types: raw text where a declared kind of dirt lives, typed elsewhere."""
    return {
        "shipment_id": "int",
        "version": "int",
        "site": "str",
        "shipped_on": "str" if "dates" in kinds else "date",
        "delivered_on": "str" if "dates" in kinds else "date",
        "weight": "str" if "units" in kinds else "float",
        "qty": "str" if "types" in kinds else "int",
    }


def _site(rng: random.Random, kinds: Collection[str], force: int | None) -> str:
    site = rng.choice(SITES)
    if "categories" not in kinds:
        return site
    forms = [site.upper(), site.title(), f" {site} ", site[0].upper(), site[0], f"{site} "]
    if force is not None:
        return forms[force % len(forms)]
    return rng.choice([site, site, *forms])


def _date(rng: random.Random, day: dt.date | None, kinds: Collection[str], fmt: int | None) -> str:
    if day is None:
        return ""
    if "dates" not in kinds:
        return day.isoformat()
    return day.strftime(_DATE_FORMATS[fmt if fmt is not None else rng.randrange(3)])


def _weight(rng: random.Random, kg: float | None, kinds: Collection[str], form: int | None) -> str:
    if kg is None:
        return ""
    if "units" not in kinds:
        return f"{kg:.2f}"
    form = form if form is not None else rng.choice([0, 0, 1, 2, 3, 4])
    if form == 1:
        return f"{kg * 1000:.0f} g"
    if form == 2:
        return f"{kg / _LB:.2f} lb"
    if form == 3:
        return f"{kg:.2f}"  # a bare number: kilograms
    if form == 4:
        return f"{kg:.2f}kg"
    return f"{kg:.2f} kg"


def _qty(rng: random.Random, q: int | None, kinds: Collection[str], form: int | None) -> str:
    if q is None:
        return ""
    if "types" not in kinds:
        return str(q)
    forms = [f" {q}", f"0{q}", f"{q}.0", rng.choice(_BAD_QTY)]
    if form is not None:
        return forms[form]
    if rng.random() < 0.08:
        return forms[3]
    return rng.choice([str(q), str(q), *forms[:3]])


def _row(rng: random.Random, i: int, oid: int, shape: Shape, kinds: Collection[str]) -> list[str]:
    """Row ``i`` (the first ones forced through each form of each kind)."""
    shipped = _START + dt.timedelta(days=rng.randrange(max(shape.days, 1)))
    delivered: dt.date | None = shipped + dt.timedelta(days=rng.randint(0, 12))
    if rng.random() < 0.15:
        delivered = None  # not delivered yet: a missing delivery date is no dirt
    if "cross" in kinds and (i == 10 or (i > 14 and rng.random() < 0.1)):
        delivered = shipped - dt.timedelta(days=rng.randint(1, 6))
    kg: float | None = round(rng.uniform(0.2, 60.0), 2)
    if "outliers" in kinds and (i in (3, 4) or (i > 14 and rng.random() < 0.07)):
        assert kg is not None
        pick = {3: rng.choice([0, 1]), 4: rng.choice([2, 3])}.get(i, rng.randrange(4))
        kg = [-kg, 0.0, kg * 1000, 99999.0][pick]
    qty: int | None = rng.randint(1, 20)
    if "missing" in kinds and (i == 5 or (i > 14 and rng.random() < shape.null_rate)):
        kg = None
    if "missing" in kinds and (i == 6 or (i > 14 and rng.random() < shape.null_rate)):
        qty = None
    ship_text = _date(rng, shipped, kinds, i - 6 if 7 <= i <= 8 else None)
    if "dates" in kinds and (i == 9 or (i > 14 and rng.random() < 0.05)):
        ship_text = rng.choice(_BAD_DATES)
    return [
        str(oid),
        "1",
        _site(rng, kinds, i if i < 4 else None),
        ship_text,
        _date(rng, delivered, kinds, None),
        _weight(rng, kg, kinds, i if i < 5 else None),
        _qty(rng, qty, kinds, i if i < 4 else None),
    ]


def _doomed(rng: random.Random, row: list[str], kinds: Collection[str]) -> list[str]:
    """``row`` with a value that one of the task's dropping steps removes (where it has one)."""
    row = list(row)
    if "dates" in kinds:
        row[3] = rng.choice(_BAD_DATES)
    elif "missing" in kinds:
        row[5] = ""
    elif "outliers" in kinds:
        row[5] = _weight(rng, 99999.0, kinds, 0)
    return row


def shipments_csv(rng: random.Random, shape: Shape, kinds: Collection[str]) -> str:
    """The raw ``shipments`` table (CSV) with ``shape.rows`` shipments and the dirt ``kinds``."""
    n = max(shape.rows, _FORCED + 3)
    rows = [_row(rng, i, 5000 + 7 * i + rng.randint(0, 6), shape, kinds) for i in range(n)]
    # Re-sends replace a row's values: only rows past the forced ones are re-sent, so that no
    # forced form is replaced (or dropped with a doomed newer version).
    # Rows 11 to 14 carry no dropping dirt: a doomed newer version of one of them makes the
    # order of the steps show (the older version would survive the filters).
    plain, kept = rows[_FORCED:], rows[_FORCED : _FORCED + 4]
    rng.shuffle(rows)
    if "duplicates" in kinds:
        for k in range(max(4, round(shape.dup_rate * n))):
            exact = k == 0 or (k >= 4 and rng.random() < 0.4)
            src = rng.choice(rows if exact else kept if k == 3 else plain)
            at = rows.index(src)
            if exact:  # an exact repeat, later in the file
                rows.insert(rng.randrange(at + 1, len(rows) + 1), list(src))
                continue
            # Re-sent with a higher version and another weight and quantity: listed before the
            # older row (k == 1), after it (k == 2), or (k == 3) with a value a later step
            # drops, so that deduplicating after the filters keeps the older row instead.
            resent = _row(rng, 20, int(src[0]), shape, kinds)
            copy = [*src[:5], *resent[5:]]
            copy[1] = str(max(int(r[1]) for r in rows if r[0] == src[0]) + 1)
            if k == 3:
                copy = _doomed(rng, copy, kinds)
            before = k == 1 or (k >= 4 and rng.random() < 0.5)
            spot = rng.randrange(0, at + 1) if before else rng.randrange(at + 1, len(rows) + 1)
            rows.insert(spot, copy)
    return to_csv(list(COLUMNS), rows)
