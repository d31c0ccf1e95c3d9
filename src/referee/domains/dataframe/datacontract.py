"""Data contracts: a task's declared rules on its output, checked with pandera on the host.

A contract is plain JSON (it travels in the task, and the prompt shows it):

.. code-block:: json

    {"name": "shipments_clean", "strict": true,
     "columns": {"qty": {"type": "int", "nullable": false, "unique": false,
                         "checks": [{"ge": 1}]}},
     "unique": [["site", "shipped_on"]],
     "row_checks": [{"column": "delivered_on", "op": "ge", "other": "shipped_on"}]}

``type`` is ``int``, ``float``, ``str``, ``bool`` or ``datetime``; a column check is one of
``{"ge": x}``, ``{"gt": x}``, ``{"le": x}``, ``{"lt": x}``, ``{"in_range": [lo, hi],
"include_min": bool, "include_max": bool}``, ``{"isin": [...]}``, ``{"str_matches": regex}``
(datetime bounds as ISO text); a row check compares two columns of a row where both are
present. :func:`pandera_schema` builds the :class:`pandera.pandas.DataFrameSchema`;
:func:`render_contract` writes the same schema as Python source for the prompt (the model can
run it on its own output in the sandbox, where pandera is importable).

:func:`check_contract` validates a candidate's *report* (the plain data the sandbox runner sent
back, :mod:`referee.domains.dataframe.compare`), never an object the candidate made: the frame is
rebuilt here from JSON cells with one dtype per reported kind (``int`` -> ``Int64``, ``float``
-> ``float64``, ``str`` -> ``str``, ``datetime`` -> ``datetime64[us]``, ``bool`` ->
``boolean``; a column of mixed kinds stays ``object`` and fails its type). So patching pandera
inside the sandbox changes nothing, and the violations come back as one sentence per rule,
naming the column, the rule and a few of the candidate's own failing values (never the expected
ones):

>>> c = {"name": "t", "columns": {"qty": {"type": "int", "checks": [{"ge": 1}]}}}
>>> r = {"columns": ["qty"], "kinds": ["int"], "rows": [[["i", 0]], [["i", 2]]]}
>>> check_contract(r, c)
['contract: qty: greater_than_or_equal_to(1) fails for 1 row (e.g. 0)']
"""

from __future__ import annotations

import re
import warnings
from collections import defaultdict
from typing import Any

__all__ = [
    "CHECK_NAMES",
    "CONTRACT_TYPES",
    "check_contract",
    "contract_error",
    "frame_from_report",
    "pandera_schema",
    "render_contract",
]

CONTRACT_TYPES = ("int", "float", "str", "bool", "datetime")
CHECK_NAMES = ("ge", "gt", "le", "lt", "in_range", "isin", "str_matches")
_OPS = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
# What pandera checks the column's dtype against (pa.Int accepts int64 and Int64 alike, so a
# program's own int64 output passes the rendered schema in the sandbox too).
_DTYPES = {"int": "pa.Int", "float": "pa.Float", "str": "pa.String", "bool": '"boolean"'}
_DTYPES["datetime"] = "pa.DateTime"
# How a reported kind is rebuilt on the host.
_REBUILD = {
    "int": "Int64",
    "float": "float64",
    "str": "str",
    "bool": "boolean",
    "datetime": "datetime64[us]",
}
_KIND_OF = {dtype: kind for kind, dtype in _REBUILD.items()}
_SHOWN = 3  # failing values shown per rule


def contract_error(contract: Any) -> str:
    """Why ``contract`` is not a well-formed contract ("" when it is)."""
    if not isinstance(contract, dict) or not isinstance(contract.get("columns"), dict):
        return "a contract is an object with 'columns'"
    for name, col in contract["columns"].items():
        if not isinstance(col, dict) or col.get("type") not in CONTRACT_TYPES:
            return f"column {name!r}: 'type' must be one of {CONTRACT_TYPES}"
        for check in col.get("checks", []):
            if not isinstance(check, dict) or not set(check) & set(CHECK_NAMES):
                return f"column {name!r}: check {check!r} names none of {CHECK_NAMES}"
    cols = set(contract["columns"])
    for key in contract.get("unique", []):
        if not isinstance(key, list) or not set(key) <= cols:
            return f"unique key {key!r} names columns outside the contract"
    for rc in contract.get("row_checks", []):
        if not isinstance(rc, dict) or rc.get("op") not in _OPS:
            return f"row check {rc!r}: 'op' must be one of {sorted(_OPS)}"
        if {rc.get("column"), rc.get("other")} - cols:
            return f"row check {rc!r} names columns outside the contract"
    return ""


def _bound(kind: str, value: Any) -> Any:
    if kind == "datetime":
        import pandas as pd  # type: ignore[import-untyped]

        return pd.Timestamp(value)
    return value


