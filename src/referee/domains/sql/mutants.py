"""Small wrong variants of a reference query, to measure what the verifier still accepts.

Each operator rewrites the reference's text once per place it applies: drop a WHERE condition,
turn ``>`` into ``>=`` (and the other comparisons round), drop ``DISTINCT``, turn ``JOIN`` into
``LEFT JOIN`` (and back), drop ``ORDER BY`` or reverse it, drop the ``IS NULL OR`` of a NULL-safe
condition, ``COUNT(DISTINCT x)`` into ``COUNT(x)``, ``DENSE_RANK`` into ``RANK`` or
``ROW_NUMBER``, ``LIMIT k`` into ``LIMIT k+1``. Some mutants are equivalent on every database the
generator makes (a LEFT JOIN where every key has its row); the bench reports them by name.

>>> [m.operator for m in mutants("SELECT DISTINCT a FROM t WHERE x > 1 AND y = 2")]
['drop-condition', 'drop-condition', 'comparison', 'drop-distinct']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Mutant", "mutants"]


@dataclass(frozen=True)
class Mutant:
    operator: str
    sql: str


_COMPARISONS = {">=": ">", "<=": "<", ">": ">=", "<": "<="}
_CMP = re.compile(r"(?<![<>!=])(>=|<=|>|<)(?![=>])")


def _each(pattern: re.Pattern[str], sql: str, repl: str, operator: str) -> list[Mutant]:
    out = []
    for m in pattern.finditer(sql):
        out.append(Mutant(operator, sql[: m.start()] + m.expand(repl) + sql[m.end() :]))
    return out


_STOP = re.compile(r"\b(GROUP BY|ORDER BY|LIMIT|UNION|WINDOW)\b")


def _where_body(sql: str, start: int) -> int:
    """Where the WHERE clause starting at ``start`` ends: a closing parenthesis of the
    enclosing level, a clause keyword at its level, or the end."""
    depth = 0
    i = start
    while i < len(sql):
        c = sql[i]
        if c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return i
            depth -= 1
        elif c == "'":
            i = sql.index("'", i + 1)
        elif depth == 0 and _STOP.match(sql, i):
            return i
        i += 1
    return len(sql)


def _conjuncts(body: str) -> list[str]:
    """The top-level AND-parts of a condition (the AND of a BETWEEN stays inside its part)."""
    parts, depth, last, i = [], 0, 0, 0
    between = False
    while i < len(body):
        c = body[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "'":
            i = body.index("'", i + 1)
        elif depth == 0 and re.match(r"\bBETWEEN\b", body[i:]):
            between = True
        elif depth == 0 and re.match(r"\bAND\b", body[i:]) and body[i - 1].isspace():
            if between:
                between = False
            else:
                parts.append(body[last:i].strip())
                last = i + 3
        i += 1
    parts.append(body[last:].strip())
    return parts


def _drop_conditions(sql: str) -> list[Mutant]:
    """Each top-level conjunct of each WHERE dropped (a lone condition: the WHERE dropped)."""
    out = []
    for m in re.finditer(r"\bWHERE\b", sql):
        end = _where_body(sql, m.end())
        parts = _conjuncts(sql[m.end() : end])
        for i in range(len(parts)):
            kept = " AND ".join(p for j, p in enumerate(parts) if j != i)
            clause = f"WHERE {kept} " if kept else ""
            out.append(Mutant("drop-condition", sql[: m.start()] + clause + sql[end:]))
    return out


def mutants(sql: str) -> list[Mutant]:
    """Every single-edit mutant of ``sql`` (see the module docstring), duplicates removed."""
    found: list[Mutant] = []
    found += _drop_conditions(sql)
    for cmp in _CMP.finditer(sql):
        op = cmp.group(1)
        found.append(Mutant("comparison", sql[: cmp.start()] + _COMPARISONS[op] + sql[cmp.end() :]))
    found += _each(re.compile(r"\bDISTINCT\s+(?!\w+\))"), sql, "", "drop-distinct")
    found += _each(re.compile(r"COUNT\(DISTINCT\s+"), sql, "COUNT(", "count-distinct")
    found += _each(re.compile(r"(?<!LEFT )\bJOIN\b"), sql, "LEFT JOIN", "left-join")
    found += _each(re.compile(r"\bLEFT JOIN\b"), sql, "JOIN", "inner-join")
    found += _each(re.compile(r"\s+ORDER BY [^)]*?(?=\s+LIMIT\b|$)"), sql, "", "drop-order-by")
    found += _each(re.compile(r"\bDESC\b"), sql, "ASC", "reverse-order")
    found += _each(re.compile(r"\(?\b[\w.]+ IS NULL OR ([^)]*)\)?"), sql, r"\1", "drop-null-case")
    found += _each(re.compile(r"\bIS NULL\b"), sql, "IS NOT NULL", "negate-null")
    found += _each(re.compile(r"\bDENSE_RANK\(\)"), sql, "RANK()", "rank")
    found += _each(re.compile(r"\bDENSE_RANK\(\)"), sql, "ROW_NUMBER()", "row-number")
    found += _each(re.compile(r"\bLIMIT (\d+)"), sql, "", "limit")
    out, seen = [], {sql}
    for m in found:
        text = m.sql
        if m.operator == "limit":  # LIMIT k -> LIMIT k+1 (expand cannot do arithmetic)
            k = re.search(r"\bLIMIT (\d+)", sql)
            assert k is not None
            text = sql.replace(k.group(0), f"LIMIT {int(k.group(1)) + 1}", 1)
        if text not in seen:
            seen.add(text)
            out.append(Mutant(m.operator, text))
    return out
