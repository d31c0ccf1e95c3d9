"""A MySQL dump (``mysqldump``'s text) as SQLite statements, one database at a time.

InterCode's SQL tasks run on Spider's databases loaded into MySQL from one dump
(``intercode/assets/datasets/spider_dev.sql``); referee's SQL domain runs SQLite (and DuckDB)
in the sandbox. The dump's tables and rows carry over with a few rewrites, which is all a
mysqldump of plain tables needs:

* ``CREATE DATABASE``/``USE`` split the text into databases; comments, ``/*!...*/``
  directives, ``LOCK``/``UNLOCK TABLES`` and ``DROP TABLE`` are dropped;
* in ``CREATE TABLE``: the table options after the closing parenthesis (``ENGINE=``,
  charsets), ``COLLATE``/``CHARACTER SET`` of a column, ``AUTO_INCREMENT``, ``unsigned``,
  ``ON UPDATE ...``, index prefix lengths (`` `name`(255)``) and the index lines (``KEY``; a
  ``UNIQUE KEY name (cols)`` becomes ``UNIQUE (cols)``); keys, foreign keys and defaults
  stay;
* string literals lose MySQL's backslash escapes (``\\'`` becomes ``''``, ``\\\\`` a
  backslash, ``\\n`` a newline...), which SQLite does not read.

What does not carry over is MySQL's behaviour: its ``utf8mb4_general_ci`` collation compares
text without case (``'cat' = 'Cat'`` there, not here), and its arithmetic and types differ in
places (integer division, ``DECIMAL``). A query whose answer depends on them gives another
result here; the import runs each gold query on the SQLite database it made.

>>> dump = ("CREATE DATABASE IF NOT EXISTS `d`;\\nUSE `d`;\\n"
...         "CREATE TABLE `t` (\\n  `id` int NOT NULL AUTO_INCREMENT,\\n"
...         "  `name` text COLLATE utf8mb4_general_ci,\\n  PRIMARY KEY (`id`),\\n"
...         "  KEY `k` (`name`(10))\\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;\\n"
...         "INSERT INTO `t` VALUES (1,'O\\\\'Brien'),(2,'a\\\\\\\\b');\\n")
>>> ddl, inserts = sqlite_databases(dump)["d"]
>>> print(ddl)
CREATE TABLE `t` (
  `id` int NOT NULL,
  `name` text,
  PRIMARY KEY (`id`)
);
>>> print(inserts)
INSERT INTO `t` VALUES (1,'O''Brien'),(2,'a\\b');
"""

from __future__ import annotations

import re

__all__ = ["sqlite_databases", "unescape_strings"]

_USE = re.compile(r"^USE `([^`]+)`;\s*$")
_DROP_LINE = re.compile(
    r"^(--|/\*!.*\*/;?\s*$|LOCK TABLES|UNLOCK TABLES|DROP TABLE|CREATE DATABASE|SET )"
)
_TABLE_OPTIONS = re.compile(r"^\)\s*ENGINE=.*;\s*$")
_INDEX = re.compile(r"^\s*(?:FULLTEXT |SPATIAL )?(?:KEY|INDEX) `[^`]*` \(.*\),?\s*$")
_UNIQUE = re.compile(r"^(\s*)UNIQUE KEY `[^`]*` (\(.*\))(,?)\s*$")
_COLUMN_NOISE = re.compile(
    r"\s+(?:COLLATE\s+\w+|CHARACTER SET\s+\w+|AUTO_INCREMENT|unsigned|ON UPDATE \w+(?:\(\))?)",
    re.I,
)
_PREFIX_LENGTH = re.compile(r"(`[^`]+`)\(\d+\)")
_ESCAPES = {"'": "''", '"': '"', "\\": "\\", "n": "\n", "r": "\r", "t": "\t", "0": "\0",
            "b": "\b", "Z": "\x1a", "%": "\\%", "_": "\\_"}  # fmt: skip


def unescape_strings(statement: str) -> str:
    """``statement`` with each single-quoted MySQL literal rewritten for SQLite.

    >>> unescape_strings("VALUES ('it\\\\'s', 'a''b', 'c\\\\\\\\d')")
    "VALUES ('it''s', 'a''b', 'c\\\\d')"
    """
    out: list[str] = []
    i, n = 0, len(statement)
    while i < n:
        c = statement[i]
        if c != "'":
            out.append(c)
            i += 1
            continue
        out.append("'")
        i += 1
        while i < n:
            c = statement[i]
            if c == "\\" and i + 1 < n:
                out.append(_ESCAPES.get(statement[i + 1], statement[i + 1]))
                i += 2
            elif c == "'" and i + 1 < n and statement[i + 1] == "'":
                out.append("''")
                i += 2
            elif c == "'":
                out.append("'")
                i += 1
                break
            else:
                out.append(c)
                i += 1
    return "".join(out)


def _table_lines(lines: list[str]) -> list[str]:
    body: list[str] = []
    for line in lines[1:]:
        if _INDEX.match(line):
            continue
        m = _UNIQUE.match(line)
        if m:
            line = f"{m.group(1)}UNIQUE {m.group(2)}{m.group(3)}"
        if line.lstrip().startswith(("PRIMARY KEY", "UNIQUE")):
            line = _PREFIX_LENGTH.sub(r"\1", line)  # `name`(255): a MySQL index prefix
        body.append(_COLUMN_NOISE.sub("", line.rstrip()))
    if body:  # the line before the closing one may have lost its successor
        body[-1] = body[-1].rstrip(",")
    return [lines[0].rstrip(), *body, ");"]


def sqlite_databases(dump: str) -> dict[str, tuple[str, str]]:
    """Each database of ``dump`` (by its ``USE`` name, in order) as ``(ddl, inserts)``: the
    ``CREATE TABLE`` statements and the ``INSERT`` statements, SQLite's dialect."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    current: str | None = None
    table: list[str] | None = None
    for line in dump.splitlines():
        use = _USE.match(line)
        if use:
            current = use.group(1)
            out.setdefault(current, ([], []))
            continue
        if current is None:
            continue
        ddl, inserts = out[current]
        if table is not None:
            if _TABLE_OPTIONS.match(line) or line.startswith(")"):
                ddl.append("\n".join(_table_lines(table)))
                table = None
            else:
                table.append(line)
            continue
        if line.startswith("CREATE TABLE"):
            table = [line]
        elif line.startswith("INSERT INTO"):
            inserts.append(unescape_strings(line.rstrip()))
        elif not line.strip() or _DROP_LINE.match(line):
            continue
    return {name: ("\n".join(d), "\n".join(i)) for name, (d, i) in out.items()}