def _column_checks(kind: str, spec: dict[str, Any]) -> list[Any]:
    import pandera.pandas as pa

    out = []
    for check in spec.get("checks", []):
        if "in_range" in check:
            lo, hi = (_bound(kind, v) for v in check["in_range"])
            out.append(
                pa.Check.in_range(
                    lo,
                    hi,
                    include_min=bool(check.get("include_min", True)),
                    include_max=bool(check.get("include_max", True)),
                )
            )
        elif "isin" in check:
            out.append(pa.Check.isin(list(check["isin"])))
        elif "str_matches" in check:
            out.append(pa.Check.str_matches(str(check["str_matches"])))
        else:
            op = next(k for k in ("ge", "gt", "le", "lt") if k in check)
            out.append(getattr(pa.Check, op)(_bound(kind, check[op])))
    return out


def _row_check(rc: dict[str, Any]) -> Any:
    import pandera.pandas as pa

    col, other, op = str(rc["column"]), str(rc["other"]), str(rc["op"])

    def holds(df: Any) -> Any:
        a, b = df[col], df[other]
        cmp = {"ge": a >= b, "gt": a > b, "le": a <= b, "lt": a < b}[op]
        return a.isna() | b.isna() | cmp.fillna(False).astype(bool)

    return pa.Check(holds, name=_row_check_name(rc))


def _row_check_name(rc: dict[str, Any]) -> str:
    return f"{rc['column']} {_OPS[str(rc['op'])]} {rc['other']}"


def pandera_schema(contract: dict[str, Any]) -> Any:
    """The :class:`pandera.pandas.DataFrameSchema` of ``contract`` (pandera imported here)."""
    import pandera.pandas as pa

    dtypes = {
        "int": pa.Int,
        "float": pa.Float,
        "str": pa.String,
        "bool": "boolean",
        "datetime": pa.DateTime,
    }
    columns = {
        name: pa.Column(
            dtypes[spec["type"]],
            _column_checks(spec["type"], spec),
            nullable=bool(spec.get("nullable", False)),
            unique=bool(spec.get("unique", False)),
            required=True,
        )
        for name, spec in contract["columns"].items()
    }
    keys = [list(k) for k in contract.get("unique", [])]
    return pa.DataFrameSchema(
        columns,
        checks=[_row_check(rc) for rc in contract.get("row_checks", [])],
        # pandera takes one combined key: the first; check_contract checks any further ones.
        unique=keys[0] if keys else None,
        strict=bool(contract.get("strict", True)),
        name=str(contract.get("name", "contract")),
    )


def _literal(kind: str, value: Any) -> str:
    if kind == "datetime":
        return f"pd.Timestamp({str(value)!r})"
    return repr(value)


def render_contract(contract: dict[str, Any]) -> str:
    """``contract`` as Python source defining ``contract``, a pandera ``DataFrameSchema``
    (what the prompt shows; :func:`pandera_schema` builds the same schema)."""
    lines = [
        "import pandas as pd",
        "import pandera.pandas as pa",
        "",
        "contract = pa.DataFrameSchema(",
    ]
    lines.append("    {")
    for name, spec in contract["columns"].items():
        kind = spec["type"]
        args = [_DTYPES[kind]]
        for check in spec.get("checks", []):
            if "in_range" in check:
                lo, hi = (_literal(kind, v) for v in check["in_range"])
                extra = "".join(
                    f", {k}={bool(check[k])}" for k in ("include_min", "include_max") if k in check
                )
                args.append(f"pa.Check.in_range({lo}, {hi}{extra})")
            elif "isin" in check:
                args.append(f"pa.Check.isin({list(check['isin'])!r})")
            elif "str_matches" in check:
                args.append(f"pa.Check.str_matches({str(check['str_matches'])!r})")
            else:
                op = next(k for k in ("ge", "gt", "le", "lt") if k in check)
                args.append(f"pa.Check.{op}({_literal(kind, check[op])})")
        args.append(f"nullable={bool(spec.get('nullable', False))}")
        if spec.get("unique"):
            args.append("unique=True")
        lines.append(f"        {name!r}: pa.Column({', '.join(args)}),")
    lines.append("    },")
    checks = []
    for rc in contract.get("row_checks", []):
        a, b, op = f"df[{rc['column']!r}]", f"df[{rc['other']!r}]", _OPS[rc["op"]]
        checks.append(
            f"        pa.Check(lambda df: {a}.isna() | {b}.isna() | ({a} {op} {b}), "
            f"name={_row_check_name(rc)!r}),"
        )
    if checks:
        lines += ["    checks=[", *checks, "    ],"]
    for key in contract.get("unique", [])[:1]:
        lines.append(f"    unique={list(key)!r},")
    lines.append(f"    strict={bool(contract.get('strict', True))},")
    lines.append(f"    name={str(contract.get('name', 'contract'))!r},")
    lines.append(")")
    return "\n".join(lines) + "\n"


