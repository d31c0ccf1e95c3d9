"""The ``df-pipeline`` family: a multi-step cleaning pipeline over a dirty export, judged by a
declared data contract and by the reference's output on hidden dirty inputs.

A task draws some kinds of dirt (:data:`referee.domains.dataframe.dirty.KINDS`: duplicates,
categories, dates, units, types, missing values, outliers, cross-column errors); the difficulty
knob sets how many, from 2 at difficulty 0 to all 8 at 1. The instruction is a numbered list of
cleaning steps, one per kind, in a fixed order (so the order is part of the task: a shipment
re-sent with a bad ship date is dropped, not replaced by its older version). The reference is
written step by step from the same choices. Every task declares the same output, a clean
``shipments`` table, and its data contract (:func:`contract_for`): types, nullability, unique
ids, allowed sites, plausible weights and dates, a delivery never before its shipment. The
contract is in the payload and the prompt shows it as pandera code.

The variant (the sorted kinds) is the held-out unit (``provenance.unit``).

>>> plan = pipeline_plan(random.Random("df-pipeline:0"), 0.0)
>>> plan.steps
2
>>> sorted(contract_for(set(KINDS))["columns"])[:3]
['delivered_on', 'qty', 'shipment_id']
"""

from __future__ import annotations

import random
from collections.abc import Collection
from typing import Any

from referee.domains.dataframe.dirty import KINDS, SITES, input_schema, shipments_csv
from referee.domains.dataframe.plan import Plan

__all__ = [
    "OUTPUT_COLUMNS",
    "STEP_LINES",
    "contract_for",
    "kinds_for",
    "pipeline_plan",
    "reference",
]

OUTPUT_COLUMNS = ("shipment_id", "site", "shipped_on", "delivered_on", "weight_kg", "qty")
#: What each step asks (the instruction's sentence).
_SAID = {
    "duplicates": "drop rows that exactly repeat an earlier row; then a shipment listed more "
    "than once (the same shipment_id) keeps only its row with the highest `version`",
    "categories": "`site`: strip spaces and make it lower case; the one-letter codes n, s, e, w "
    "(any case) mean north, south, east, west",
    "dates": "`shipped_on` and `delivered_on` are text in three formats: 2024-03-05, 2024/03/05 "
    "and 05.03.2024 (day first); anything else (an impossible date such as 2024-02-30, a word) "
    "is missing; drop the rows without a `shipped_on`",
    "units": "`weight` is text: a number and a unit kg, g or lb (1 lb = 0.45359237 kg), with or "
    "without a space between; a number without a unit is kg. `weight_kg` is the weight in "
    "kilograms",
    "types": "`qty` is text: a whole number, possibly padded with spaces, with leading zeros or "
    "a '.0' (' 3', '03', '3.0' are all 3); anything else ('2.5', 'three', 'n/a') is missing",
    "missing": "drop the rows without a weight; a missing `qty` is 1",
    "outliers": "drop the rows whose weight_kg cannot be: 0 or less, or more than 1000",
    "cross": "a `delivered_on` before `shipped_on` is an entry error: make it missing",
}
#: The reference's lines for each step (``s`` is the table being cleaned).
STEP_LINES: dict[str, list[str]] = {
    "duplicates": [
        "s = s.drop_duplicates()",
        's = s.sort_values(["shipment_id", "version"])',
        's = s.drop_duplicates("shipment_id", keep="last")',
    ],
    "categories": [
        'site = s["site"].str.strip().str.lower()',
        's["site"] = site.replace({"n": "north", "s": "south", "e": "east", "w": "west"})',
    ],
    "dates": [
        's["shipped_on"] = _date(s["shipped_on"])',
        's["delivered_on"] = _date(s["delivered_on"])',
        's = s[s["shipped_on"].notna()]',
    ],
    "units": [
        'm = s["weight"].str.strip().str.extract(r"^(-?[0-9]+(?:\\.[0-9]+)?)\\s*(kg|g|lb)?$")',
        'factor = m[1].map({"kg": 1.0, "g": 0.001, "lb": 0.45359237}).fillna(1.0)',
        's["weight_kg"] = (pd.to_numeric(m[0]) * factor).astype("float64")',
    ],
    "types": [
        'q = pd.to_numeric(s["qty"].str.strip(), errors="coerce")',
        's["qty"] = q.where(q % 1 == 0).astype("Int64")',
    ],
    "missing": [
        's = s[s["weight_kg"].notna()]',
        's["qty"] = s["qty"].fillna(1)',
    ],
    "outliers": ['s = s[(s["weight_kg"] > 0) & (s["weight_kg"] <= 1000)]'],
    "cross": ['s["delivered_on"] = s["delivered_on"].mask(s["delivered_on"] < s["shipped_on"])'],
}
_DATE_HELPER = [
    "def _date(col):",
    "    t = col.str.strip()",
    '    iso = pd.to_datetime(t.str.replace("/", "-"), format="%Y-%m-%d", errors="coerce")',
    '    dotted = pd.to_datetime(t, format="%d.%m.%Y", errors="coerce")',
    "    return iso.fillna(dotted)",
]
_SHORT = {
    "duplicates": "dup",
    "categories": "cat",
    "dates": "date",
    "units": "unit",
    "types": "type",
    "missing": "miss",
    "outliers": "out",
    "cross": "cross",
}


