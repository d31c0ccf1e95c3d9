"""The dataframe task families: seeded, with a difficulty knob from 0 to 1.

* ``df-clean``: dedupe (exact rows or by key), normalise text, cast text to numbers, fill
  missing values, drop rows without an amount (harder);
* ``df-join-aggregate``: join orders to customers, filter by status, group (per region, inner;
  or per customer, left, customers without orders kept) and aggregate (more aggregates harder);
* ``df-pivot``: long to wide (a column per category, absent ones too) or wide to long (melt);
* ``df-window``: per-customer running totals, ranks (``min`` or ``dense``), rolling means;
* ``df-dates``: month or week buckets with the empty periods between filled;
* ``df-pipeline``: a multi-step cleaning pipeline over a dirty export, with a declared data
  contract (its plan is made in :mod:`referee.domains.dataframe.pipelines`).

The variant (the choices above) is the held-out unit (``provenance.unit``).

Difficulty adds steps (more aggregates, filters, window columns), rows, and rougher data
(missing values, duplicates, skew). Each family writes its reference as a program with the
task's contract; :mod:`referee.domains.dataframe.build` runs it on the visible sample and on
four hidden sets (typical, rough, skewed, small with empty groups).

>>> [t.provenance.unit for t in generate("df-window", 1, 0.5, 3)]              # doctest: +SKIP
['df-window/min-k3']
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from referee.domains.dataframe import datagen as G
from referee.domains.dataframe.build import Draft, build_tasks
from referee.domains.dataframe.names import FAMILY_NAMES
from referee.domains.dataframe.pipelines import pipeline_plan
from referee.domains.dataframe.plan import InputMaker, Plan
from referee.tasks.model import Task

__all__ = ["FAMILIES", "InputMaker", "Plan", "draft_for", "generate", "plan_for"]


# ---- df-clean ------------------------------------------------------------------------------
def _clean(rng: random.Random, d: float) -> Plan:
    by_key = rng.random() < 0.5
    fill = rng.choice([0, 1])
    drop_missing = d >= 0.6
    lines = ["import pandas as pd", "", "def transform(tables):", '    o = tables["orders"]']
    if by_key:
        lines.append('    o = o.drop_duplicates(subset="order_id", keep="first")')
        dedupe = "keep only the first row of each order_id (in file order)"
    else:
        lines.append("    o = o.drop_duplicates()")
        dedupe = "drop rows that exactly repeat an earlier row"
    lines += [
        '    status = o["status"].str.strip().str.lower()',
        '    amount = pd.to_numeric(o["amount"].str.strip(), errors="coerce")',
        f'    quantity = o["quantity"].fillna({fill})',
        "    out = pd.DataFrame({",
        '        "order_id": o["order_id"], "customer_id": o["customer_id"],',
        '        "status": status, "amount": amount, "quantity": quantity,',
        "    })",
    ]
    if drop_missing:
        lines.append('    out = out[out["amount"].notna()]')
    lines.append("    return out.reset_index(drop=True)")
    steps = [
        f"{dedupe}",
        "strip spaces from `status` and make it lower case",
        "turn `amount` (text) into a float; text that is not a number becomes missing",
        f"fill a missing `quantity` with {fill}",
    ]
    if drop_missing:
        steps.append("then drop the rows whose amount is missing")
    schema = {"orders": {**G.ORDERS_SCHEMA, "amount": "str"}}
    return Plan(
        variant=f"{'key' if by_key else 'exact'}-fill{fill}{'-drop' if drop_missing else ''}",
        instruction="Clean the raw `orders` export: "
        + "; ".join(steps)
        + ". Output columns: order_id, customer_id, status, amount, quantity.",
        reference="\n".join(lines) + "\n",
        schema=schema,
        make_inputs=lambda r, s: {
            "orders": G.orders_csv(
                r, G.Shape(**{**s.__dict__, "messy": True}), exact_dups=not by_key
            )
        },
        rules=[
            {"type": "not_null", "columns": ["status", "quantity"]},
            *([{"type": "unique", "columns": ["order_id"]}] if by_key else []),
        ],
        steps=len(steps),
    )


# ---- df-join-aggregate ---------------------------------------------------------------------
def _join(rng: random.Random, d: float) -> Plan:
    per_customer = rng.random() < 0.5
    statuses = ["paid"] if rng.random() < 0.6 else ["paid", "pending"]
    aggs = [("total_amount", '("amount", "sum")'), ("n_orders", '("order_id", "count")')]
    said = ["total_amount (sum of amount; missing amounts count as nothing)", "n_orders (count)"]
    if d >= 0.4:
        aggs.append(("avg_amount", '("amount", "mean")'))
        said.append("avg_amount (mean of the known amounts; missing where there are none)")
    if d >= 0.7:
        aggs.append(("n_categories", '("category", "nunique")'))
        said.append("n_categories (distinct categories)")
    keep = f"o = o[o['status'].isin({statuses!r})]"
    spec = ", ".join(f"{n}={a}" for n, a in aggs)
    if per_customer:
        body = [
            '    c = tables["customers"][["customer_id", "name"]]',
            f"    g = o.groupby('customer_id', as_index=False).agg({spec})",
            '    out = c.merge(g, on="customer_id", how="left")',
            '    out["total_amount"] = out["total_amount"].fillna(0.0)',
            '    out["n_orders"] = out["n_orders"].fillna(0).astype("int64")',
        ]
        if d >= 0.7:
            body.append('    out["n_categories"] = out["n_categories"].fillna(0).astype("int64")')
        key, unit = ["customer_id"], "customer"
        instruction = (
            f"For every customer (all of `customers`, also those without orders), summarise "
            f"their orders whose status is {' or '.join(statuses)}: "
            + "; ".join(said)
            + ". Customers without such orders get total 0 and count 0. Output columns: "
            "customer_id, name, " + ", ".join(n for n, _ in aggs) + "."
        )
        rules: list[dict[str, Any]] = [
            {"type": "unique", "columns": key},
            {"type": "row_count", "table": "customers"},
            {"type": "not_null", "columns": ["total_amount", "n_orders"]},
        ]
        if len(statuses) == 1:
            rules.append(
                {
                    "type": "total",
                    "column": "total_amount",
                    "table": "orders",
                    "of": "amount",
                    "where": {"status": statuses[0]},
                    "skip_missing": ["customer_id"],
                }
            )
    else:
        body = [
            '    c = tables["customers"]',
            '    m = o.merge(c, on="customer_id", how="inner")',
            f"    out = m.groupby('region', as_index=False).agg({spec})",
        ]
        key, unit = ["region"], "region"
        instruction = (
            f"Join `orders` (status {' or '.join(statuses)} only) to `customers` on customer_id "
            "and summarise per customer region: "
            + "; ".join(said)
            + ". Orders without a known customer, and customers without a region, are left "
            "out; regions with no such orders do not appear. Output columns: region, "
            + ", ".join(n for n, _ in aggs)
            + "."
        )
        rules = [{"type": "unique", "columns": key}, {"type": "not_null", "columns": ["region"]}]
    head = ["import pandas as pd", "", "def transform(tables):", '    o = tables["orders"]']
    reference = "\n".join([*head, f"    {keep}", *body, "    return out"])
    return Plan(
        variant=f"{unit}-{'+'.join(statuses)}-{len(aggs)}aggs",
        instruction=instruction,
        reference=reference + "\n",
        schema={"orders": G.ORDERS_SCHEMA, "customers": G.CUSTOMERS_SCHEMA},
        make_inputs=lambda r, s: {"orders": G.orders_csv(r, s), "customers": G.customers_csv(r, s)},
        rules=rules,
        steps=1 + len(aggs),
    )


# ---- df-pivot ------------------------------------------------------------------------------
def _pivot(rng: random.Random, d: float) -> Plan:
    if rng.random() < 0.5:
        paid = d >= 0.5
        with_total = d >= 0.7
        cats = list(G.CATEGORIES)
        lines = [
            "import pandas as pd",
            "",
            "def transform(tables):",
            '    o = tables["orders"].drop_duplicates()',
            '    o = o[o["customer_id"].notna()]',
        ]
        if paid:
            lines.append('    o = o[o["status"] == "paid"]')
        lines += [
            '    w = o.groupby(["customer_id", "category"])["amount"].sum()',
            "    w = w.unstack(fill_value=0.0)",
            f"    w = w.reindex(columns={cats!r}, fill_value=0.0).astype('float64')",
            '    w.columns = ["amount_" + c for c in w.columns]',
        ]
        if with_total:
            lines.append('    w["amount_total"] = w.sum(axis=1)')
        lines += ["    return w.reset_index()"]
        out_cols = ["customer_id", *(f"amount_{c}" for c in cats)]
        out_cols += ["amount_total"] if with_total else []
        return Plan(
            variant=f"pivot{'-paid' if paid else ''}{'-total' if with_total else ''}",
            instruction="Make a wide table of spending from `orders`: first drop exact "
            "duplicate rows and orders without a customer"
            + (", keep only status paid" if paid else "")
            + "; then one row per customer_id with one column per category "
            + ", ".join(f"amount_{c}" for c in cats)
            + " holding the sum of amount (0 where the customer has none, also for a "
            "category absent from the data)"
            + ("; and amount_total, the row's sum" if with_total else "")
            + ". Output columns: "
            + ", ".join(out_cols)
            + ".",
            reference="\n".join(lines) + "\n",
            schema={"orders": G.ORDERS_SCHEMA},
            make_inputs=lambda r, s: {"orders": G.orders_csv(r, s)},
            rules=[
                {"type": "unique", "columns": ["customer_id"]},
                {"type": "not_null", "columns": out_cols},
            ],
            steps=3 + paid + with_total,
        )
    drop_zero = d >= 0.5
    ordered = d >= 0.3
    lines = [
        "import pandas as pd",
        "",
        "def transform(tables):",
        '    s = tables["stock"]',
        '    out = s.melt(id_vars=["store", "item"], value_vars=["q1", "q2", "q3"],',
        '                 var_name="quarter", value_name="units")',
        '    out = out[out["units"].notna()]',
    ]
    if drop_zero:
        lines.append('    out = out[out["units"] != 0]')
    if ordered:
        lines.append('    out = out.sort_values(["store", "item", "quarter"])')
    lines.append("    return out.reset_index(drop=True)")
    return Plan(
        variant=f"melt{'-nozero' if drop_zero else ''}{'-sorted' if ordered else ''}",
        instruction="Turn the wide `stock` table (units per quarter q1, q2, q3) into a long one: "
        "one row per store, item and quarter (the column's name, e.g. 'q2') with its units; "
        "leave out missing units"
        + (" and units equal to 0" if drop_zero else "")
        + (". Sort by store, item, quarter" if ordered else "")
        + ". Output columns: store, item, quarter, units.",
        reference="\n".join(lines) + "\n",
        schema={"stock": G.STOCK_SCHEMA},
        make_inputs=lambda r, s: {"stock": G.stock_csv(r, s)},
        rules=[
            {"type": "unique", "columns": ["store", "item", "quarter"]},
            {"type": "not_null", "columns": ["units"]},
            *([{"type": "sorted_by", "columns": ["store", "item", "quarter"]}] if ordered else []),
        ],
        ordered=ordered,
        steps=2 + drop_zero + ordered,
    )


# ---- df-window -----------------------------------------------------------------------------
def _window(rng: random.Random, d: float) -> Plan:
    method = rng.choice(["min", "dense"])
    k = rng.choice([2, 3])
    lines = [
        "import pandas as pd",
        "",
        "def transform(tables):",
        '    o = tables["orders"].sort_values(["customer_id", "order_date", "order_id"])',
        '    o = o.assign(amount=o["amount"].fillna(0.0))',
        '    g = o.groupby("customer_id")',
        '    out = o[["order_id", "customer_id"]].copy()',
        "    out['order_no'] = g.cumcount() + 1",
        "    out['cum_amount'] = g['amount'].cumsum()",
    ]
    said = [
        "order_no (1 for the customer's first order, 2 for the next, ...)",
        "cum_amount (running total of amount, this order included)",
    ]
    if d >= 0.5:
        lines.append(
            f"    out['amount_rank'] = g['amount'].rank(method={method!r}, ascending=False)"
        )
        ties = (
            "share the lowest rank and the next rank skips"
            if method == "min"
            else "share a rank and the next rank follows on"
        )
        said.append(
            f"amount_rank (rank of the amount among the customer's orders, largest first, "
            f"ties {ties})"
        )
    if d >= 0.75:
        lines.append(
            f"    out['rolling_mean'] = g['amount'].rolling({k}, min_periods=1).mean()"
            ".reset_index(level=0, drop=True)"
        )
        said.append(f"rolling_mean (mean amount of the last {k} orders, this one included)")
    lines.append("    return out")
    cols = [s.split(" ")[0] for s in said]
    return Plan(
        variant=f"{method if d >= 0.5 else 'plain'}{f'-k{k}' if d >= 0.75 else ''}",
        instruction="For each order in `orders`, compute per customer, with the customer's "
        "orders in order of order_date and then order_id, and a missing amount counted as 0: "
        + "; ".join(said)
        + ". Output columns: order_id, customer_id, "
        + ", ".join(cols)
        + " (one row per input order).",
        reference="\n".join(lines) + "\n",
        schema={"orders": G.ORDERS_SCHEMA},
        make_inputs=lambda r, s: {
            # Few distinct days and rows out of id order: the tie-break by order_id matters.
            "orders": G.orders_csv(
                r,
                G.Shape(
                    **{**s.__dict__, "dup_rate": 0.0, "days": max(8, s.days // 6), "shuffled": True}
                ),
                null_customers=False,
            )
        },
        rules=[
            {"type": "unique", "columns": ["order_id"]},
            {"type": "row_count", "table": "orders"},
            {"type": "not_null", "columns": cols},
        ],
        steps=len(said),
    )


# ---- df-dates ------------------------------------------------------------------------------
def _dates(rng: random.Random, d: float) -> Plan:
    weekly = d >= 0.5 and rng.random() < 0.6
    paid = rng.random() < 0.5
    bucket, freq, period = ("week", "W-MON", "W-SUN") if weekly else ("month", "MS", "M")
    lines = [
        "import pandas as pd",
        "",
        "def transform(tables):",
        '    o = tables["orders"]',
        '    o = o[o["order_date"].notna()]',
    ]
    if paid:
        lines.append('    o = o[o["status"] == "paid"]')
    lines += [
        f'    b = o["order_date"].dt.to_period({period!r}).dt.start_time',
        f'    g = o.groupby(b.rename({bucket!r})).agg(n_orders=("order_id", "count"),',
        '                                        revenue=("amount", "sum"))',
        f"    full = pd.date_range(g.index.min(), g.index.max(), freq={freq!r}, name={bucket!r})",
        "    g = g.reindex(full, fill_value=0)",
        '    g["revenue"] = g["revenue"].astype("float64")',
        "    return g.reset_index()",
    ]
    what = "week (starting on Monday)" if weekly else "calendar month (its first day)"
    rules: list[dict[str, Any]] = [
        {"type": "unique", "columns": [bucket]},
        {"type": "sorted_by", "columns": [bucket]},
        {"type": "not_null", "columns": [bucket, "n_orders", "revenue"]},
    ]
    if not paid:
        rules.append(
            {
                "type": "total",
                "column": "revenue",
                "table": "orders",
                "of": "amount",
                "skip_missing": ["order_date"],
            }
        )
    return Plan(
        variant=f"{bucket}{'-paid' if paid else ''}",
        instruction=f"Bucket the {'paid ' if paid else ''}orders of `orders` by {what} of "
        "order_date (orders without a date are left out): per bucket n_orders (count) and "
        "revenue (sum of amount, missing amounts count as nothing). Include every bucket "
        "between the first and the last one, with 0 orders and 0.0 revenue where there are "
        f"none. The `{bucket}` column is the bucket's first day as a date (datetime64); "
        f"sort by it. Output columns: {bucket}, n_orders, revenue.",
        reference="\n".join(lines) + "\n",
        schema={"orders": G.ORDERS_SCHEMA},
        make_inputs=lambda r, s: {"orders": G.orders_csv(r, s, null_dates=True)},
        rules=rules,
        ordered=True,
        steps=3 + paid,
    )


_MAKERS: dict[str, Callable[[random.Random, float], Plan]] = {
    "df-clean": _clean,
    "df-join-aggregate": _join,
    "df-pivot": _pivot,
    "df-window": _window,
    "df-dates": _dates,
    "df-pipeline": pipeline_plan,
}
#: Each family's plan maker and its description (the one kept in the package's ``__init__``,
#: which registers the families without importing this module).
FAMILIES: dict[str, tuple[Callable[[random.Random, float], Plan], str]] = {
    name: (_MAKERS[name], description) for name, description in FAMILY_NAMES.items()
}


def plan_for(family: str, difficulty: float, seed: int) -> Plan:
    """The design of task ``seed`` of ``family`` at ``difficulty`` (no sandbox needed)."""
    make, _ = FAMILIES[family]
    return make(random.Random(f"{family}:{seed}"), difficulty)


def draft_for(family: str, difficulty: float, seed: int) -> Draft:
    """The draft of task ``seed`` of ``family`` at ``difficulty``: its tables drawn, its
    reference not yet run."""
    plan = plan_for(family, difficulty, seed)
    visible_shape = G.Shape(rows=14, customers=5, null_rate=0.08, dup_rate=0.08, days=70)
    visible = plan.make_inputs(random.Random(f"{family}:{seed}:visible"), visible_shape)
    hidden = [
        plan.make_inputs(random.Random(f"{family}:{seed}:hidden:{i}"), shape)
        for i, shape in enumerate(G.hidden_shapes(difficulty))
    ]
    return Draft(
        name=f"dataframe/{family}-d{round(difficulty * 100)}-s{seed}-v1",
        instruction=plan.instruction,
        schema=plan.schema,
        visible=visible,
        hidden_inputs=hidden,
        reference=plan.reference,
        rules=plan.rules,
        ordered=plan.ordered,
        difficulty=difficulty,
        unit=f"{family}/{plan.variant}",
        source="dataframe-families",
        generator=family,
        seed=seed,
        features={"steps": float(plan.steps), "rows": float(G.hidden_shapes(difficulty)[0].rows)},
        contract=plan.contract,
    )


def generate(family: str, count: int, difficulty: float | None, seed: int) -> list[Task]:
    """``count`` tasks of ``family`` (seeds ``seed``...; ``difficulty`` None spreads them over
    0, 0.1, ..., 1), their references run in a sandbox made here."""
    drafts = []
    for i in range(count):
        d = difficulty if difficulty is not None else (i % 11) / 10
        drafts.append(draft_for(family, d, seed + i))
    return build_tasks(drafts)