def frame_from_report(report: dict[str, Any], contract: dict[str, Any] | None = None) -> Any:
    """A pandas DataFrame rebuilt from a well-formed report (see the module docstring). A column
    with no values (kind ``empty``) takes the contract's type for it, when there is one."""
    import pandas as pd

    types = {n: s["type"] for n, s in (contract or {}).get("columns", {}).items()}
    data = {}
    for j, (name, kind) in enumerate(zip(report["columns"], report["kinds"], strict=True)):
        cells = [row[j] for row in report["rows"]]
        values = [None if c is None else c[1] for c in cells]
        if kind == "empty":
            kind = types.get(name, "mixed")
        if kind == "float":  # "inf" and "-inf" arrive as text
            values = [None if v is None else float(v) for v in values]
        if kind == "datetime":
            data[name] = pd.Series(pd.to_datetime(values), dtype=_REBUILD[kind])
        elif kind in _REBUILD:
            data[name] = pd.Series(values, dtype=_REBUILD[kind])
        else:  # mixed: kept as the objects they are, so a type check fails on them
            data[name] = pd.Series(values, dtype=object)
    return pd.DataFrame(data, index=pd.RangeIndex(len(report["rows"])))


def _show(values: list[Any]) -> str:
    shown = []
    for v in values[:_SHOWN]:
        text = "missing" if v is None or (isinstance(v, float) and v != v) else str(v)
        shown.append(text[:30])
    return ", ".join(shown)


def check_contract(report: dict[str, Any], contract: dict[str, Any]) -> list[str]:
    """The rules of ``contract`` that ``report`` breaks, one sentence each (empty: none).
    ``report`` must be well formed (:func:`referee.domains.dataframe.compare.well_formed`)."""
    import pandera.pandas as pa

    frame = frame_from_report(report, contract)
    broken: list[str] = []
    keys = [list(k) for k in contract.get("unique", [])]
    schema = pandera_schema(contract)
    try:
        with warnings.catch_warnings():
            # pandera tries to parse a text column it reports against a datetime type; pandas'
            # warnings about the formats it guesses say nothing about the verdict.
            warnings.simplefilter("ignore")
            schema.validate(frame, lazy=True)
    except pa.errors.SchemaErrors as e:
        broken += _sentences(e.failure_cases, frame, keys[0] if keys else [])
    except pa.errors.SchemaError as e:  # pandera raises a single error for some schema faults
        broken.append(f"contract: {str(e).splitlines()[0][:200]}")
    # Further combined keys (pandera's schema holds one): each its own check.
    for key in keys[1:]:
        present = [k for k in key if k in frame.columns]
        if len(present) == len(key) and frame.duplicated(subset=key).any():
            n = int(frame.duplicated(subset=key, keep=False).sum())
            broken.append(f"contract: unique key {key} is repeated in {n} rows")
    return broken


def _sentences(failures: Any, frame: Any, combined: list[str]) -> list[str]:
    """One sentence per (column, check) from pandera's ``failure_cases`` table (``combined``: the
    combined unique key pandera checked)."""
    groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
    order: list[tuple[str, str]] = []
    for row in failures.itertuples(index=False):
        context, column, check = str(row.schema_context), row.column, str(row.check)
        if check == "multiple_fields_uniqueness" or (
            context == "DataFrameSchema"
            and check not in ("column_in_schema", "column_in_dataframe")
        ):
            # A check on the whole frame, or on a combined key, lists each failing row once
            # per column: one sentence, its rows counted once.
            where = "rows"
            value = row.index
        else:
            where = str(column)
            value = row.failure_case
        key = (where, check)
        if key not in groups:
            order.append(key)
        groups[key].append(value)
    # A column of the wrong type fails its value checks with type errors: its type is the news.
    mistyped = {where for where, check in order if check.startswith("dtype(")}
    out = []
    for where, check in order:
        values = groups[(where, check)]
        if where in mistyped and not check.startswith("dtype(") and check != "not_nullable":
            continue
        if check == "column_in_schema":
            out.append(f"contract: unexpected column {_show(values)} (the contract is strict)")
        elif check == "column_in_dataframe":
            out.append(f"contract: missing column {_show(values)}")
        elif check.startswith("dtype("):
            got = _KIND_OF.get(str(frame[where].dtype), "mixed") if where in frame.columns else "?"
            out.append(f"contract: {where}: wrong type, expected {_type_word(check)}, got {got}")
        elif check == "not_nullable":
            n = len(values)
            out.append(f"contract: {where}: {n} missing value{'s' * (n != 1)} (not nullable)")
        elif check == "field_uniqueness":
            out.append(
                f"contract: {where}: duplicate values in {len(values)} rows (unique), "
                f"e.g. {_show(values)}"
            )
        elif check == "multiple_fields_uniqueness":
            n = len(set(values))
            out.append(f"contract: unique key {combined} is repeated in {n} rows")
        elif where == "rows":
            n = len(set(values))
            out.append(f"contract: row check {check} fails for {n} row{'s' * (n != 1)}")
        else:
            n = len(values)
            out.append(
                f"contract: {where}: {check} fails for {n} row{'s' * (n != 1)} "
                f"(e.g. {_show(values)})"
            )
    return out


def _type_word(check: str) -> str:
    inner = check[len("dtype(") : -1].strip("'\"")
    for word, pattern in (
        ("int", r"int"),
        ("float", r"float"),
        ("datetime", r"datetime"),
        ("str", r"str"),
        ("bool", r"bool"),
    ):
        if re.search(pattern, inner, re.I):
            return word
    return inner
