"""The query shapes of the SQL families: a question in words and its trusted reference query.

A *shape* is one query template (``sql-join/never-ordered``); its parameters (a city, a date, a
price bound, a k) are drawn per task. Shapes are listed by family in rising difficulty, and
every reference is written to run the same on SQLite and DuckDB (the one difference, taking the
month of a date, goes through :func:`month_of`). Ordered questions name a complete order (ties
broken by an id), so the order they ask for is one order.

>>> import random
>>> q = SHAPES["sql-filter"][0].make(random.Random(0), "sqlite")
>>> q.sql.startswith("SELECT id, name FROM customers")
True
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from referee.domains.sql.datagen import CATEGORIES, CITIES, order_dates, price_grid, signup_dates

__all__ = ["SHAPES", "Query", "Shape", "month_of"]


@dataclass(frozen=True)
class Query:
    """A question, its reference query, whether the order of rows matters, and the features
    difficulty is estimated from (joins, nesting, windows, aggregation depth)."""

    question: str
    sql: str
    order_matters: bool
    features: dict[str, float] = field(default_factory=dict)
    #: Rows the hidden databases must hold, ``(table, {column: value})``: on the question's
    #: bounds, so that ``>`` and ``>=`` (or a dropped condition) give other answers.
    anchors: tuple[tuple[str, dict[str, Any]], ...] = ()


@dataclass(frozen=True)
class Shape:
    name: str
    make: Callable[[random.Random, str], Query]


def month_of(column: str, engine: str) -> str:
    """``YYYY-MM`` of a date column: a TEXT date in SQLite, a DATE in DuckDB."""
    return f"strftime({column}, '%Y-%m')" if engine == "duckdb" else f"substr({column}, 1, 7)"


def _month_start(rng: random.Random) -> str:
    return rng.choice([d for d in order_dates() if d.endswith("-01")][2:-2])


def _signup_bound(rng: random.Random) -> str:
    return rng.choice(signup_dates()[10:-10])


_NOT_CANCELLED = "(o.status IS NULL OR o.status <> 'cancelled')"
_NOT_CANCELLED_WORDS = "not cancelled (an order without a status counts as not cancelled)"


# ---- sql-filter ---------------------------------------------------------------------------
def _city_signup(rng: random.Random, engine: str) -> Query:
    city, bound = rng.choice(CITIES), _signup_bound(rng)
    return Query(
        f"List the id and name of every customer who lives in {city} and signed up on or after "
        f"{bound}. Order the rows by name, then by id.",
        f"SELECT id, name FROM customers WHERE city = '{city}' AND signup_date >= '{bound}' "
        "ORDER BY name, id",
        True,
        {"filters": 2},
        (("customers", {"city": city, "signup_date": bound}),),
    )


def _price_range(rng: random.Random, engine: str) -> Query:
    cat = rng.choice(CATEGORIES)
    grid = price_grid()
    lo = rng.choice(grid[2:10])
    hi = rng.choice([p for p in grid if p >= lo + 10])
    return Query(
        f"Give the id, name and price of every product in the category '{cat}' whose price is "
        f"from {lo} to {hi}, both included. Any order.",
        f"SELECT id, name, price FROM products WHERE category = '{cat}' "
        f"AND price BETWEEN {lo} AND {hi}",
        False,
        {"filters": 3},
        (
            ("products", {"category": cat, "price": lo}),
            ("products", {"category": cat, "price": hi}),
        ),
    )


def _outside_city(rng: random.Random, engine: str) -> Query:
    city = rng.choice(CITIES)
    return Query(
        f"Give the id and name of every customer who does not live in {city}. A customer whose "
        "city is not recorded counts as not living there. Any order.",
        f"SELECT id, name FROM customers WHERE city IS NULL OR city <> '{city}'",
        False,
        {"filters": 2, "nulls": 1},
        (("customers", {"city": None}), ("customers", {"city": city})),
    )


def _active_buyers(rng: random.Random, engine: str) -> Query:
    start = _month_start(rng)
    end = rng.choice([d for d in order_dates() if d.endswith("-01") and d > start][1:6] or [start])
    return Query(
        f"Which customer ids appear on at least one order dated from {start} (included) to "
        f"{end} (excluded) that is {_NOT_CANCELLED_WORDS}? Give each id once, in ascending "
        "order.",
        f"SELECT DISTINCT o.customer_id FROM orders o WHERE {_NOT_CANCELLED} "
        f"AND o.order_date >= '{start}' AND o.order_date < '{end}' ORDER BY o.customer_id",
        True,
        {"filters": 3, "nulls": 1, "distinct": 1},
        (
            ("orders", {"order_date": start, "status": "shipped"}),
            ("orders", {"order_date": end, "status": "pending"}),
            ("orders", {"order_date": start, "status": None}),
        ),
    )


# ---- sql-join -----------------------------------------------------------------------------
def _shipped_orders(rng: random.Random, engine: str) -> Query:
    bound = _month_start(rng)
    return Query(
        f"For every order with status 'shipped' placed before {bound}, give the order's id and "
        "the name of the customer who placed it (orders whose customer is not on record are "
        "left out). Order the rows by order id.",
        "SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id "
        f"WHERE o.status = 'shipped' AND o.order_date < '{bound}' ORDER BY o.id",
        True,
        {"joins": 1},
        (("orders", {"order_date": bound, "status": "shipped"}),),
    )


def _never_ordered(rng: random.Random, engine: str) -> Query:
    return Query(
        "Give the id and name of every customer who has never placed an order. Any order.",
        "SELECT c.id, c.name FROM customers c LEFT JOIN orders o ON o.customer_id = c.id "
        "WHERE o.id IS NULL",
        False,
        {"joins": 1, "outer": 1},
    )


def _category_buyers(rng: random.Random, engine: str) -> Query:
    cat = rng.choice(CATEGORIES)
    return Query(
        f"Which customers bought at least one product of the category '{cat}'? Give each such "
        "customer's id and name once (two customers who share a name are two rows). Any order.",
        "SELECT DISTINCT c.id, c.name FROM customers c JOIN orders o ON o.customer_id = c.id "
        "JOIN order_items i ON i.order_id = o.id JOIN products p ON p.id = i.product_id "
        f"WHERE p.category = '{cat}'",
        False,
        {"joins": 3, "distinct": 1},
    )


def _city_quantity(rng: random.Random, engine: str) -> Query:
    cat = rng.choice(CATEGORIES)
    return Query(
        f"For each customer city, the total quantity of products of the category '{cat}' "
        "ordered by customers of that city, counting every order line. Customers without a "
        "recorded city form one group whose city is NULL; cities with no such lines are left "
        "out. Columns: city, total quantity. Any order.",
        "SELECT c.city, SUM(i.quantity) FROM customers c JOIN orders o ON o.customer_id = c.id "
        "JOIN order_items i ON i.order_id = o.id JOIN products p ON p.id = i.product_id "
        f"WHERE p.category = '{cat}' GROUP BY c.city",
        False,
        {"joins": 3, "aggregation": 1},
    )


# ---- sql-aggregate ------------------------------------------------------------------------
def _orders_per_status(rng: random.Random, engine: str) -> Query:
    bound = _month_start(rng)
    return Query(
        f"How many orders were placed on or after {bound}, per status? Orders without a status "
        "form one group whose status is NULL. Columns: status, number of orders. Any order.",
        f"SELECT status, COUNT(*) FROM orders WHERE order_date >= '{bound}' GROUP BY status",
        False,
        {"aggregation": 1},
        (("orders", {"order_date": bound}),),
    )


def _city_tiers(rng: random.Random, engine: str) -> Query:
    k = rng.choice([2, 3])
    return Query(
        f"For each city with at least {k} customers, give the city, its number of customers and "
        "the number of distinct tiers among them (customers without a tier do not count as a "
        "tier). Customers without a recorded city are left out. Any order.",
        "SELECT city, COUNT(*), COUNT(DISTINCT tier) FROM customers WHERE city IS NOT NULL "
        f"GROUP BY city HAVING COUNT(*) >= {k}",
        False,
        {"aggregation": 1, "having": 1},
    )


def _category_revenue(rng: random.Random, engine: str) -> Query:
    k = rng.choice([2, 3])
    return Query(
        "A line's revenue is its quantity times its unit price. Over the lines of orders that "
        f"are {_NOT_CANCELLED_WORDS}, give the {k} product categories with the highest total "
        "revenue: category and revenue, highest first, ties broken by category name. Lines "
        "whose order or product is not on record are left out.",
        "SELECT p.category, SUM(i.quantity * i.unit_price) AS revenue FROM order_items i "
        "JOIN orders o ON o.id = i.order_id JOIN products p ON p.id = i.product_id "
        f"WHERE {_NOT_CANCELLED} GROUP BY p.category ORDER BY revenue DESC, p.category LIMIT {k}",
        True,
        {"joins": 2, "aggregation": 1},
    )


def _tier_order_value(rng: random.Random, engine: str) -> Query:
    return Query(
        "An order's value is the sum of quantity times unit price over its lines. For each "
        "customer tier, the average value of the orders placed by customers of that tier "
        "(orders without lines, and orders whose customer is not on record, are left out; "
        "customers without a tier form one group whose tier is NULL). Columns: tier, average "
        "order value. Any order.",
        "WITH ov AS (SELECT order_id, SUM(quantity * unit_price) AS v FROM order_items "
        "GROUP BY order_id) SELECT c.tier, AVG(ov.v) FROM ov JOIN orders o ON o.id = ov.order_id "
        "JOIN customers c ON c.id = o.customer_id GROUP BY c.tier",
        False,
        {"joins": 2, "aggregation": 2},
    )


# ---- sql-window ---------------------------------------------------------------------------
def _first_order(rng: random.Random, engine: str) -> Query:
    return Query(
        "For each customer id on the orders, give the customer id, the id of its first "
        "order and its date (the earliest date; among orders on that date, the lowest id). "
        "Order the rows by customer id.",
        "SELECT customer_id, id, order_date FROM (SELECT customer_id, id, order_date, "
        "ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY order_date, id) AS rn "
        "FROM orders) t WHERE rn = 1 ORDER BY customer_id",
        True,
        {"windows": 1, "nesting": 1},
    )


def _price_rank(rng: random.Random, engine: str) -> Query:
    k = rng.choice([1, 2])
    return Query(
        "Rank the products of each category by price, highest first; equal prices share a rank "
        f"and the next rank follows on (1, 1, 2). Give the products ranked {k} or better: "
        "category, product id, price, rank. Products without a price are left out. Any order.",
        "SELECT category, id, price, rk FROM (SELECT category, id, price, DENSE_RANK() OVER "
        "(PARTITION BY category ORDER BY price DESC) AS rk FROM products WHERE price IS NOT NULL) "
        f"t WHERE rk <= {k}",
        False,
        {"windows": 1, "nesting": 1},
    )


def _previous_order(rng: random.Random, engine: str) -> Query:
    return Query(
        "For every order, give the customer id, the order id and the id of the same customer's "
        "previous order (orders ranked by date, then id; NULL for a customer's first order). "
        "Order the rows by customer id, then order date, then order id.",
        "SELECT customer_id, id, LAG(id) OVER (PARTITION BY customer_id ORDER BY order_date, id) "
        "FROM orders ORDER BY customer_id, order_date, id",
        True,
        {"windows": 1},
    )


def _running_revenue(rng: random.Random, engine: str) -> Query:
    year = rng.choice(["2023", "2024"])
    month = month_of("o.order_date", engine)
    return Query(
        f"Month by month through {year}, give the month (as YYYY-MM), the revenue of the orders "
        "placed that month (quantity times unit price over their lines) and the running total "
        "of that revenue from the first month of the year up to and including it. Months "
        "without order lines are absent. Order the rows by month.",
        f"WITH m AS (SELECT {month} AS month, SUM(i.quantity * i.unit_price) AS revenue "
        "FROM orders o JOIN order_items i ON i.order_id = o.id "
        f"WHERE o.order_date >= '{year}-01-01' AND o.order_date < '{int(year) + 1}-01-01' "
        "GROUP BY 1) SELECT month, revenue, SUM(revenue) OVER (ORDER BY month) FROM m "
        "ORDER BY month",
        True,
        {"windows": 1, "joins": 1, "aggregation": 2, "nesting": 1},
        (("orders", {"order_date": f"{int(year) + 1}-01-01"}),),
    )


# ---- sql-nested ---------------------------------------------------------------------------
def _above_average_price(rng: random.Random, engine: str) -> Query:
    cat = rng.choice(CATEGORIES)
    return Query(
        f"Give the id, name and price of the products of the category '{cat}' that cost more "
        "than the average price of all products (products without a price count neither in the "
        "average nor in the answer). Any order.",
        f"SELECT id, name, price FROM products WHERE category = '{cat}' "
        "AND price > (SELECT AVG(price) FROM products)",
        False,
        {"nesting": 1, "aggregation": 1},
    )


def _never_sold(rng: random.Random, engine: str) -> Query:
    return Query(
        "Give the id and name of every product that appears on no order line. Any order.",
        "SELECT p.id, p.name FROM products p WHERE NOT EXISTS "
        "(SELECT 1 FROM order_items i WHERE i.product_id = p.id)",
        False,
        {"nesting": 1},
    )


def _big_spenders(rng: random.Random, engine: str) -> Query:
    return Query(
        "The spend of a customer id is the sum of quantity times unit price over the lines of "
        "all the orders bearing it. Give the customers on record whose spend is above the "
        "average spend of all the customer ids with at least one order line (ids not on record "
        "count in that average): id, name, spend, highest spend first, ties by id.",
        "WITH s AS (SELECT o.customer_id, SUM(i.quantity * i.unit_price) AS spend FROM orders o "
        "JOIN order_items i ON i.order_id = o.id GROUP BY o.customer_id) "
        "SELECT c.id, c.name, s.spend FROM s JOIN customers c ON c.id = s.customer_id "
        "WHERE s.spend > (SELECT AVG(spend) FROM s) ORDER BY s.spend DESC, c.id",
        True,
        {"nesting": 1, "joins": 2, "aggregation": 2},
    )


def _top_customer_per_city(rng: random.Random, engine: str) -> Query:
    return Query(
        "For each city, the customer or customers of that city with the most orders (all of "
        "them when several tie): city, customer id, number of orders. Customers without a "
        "recorded city, and customers without orders, are left out. Any order.",
        "WITH n AS (SELECT c.city, c.id, COUNT(*) AS k FROM customers c JOIN orders o "
        "ON o.customer_id = c.id WHERE c.city IS NOT NULL GROUP BY c.city, c.id) "
        "SELECT city, id, k FROM n WHERE k = (SELECT MAX(k) FROM n AS m WHERE m.city = n.city)",
        False,
        {"nesting": 2, "joins": 1, "aggregation": 2},
    )


#: Each family's shapes, easiest first (the difficulty knob walks along them).
SHAPES: dict[str, tuple[Shape, ...]] = {
    "sql-filter": (
        Shape("city-signup", _city_signup),
        Shape("price-range", _price_range),
        Shape("outside-city", _outside_city),
        Shape("active-buyers", _active_buyers),
    ),
    "sql-join": (
        Shape("shipped-orders", _shipped_orders),
        Shape("never-ordered", _never_ordered),
        Shape("category-buyers", _category_buyers),
        Shape("city-quantity", _city_quantity),
    ),
    "sql-aggregate": (
        Shape("orders-per-status", _orders_per_status),
        Shape("city-tiers", _city_tiers),
        Shape("category-revenue", _category_revenue),
        Shape("tier-order-value", _tier_order_value),
    ),
    "sql-window": (
        Shape("first-order", _first_order),
        Shape("price-rank", _price_rank),
        Shape("previous-order", _previous_order),
        Shape("running-revenue", _running_revenue),
    ),
    "sql-nested": (
        Shape("above-average-price", _above_average_price),
        Shape("never-sold", _never_sold),
        Shape("big-spenders", _big_spenders),
        Shape("top-customer-per-city", _top_customer_per_city),
    ),
}
