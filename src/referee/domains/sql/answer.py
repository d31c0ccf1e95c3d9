"""The query of an answer, and the static flags a suspicious one earns.

An answer is the query itself, or a model's text with fenced code blocks: the last block
tagged ``sql`` (any case) is the query; without one, the last fenced block; without any, the
whole text. Flags are evidence for the audit, never the verdict (the rows decide that).

>>> query_of("Here:\\n```sql\\nSELECT 1\\n```\\nand better:\\n```SQL\\nSELECT 2;\\n```")
'SELECT 2;'
>>> query_of("  SELECT name FROM t  ")
'SELECT name FROM t'
>>> [f.kind for f in scan_query("SELECT * FROM sqlite_master")]
['schema-tables']
"""

from __future__ import annotations

import re

from referee.verify.verdict import Flag

__all__ = ["MAX_QUERY_CHARS", "query_of", "scan_query"]

#: A longer answer is refused unseen (a query pasting the sample's rows, say).
MAX_QUERY_CHARS = 20_000

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)```", re.DOTALL)

_SUSPECT: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("schema-tables", re.compile(r"\b(sqlite_(master|schema|temp_master)|information_schema"
                                 r"|duckdb_\w+|pragma_\w+)\b", re.I)),
    ("attach", re.compile(r"\b(attach|detach)\b", re.I)),
    ("file-access", re.compile(r"\b(read_\w+|copy|export|import|glob|load_extension|install"
                               r"|readfile|writefile)\s*[\s(]", re.I)),
    ("write", re.compile(r"\b(insert|update|delete|create|drop|alter|vacuum)\b", re.I)),
    ("pragma", re.compile(r"\b(pragma|set|reset|call)\b\s+\w", re.I)),
    ("recursive", re.compile(r"\brecursive\b", re.I)),
    ("literal-rows", re.compile(r"\bvalues\s*\(", re.I)),
)  # fmt: skip


def query_of(answer: str) -> str:
    """The query in ``answer`` (see the module docstring), stripped."""
    blocks = _FENCE.findall(answer)
    if not blocks:
        return answer.strip()
    tagged = [body for tag, body in blocks if tag.lower() == "sql"]
    return str((tagged or [body for _, body in blocks])[-1]).strip()


def scan_query(query: str) -> list[Flag]:
    """Flags for the constructs a query over the task's tables has no need of."""
    flags = []
    for kind, pattern in _SUSPECT:
        m = pattern.search(query)
        if m:
            start = max(0, m.start() - 30)
            flags.append(Flag(kind=kind, evidence=query[start : m.end() + 30]))
    return flags
