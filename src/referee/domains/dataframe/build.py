"""Making dataframe tasks: run the reference on every input set in the sandbox, record its results.

A :class:`Draft` is what a family or an import row describes (the instruction, the schema, the
visible tables, the hidden input sets, the reference program, the rules). :func:`build_tasks`
runs the reference on the visible tables and on each hidden set through the same runner that
later judges candidates (so the expected results are exactly what that runner reports), computes
the rules' numbers (input totals, row counts) from the CSV text on the host, and writes the
prompt. A reference that fails on any set is a :class:`~referee.errors.TaskError` naming the
draft and the set.

>>> tasks = build_tasks([draft])                                    # doctest: +SKIP
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.domains.dataframe.compare import RULE_TYPES, check_rules, compare_tables
from referee.domains.dataframe.datacontract import check_contract, contract_error, render_contract
from referee.domains.dataframe.execute import dataframe_sandbox, run_program
from referee.domains.dataframe.spec import COLUMN_TYPES, CONTRACT
from referee.errors import RefereeError, TaskError
from referee.sandbox import Sandbox
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task

__all__ = ["Draft", "build_tasks", "check_draft", "input_facts", "render_table"]


@dataclass(frozen=True)
class Draft:
    """A dataframe task before its reference has run."""

    name: str
    instruction: str
    schema: dict[str, dict[str, str]]
    visible: dict[str, str]
    hidden_inputs: list[dict[str, str]]
    reference: str
    rules: list[dict[str, Any]] = field(default_factory=list)
    ordered: bool = False
    difficulty: float | None = None
    unit: str | None = None
    source: str = "dataframe"
    generator: str | None = None
    seed: int | None = None
    features: dict[str, float] = field(default_factory=dict)
    #: Keep only the hidden sets whose expected output differs from the sample's (for sets the
    #: grader made from the sample: one with the sample's output rewards a hard-coded answer).
    distinct_from_sample: bool = False
    #: The output's declared data contract (:mod:`referee.domains.dataframe.datacontract`),
    #: shown in the prompt and checked with pandera on every hidden set.
    contract: dict[str, Any] | None = None


def check_draft(d: Draft) -> None:
    """A :class:`TaskError` naming the first thing wrong with ``d``'s shape."""
    if not d.schema:
        raise TaskError(f"{d.name}: no input tables")
    for table, cols in d.schema.items():
        if not isinstance(cols, dict) or not cols:
            raise TaskError(f"{d.name}: table {table!r} has no columns")
        bad = {c: t for c, t in cols.items() if t not in COLUMN_TYPES}
        if bad:
            raise TaskError(
                f"{d.name}: table {table!r} column types {bad} are not among {COLUMN_TYPES}"
            )
    for where, inputs in [("visible", d.visible), *(("hidden", h) for h in d.hidden_inputs)]:
        if set(inputs) != set(d.schema):
            raise TaskError(
                f"{d.name}: {where} inputs name tables {sorted(inputs)}, "
                f"the schema {sorted(d.schema)}"
            )
    if not d.hidden_inputs:
        raise TaskError(f"{d.name}: at least one hidden input set is needed")
    for rule in d.rules:
        if not isinstance(rule, dict) or rule.get("type") not in RULE_TYPES:
            raise TaskError(f"{d.name}: rule {rule!r} is not one of {RULE_TYPES}")
    if d.contract is not None:
        bad_contract = contract_error(d.contract)
        if bad_contract:
            raise TaskError(f"{d.name}: contract: {bad_contract}")


def input_facts(rules: list[dict[str, Any]], inputs: dict[str, str]) -> dict[str, Any]:
    """The numbers the rules compare against, computed from the input CSV text (no pandas,
    no candidate code): ``totals`` (sum of ``of`` over rows matching ``where``, empty cells
    skipped) and ``row_counts``."""
    totals: dict[str, float] = {}
    row_counts: dict[str, int] = {}
    for rule in rules:
        table = rule.get("table")
        if table not in inputs:
            continue
        rows = list(csv.DictReader(io.StringIO(inputs[table])))
        if rule["type"] == "row_count":
            row_counts[table] = len(rows)
        elif rule["type"] == "total":
            where = dict(rule.get("where", {}))
            of = str(rule.get("of"))
            picked = [
                r[of]
                for r in rows
                if all(r.get(k) == str(v) for k, v in where.items())
                and all(r.get(k, "") != "" for k in rule.get("skip_missing", []))
            ]
            totals[str(rule["column"])] = math.fsum(float(v) for v in picked if v != "")
    return {"totals": totals, "row_counts": row_counts}


def render_table(report: dict[str, Any], limit: int = 12) -> str:
    """A reported table as CSV-like text (for prompts and tool output), ``limit`` rows."""
    lines = [",".join(report["columns"])]
    for row in report["rows"][:limit]:
        lines.append(",".join("" if c is None else str(c[1]) for c in row))
    more = len(report["rows"]) - limit
    if more > 0:
        lines.append(f"... ({more} more rows)")
    return "\n".join(lines)