def kinds_for(rng: random.Random, difficulty: float) -> tuple[str, ...]:
    """The kinds of dirt of a task at ``difficulty`` (2 at 0, 8 at 1), in cleaning order."""
    n = 2 + round(max(0.0, min(1.0, difficulty)) * (len(KINDS) - 2))
    picked = set(rng.sample(KINDS, n))
    return tuple(k for k in KINDS if k in picked)


def reference(kinds: Collection[str], skip: str | None = None) -> str:
    """The reference pipeline for ``kinds`` (with ``skip``, the same without that step's
    lines: a plausible wrong answer, for tests and the bench)."""
    lines = ["import pandas as pd", ""]
    if "dates" in kinds and skip != "dates":
        lines += [*_DATE_HELPER, "", ""]
    lines += ["def transform(tables):", '    s = tables["shipments"].copy()']
    for kind in KINDS:
        if kind in kinds and kind != skip:
            lines += [f"    # {kind}"] + [f"    {line}" for line in STEP_LINES[kind]]
    if "units" not in kinds or skip == "units":
        lines = _place_weight(lines)
    lines.append(f"    return s[{list(OUTPUT_COLUMNS)!r}].reset_index(drop=True)")
    return "\n".join(lines) + "\n"


def _place_weight(lines: list[str]) -> list[str]:
    # Without the units step, weight_kg is the weight column as it is (kg, a float; raw text
    # when the step was skipped on purpose): set right after the copy.
    at = lines.index('    s = tables["shipments"].copy()') + 1
    return [*lines[:at], '    s["weight_kg"] = s["weight"]', *lines[at:]]


def contract_for(kinds: Collection[str]) -> dict[str, Any]:
    """The data contract of the clean table (the same for every task but ``qty``'s
    nullability: a quantity that is no whole number stays missing unless missing ones are
    filled)."""
    qty_nullable = "types" in kinds and "missing" not in kinds
    return {
        "name": "shipments_clean",
        "strict": True,
        "columns": {
            "shipment_id": {"type": "int", "unique": True, "checks": [{"ge": 1}]},
            "site": {"type": "str", "checks": [{"isin": list(SITES)}]},
            "shipped_on": {
                "type": "datetime",
                "checks": [{"in_range": ["2024-01-01", "2025-12-31"]}],
            },
            "delivered_on": {"type": "datetime", "nullable": True},
            "weight_kg": {
                "type": "float",
                "checks": [{"in_range": [0, 1000], "include_min": False}],
            },
            "qty": {"type": "int", "nullable": qty_nullable, "checks": [{"ge": 1}]},
        },
        "row_checks": [{"column": "delivered_on", "op": "ge", "other": "shipped_on"}],
    }


def pipeline_plan(rng: random.Random, difficulty: float) -> Plan:
    """The design of one ``df-pipeline`` task (see the module docstring)."""
    kinds = kinds_for(rng, difficulty)
    steps = [_SAID[k] for k in kinds]
    if "units" not in kinds:
        steps.insert(0, "`weight` is already in kilograms: `weight_kg` is `weight`")
    numbered = "\n".join(f"{i}. {step}." for i, step in enumerate(steps, 1))
    instruction = (
        "Clean the raw `shipments` export into one row per shipment, applying these steps in "
        f"this order:\n{numbered}\n"
        "Output columns: shipment_id, site, shipped_on (a date), delivered_on (a date, missing "
        "when not delivered), weight_kg (float), qty (int). The output must satisfy the data "
        "contract below; the hidden exports hold other shipments with the same kinds of dirt."
    )
    return Plan(
        variant="+".join(_SHORT[k] for k in kinds),
        instruction=instruction,
        reference=reference(kinds),
        schema={"shipments": input_schema(kinds)},
        make_inputs=lambda r, s: {"shipments": shipments_csv(r, s, kinds)},
        rules=[],
        steps=len(kinds),
        contract=contract_for(kinds),
    )
