"""Shop families: ``shop-refund``, ``shop-exchange`` and ``shop-cancel``.

The difficulty knob (0..1) adds steps (a second order to refund, an address to change) and
distractors: customers with similar names, the same customer's orders of near-miss products,
a delivery one or a few days past the refund window, an order that is not pending any more.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from referee.domains.toolworld.names import FIRST, LAST, PRODUCTS, day
from referee.domains.toolworld.scenario import Scenario, dump_sql
from referee.domains.toolworld.shop import REFUND_WINDOW_DAYS, SHOP_SCHEMA

__all__ = ["shop_cancel", "shop_exchange", "shop_refund"]

_ORDER = (
    "INSERT INTO orders (id, customer_id, product_id, quantity, paid_cents, status, ordered_on, "
    "delivered_on) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
)


class _Shop:
    """A seeded shop being written: customers, products, orders."""

    def __init__(self, rng: random.Random, difficulty: float) -> None:
        self.rng = rng
        self.today = dt.date(2026, 3, 1) + dt.timedelta(days=rng.randrange(60))
        self.rows: list[tuple[str, tuple[Any, ...]]] = []
        self.products: list[tuple[int, str, int]] = []
        for i, (name, price) in enumerate(PRODUCTS, 1):
            self.products.append((i, name, price))
            self.rows.append(
                ("INSERT INTO products VALUES (?, ?, ?, ?)", (i, name, price, rng.randrange(3, 40)))
            )
        self.customers: list[tuple[int, str, str, str]] = []
        self.next_order = 100 + rng.randrange(50)
        first = rng.choice(FIRST)
        for i in range(1, 4 + int(6 * difficulty) + 1):
            # Distractors share the first name (and sometimes a near-miss last name).
            given = first if i <= 1 + int(3 * difficulty) else rng.choice(FIRST)
            name = f"{given} {LAST[(i * 3) % len(LAST)]}"
            email = f"{name.lower().replace(' ', '.')}{rng.randrange(10, 99)}@example.com"
            zip_code = f"{rng.randrange(10000, 99999)}"
            self.customers.append((i, name, email, zip_code))
            self.rows.append(
                (
                    "INSERT INTO customers VALUES (?, ?, ?, ?, ?)",
                    (i, name, email, zip_code, f"{rng.randrange(1, 200)} Main St"),
                )
            )

    def order(
        self, customer: int, product: int, status: str, delivered_ago: int | None
    ) -> dict[str, Any]:
        oid = self.next_order
        self.next_order += 1 + self.rng.randrange(3)
        qty = 1 + self.rng.randrange(3)
        price = self.products[product - 1][2]
        ordered = day(self.today, -(delivered_ago or 0) - 3 - self.rng.randrange(5))
        delivered = day(self.today, -delivered_ago) if delivered_ago is not None else None
        self.rows.append(
            (_ORDER, (oid, customer, product, qty, qty * price, status, ordered, delivered))
        )
        return {
            "id": oid,
            "product": product,
            "paid": qty * price,
            "delivered": delivered,
            "ordered": ordered,
        }

    def noise(self, n: int, skip: int) -> None:
        """``n`` orders of other customers (irrelevant rows the agent must leave alone)."""
        for _ in range(n):
            cid = self.rng.choice([c[0] for c in self.customers if c[0] != skip])
            status = self.rng.choice(["delivered", "pending", "shipped"])
            ago = self.rng.randrange(1, 60) if status == "delivered" else None
            self.order(cid, self.rng.randrange(1, len(PRODUCTS) + 1), status, ago)

    def sql(self) -> str:
        return dump_sql(SHOP_SCHEMA, self.rows)


def _checks(orders: list[int], products: list[int], customer: int) -> list[tuple[str, str]]:
    checks = [(f"order {o} status", f"SELECT status FROM orders WHERE id = {o}") for o in orders]
    checks += [
        (
            f"order {o} refunded",
            f"SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE order_id = {o}",
        )
        for o in orders
    ]
    checks += [
        (f"product {p} stock", f"SELECT stock FROM products WHERE id = {p}")
        for p in sorted(set(products))
    ]
    checks.append(("refund count", "SELECT COUNT(*) FROM refunds"))
    checks.append(("customer", f"SELECT address FROM customers WHERE id = {customer}"))
    return checks


def shop_refund(seed: int, difficulty: float) -> Scenario:
    """A customer asks for refunds of delivered orders, named by product and delivery date;
    at higher difficulty a second order, and one of the asked ones just past the window."""
    rng = random.Random(f"shop-refund:{seed}")
    shop = _Shop(rng, difficulty)
    cid, name, email, _zip = shop.customers[0]
    pair = rng.randrange(0, len(PRODUCTS), 2)  # a product and its near-miss neighbour
    target = shop.order(cid, pair + 1, "delivered", rng.randrange(2, REFUND_WINDOW_DAYS - 2))
    asked = [target]
    refund = [target]
    if difficulty >= 0.3:  # the same customer's order of the near-miss product
        shop.order(cid, pair + 2, "delivered", rng.randrange(2, REFUND_WINDOW_DAYS))
    if difficulty >= 0.5:  # the same product, delivered just past the window
        late = shop.order(cid, pair + 1, "delivered", REFUND_WINDOW_DAYS + 1 + rng.randrange(4))
        if difficulty >= 0.8:
            asked.append(late)  # asked for, but the policy forbids it
    if difficulty >= 0.6:
        other = (pair + 4) % len(PRODUCTS)
        second = shop.order(cid, other + 1, "delivered", rng.randrange(1, REFUND_WINDOW_DAYS))
        asked.append(second)
        refund.append(second)
    shop.noise(2 + int(10 * difficulty), cid)
    names = {p[0]: p[1] for p in shop.products}
    wanted = " and ".join(
        f"my order of {names[o['product']]} delivered on {o['delivered']}" for o in asked
    )
    instruction = (
        f"Hi, I'm {name} ({email}). Please refund {wanted}, in full. "
        + ("Refund whatever the shop's policy allows." if len(asked) > len(refund) else "")
    ).strip()
    reference: list[dict[str, Any]] = [
        {"name": "find_customer", "arguments": {"email": email}},
        {"name": "list_orders", "arguments": {"customer_id": cid}},
    ]
    for o in asked:
        reference.append({"name": "get_order", "arguments": {"order_id": o["id"]}})
    for o in refund:
        reference.append(
            {"name": "refund_order", "arguments": {"order_id": o["id"], "amount_cents": o["paid"]}}
        )
    return Scenario(
        family="shop-refund",
        world="shop",
        sql=shop.sql(),
        instruction=instruction,
        reference=reference,
        checks=_checks([o["id"] for o in asked], [o["product"] for o in asked], cid),
        context={"today": shop.today.isoformat()},
        structure=f"asked={len(asked)},refund={len(refund)},near={int(difficulty >= 0.3)}",
        features={
            "orders_asked": float(len(asked)),
            "distractors": float(len(shop.rows) - len(PRODUCTS)),
        },
    )


def shop_cancel(seed: int, difficulty: float) -> Scenario:
    """A customer asks to cancel a pending order (confirm first); at higher difficulty also to
    change their address (verify their identity first)."""
    rng = random.Random(f"shop-cancel:{seed}")
    shop = _Shop(rng, difficulty)
    cid, name, email, zip_code = shop.customers[0]
    pair = rng.randrange(0, len(PRODUCTS), 2)
    target = shop.order(cid, pair + 1, "pending", None)
    if difficulty >= 0.3:
        shop.order(cid, pair + 2, "pending", None)  # near-miss product, also pending
    if difficulty >= 0.4:
        shop.order(cid, pair + 1, "shipped", None)  # the same product, already shipped
    shop.noise(2 + int(10 * difficulty), cid)
    product = shop.products[pair][1]
    move = difficulty >= 0.6
    address = f"{rng.randrange(1, 300)} Harbour Road"
    instruction = (
        f"Hi, I'm {name} ({email}). Please cancel my pending order of {product} "
        f"(ordered on {target['ordered']}); yes, I'm sure."
    )
    if move:
        instruction += f" Also change my address to {address}; my ZIP code is {zip_code}."
    reference: list[dict[str, Any]] = [
        {"name": "find_customer", "arguments": {"email": email}},
        {"name": "list_orders", "arguments": {"customer_id": cid}},
        {"name": "confirm_with_user", "arguments": {"action": "cancel", "order_id": target["id"]}},
        {"name": "cancel_order", "arguments": {"order_id": target["id"]}},
    ]
    if move:
        reference += [
            {
                "name": "verify_identity",
                "arguments": {"customer_id": cid, "email": email, "zip": zip_code},
            },
            {"name": "update_address", "arguments": {"customer_id": cid, "address": address}},
        ]
    return Scenario(
        family="shop-cancel",
        world="shop",
        sql=shop.sql(),
        instruction=instruction,
        reference=reference,
        checks=_checks([target["id"]], [target["product"]], cid),
        context={"today": shop.today.isoformat()},
        user={"confirms": [["cancel", target["id"]]]},
        structure=f"address={int(move)},near={int(difficulty >= 0.3)}",
        features={"distractors": float(len(shop.rows) - len(PRODUCTS))},
    )


def shop_exchange(seed: int, difficulty: float) -> Scenario:
    """A customer asks to exchange a delivered order for the cheaper variant of its product;
    at higher difficulty an older order of the same product past the window, and a second
    asked-for exchange to a pricier product, which the policy forbids."""
    rng = random.Random(f"shop-exchange:{seed}")
    shop = _Shop(rng, difficulty)
    cid, name, email, _zip = shop.customers[0]
    pair = rng.randrange(0, len(PRODUCTS), 2)
    a, b = shop.products[pair], shop.products[pair + 1]
    dear, cheap = (a, b) if a[2] >= b[2] else (b, a)
    target = shop.order(cid, dear[0], "delivered", rng.randrange(2, REFUND_WINDOW_DAYS - 2))
    if difficulty >= 0.3:  # the same product, delivered past the window
        shop.order(cid, dear[0], "delivered", REFUND_WINDOW_DAYS + 2 + rng.randrange(10))
    forbidden = None
    if difficulty >= 0.7:  # asked: the cheap one for the dear one (costs more than was paid)
        forbidden = shop.order(cid, cheap[0], "delivered", rng.randrange(2, REFUND_WINDOW_DAYS))
    shop.noise(2 + int(10 * difficulty), cid)
    instruction = (
        f"Hi, I'm {name} ({email}). Please exchange my order of {dear[1]} delivered on "
        f"{target['delivered']} for {cheap[1]} (same quantity)."
    )
    reference: list[dict[str, Any]] = [
        {"name": "find_customer", "arguments": {"email": email}},
        {"name": "list_orders", "arguments": {"customer_id": cid}},
        {"name": "search_products", "arguments": {"name": cheap[1]}},
        {"name": "get_order", "arguments": {"order_id": target["id"]}},
        {
            "name": "exchange_order",
            "arguments": {"order_id": target["id"], "new_product_id": cheap[0]},
        },
    ]
    asked = [target]
    if forbidden is not None:
        asked.append(forbidden)
        instruction += (
            f" And exchange my order of {cheap[1]} delivered on {forbidden['delivered']} for "
            f"{dear[1]}. Do whatever the shop's policy allows."
        )
        reference.insert(4, {"name": "get_order", "arguments": {"order_id": forbidden["id"]}})
    checks = _checks([o["id"] for o in asked], [dear[0], cheap[0]], cid)
    checks.append(
        (
            "new orders",
            "SELECT product_id, quantity, paid_cents, status, ordered_on FROM orders "
            f"WHERE customer_id = {cid} AND status = 'pending' ORDER BY product_id",
        )
    )
    checks.append(("order count", "SELECT COUNT(*) FROM orders"))
    return Scenario(
        family="shop-exchange",
        world="shop",
        sql=shop.sql(),
        instruction=instruction,
        reference=reference,
        checks=checks,
        context={"today": shop.today.isoformat()},
        structure=f"asked={len(asked)},late={int(difficulty >= 0.3)}",
        features={"distractors": float(len(shop.rows) - len(PRODUCTS))},
    )