def _head(text: str, limit: int = 12) -> str:
    lines = text.strip("\n").split("\n")
    shown = lines[: limit + 1]
    if len(lines) > limit + 1:
        shown.append(f"... ({len(lines) - limit - 1} more rows)")
    return "\n".join(shown)


def _prompt(d: Draft, visible_output: dict[str, Any]) -> str:
    parts = [d.instruction.strip(), "", "Input tables (a sample; yours will differ):"]
    for table, cols in d.schema.items():
        typed = ", ".join(f"{c} ({t})" for c, t in cols.items())
        parts += [f"\n`{table}`: {typed}", "```csv", _head(d.visible[table]), "```"]
    out_cols = ", ".join(
        f"{c} ({k})"
        for c, k in zip(visible_output["columns"], visible_output["kinds"], strict=True)
    )
    parts += [f"\nOutput columns: {out_cols}."]
    if d.ordered:
        parts += ["The row order matters: sort as the instruction says."]
    parts += ["On the sample, the expected output is:", "```csv", render_table(visible_output)]
    parts += ["```"]
    if d.contract is not None:
        parts += [
            "",
            "The data contract the output must satisfy (pandera is importable where your "
            "program runs; the grader checks the contract on your output as reported, with "
            "int columns as Int64, text as str and dates as datetime64):",
            "```python",
            render_contract(d.contract).rstrip("\n"),
            "```",
        ]
    parts += ["", CONTRACT]
    return "\n".join(parts)


def build_tasks(drafts: Sequence[Draft], sandbox: Sandbox | None = None) -> list[Task]:
    """Tasks from ``drafts``: each reference run in ``sandbox`` (one made and closed here if
    none) on the visible tables and every hidden input set."""
    own = sandbox is None
    sb = sandbox or dataframe_sandbox(python_workers=1)  # the references run one by one
    try:
        return [_build(d, sb) for d in drafts]
    finally:
        if own:
            sb.close()


def _run_reference(d: Draft, sb: Sandbox, inputs: dict[str, str], where: str) -> dict[str, Any]:
    try:
        out = run_program(sb, d.reference, d.schema, inputs)
    except RefereeError as e:
        raise TaskError(f"{d.name}: the sandbox failed running the reference: {e}") from e
    if out.result is None:
        raise TaskError(f"{d.name}: the reference fails on the {where} tables: {out.error}")
    return out.result


def _keeps_contract(d: Draft, output: dict[str, Any], where: str) -> None:
    if d.contract is None:
        return
    broken = check_contract(output, d.contract)
    if broken:  # a contract the reference breaks would fail every right answer
        raise TaskError(f"{d.name}: the reference breaks its contract on the {where}: {broken}")


def _build(d: Draft, sb: Sandbox) -> Task:
    check_draft(d)
    visible_output = _run_reference(d, sb, d.visible, "visible")
    _keeps_contract(d, visible_output, "visible tables")
    instances = []
    for i, inputs in enumerate(d.hidden_inputs):
        expected = _run_reference(d, sb, inputs, f"hidden set {i}")
        if d.distinct_from_sample and not compare_tables(
            expected, visible_output, ordered=d.ordered
        ):
            continue
        facts = input_facts(d.rules, inputs)
        broken = check_rules(expected, d.rules, facts)
        if broken:  # rules the reference itself breaks would fail every right answer
            raise TaskError(f"{d.name}: the reference breaks its rules on hidden set {i}: {broken}")
        _keeps_contract(d, expected, f"hidden set {i}")
        instances.append({"inputs": inputs, "expected": expected, "facts": facts})
    if not instances:
        raise TaskError(
            f"{d.name}: every hidden set made from the sample gives the sample's output; "
            "give hidden_inputs of your own"
        )
    difficulty: dict[str, Any] = {"features": d.features}
    if d.difficulty is not None:
        difficulty["estimate"] = d.difficulty
    return Task.create(
        name=d.name,
        prompt=_prompt(d, visible_output),
        domain="dataframe",
        kind=TaskKind.DATAFRAME,
        answer_format="code",
        payload={
            "entry_point": "transform",
            "schema": d.schema,
            "visible": d.visible,
            "visible_output": visible_output,
            **({"contract": d.contract} if d.contract is not None else {}),
        },
        hidden={
            "instances": instances,
            "rules": d.rules,
            "compare": {"ordered": d.ordered, "tol": 1e-6, "int_float": True},
            "reference": d.reference,
        },
        difficulty=difficulty,
        provenance={
            "source": d.source,
            "generator": d.generator,
            "seed": d.seed,
            "unit": d.unit,
        },
    )
