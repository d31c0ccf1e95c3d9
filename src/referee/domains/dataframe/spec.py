"""The shape of a dataframe task, read from a :class:`~referee.tasks.model.Task`.

``payload`` (what the model sees): ``entry_point`` (``"transform"``), ``schema`` (table name ->
column name -> ``int | float | str | bool | date``), ``visible`` (table name -> CSV text) and
``visible_output`` (the reference's result on the visible tables, as plain data) and, for
families that declare one, ``contract`` (the output's data contract,
:mod:`referee.domains.dataframe.datacontract`).

``hidden`` (what only the verifier sees): ``instances`` (each ``{"inputs": {table: CSV},
"expected": <report>, "facts": {"totals": {...}, "row_counts": {...}}}``), ``rules`` (see
:func:`referee.domains.dataframe.compare.check_rules`), ``compare`` (``ordered``, ``tol``,
``int_float``) and ``reference`` (the reference program).

The contract a program keeps, said in every prompt (:data:`CONTRACT`): define
``transform(tables: dict[str, pd.DataFrame]) -> pd.DataFrame``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from referee.errors import VerifierError
from referee.tasks.model import Task

__all__ = ["COLUMN_TYPES", "CONTRACT", "DataframeSpec", "Instance", "dataframe_spec"]

COLUMN_TYPES = ("int", "float", "str", "bool", "date")

CONTRACT = """\
Answer with one Python program in a ```python block that defines

    def transform(tables: dict[str, pd.DataFrame]) -> pd.DataFrame

`tables` maps each table name to a DataFrame read from its CSV file with the column types shown \
(int columns as nullable Int64, str as pandas strings, date columns as datetime64; an empty cell \
is a missing value). Return a new pandas.DataFrame (exactly that class) whose columns are the \
output columns the task names; the index is ignored (reset it if your keys are in it), and so is \
the row order unless the task asks for sorted output. pandas and numpy are available; nothing \
else is needed. The program is judged on other tables with the same columns (other values, \
missing values, duplicates, empty groups), not only on the sample shown."""


@dataclass(frozen=True)
class Instance:
    """One hidden input set, the reference's result on it, and the numbers of its rules."""

    inputs: dict[str, str]
    expected: dict[str, Any]
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DataframeSpec:
    entry_point: str
    schema: dict[str, dict[str, str]]
    visible: dict[str, str]
    instances: list[Instance]
    rules: list[dict[str, Any]]
    ordered: bool = False
    tol: float = 1e-6
    int_float: bool = True
    contract: dict[str, Any] | None = None


def dataframe_spec(task: Task) -> DataframeSpec:
    """The spec of ``task``; a :class:`VerifierError` naming what is missing or malformed."""
    payload, hidden = task.payload, task.hidden
    missing = [k for k in ("schema", "visible") if k not in payload]
    missing += [k for k in ("instances",) if k not in hidden]
    if missing:
        raise VerifierError(
            f"task {task.id!r} is not a dataframe task: missing {', '.join(missing)} "
            "(make it with `referee tasks generate df-...` or `referee tasks import "
            "dataframe-rows FILE`)"
        )
    schema = payload["schema"]
    if not isinstance(schema, dict) or not schema:
        raise VerifierError(f"task {task.id!r}: payload.schema must name at least one table")
    instances = []
    for i, raw in enumerate(hidden["instances"]):
        if not isinstance(raw, dict) or "inputs" not in raw or "expected" not in raw:
            raise VerifierError(f"task {task.id!r}: hidden instance {i} lacks inputs/expected")
        instances.append(Instance(dict(raw["inputs"]), raw["expected"], dict(raw.get("facts", {}))))
    if not instances:
        raise VerifierError(f"task {task.id!r} has no hidden instances")
    compare = hidden.get("compare", {})
    return DataframeSpec(
        entry_point=str(payload.get("entry_point", "transform")),
        schema=schema,
        visible=dict(payload["visible"]),
        instances=instances,
        rules=list(hidden.get("rules", [])),
        ordered=bool(compare.get("ordered", False)),
        tol=float(compare.get("tol", 1e-6)),
        int_float=bool(compare.get("int_float", True)),
        contract=_contract(task, payload.get("contract")),
    )


def _contract(task: Task, contract: Any) -> dict[str, Any] | None:
    if contract is None:
        return None
    from referee.domains.dataframe.datacontract import contract_error

    bad = contract_error(contract)
    if bad:
        raise VerifierError(f"task {task.id!r}: payload.contract: {bad}")
    return dict(contract)
