"""The layout of a numeric task, its prompt, and the recording of a reference's outputs.

A numeric task (``kind="numeric"``) carries::

    payload = {"entry_point": "solve", "signature": "def solve(params: dict) -> dict",
               "visible": {"params": {...}, "expected": {...}},
               "tolerance": {"rtol": ..., "atol": ...}, "invariants": [...],
               "time_limit_s": 10.0, "memory_mb": 768}
    hidden  = {"reference": "<the reference program>", "params": [hidden sets],
               "expected": [the reference's output on each]}

The candidate sees the statement, the signature, one visible parameter set with its expected
output, the tolerance and the invariants; it is judged on the hidden sets only (a program that
hard-codes the visible answer earns nothing). Expected outputs are recorded by running the
reference in the sandbox (:func:`record_outputs`): an imported reference is untrusted code.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from referee.domains.numeric.compare import Tolerance, finite_numbers
from referee.domains.numeric.execute import run_function
from referee.domains.numeric.invariants import describe_invariant
from referee.errors import RefereeError, TaskError, VerifierError
from referee.sandbox import Sandbox
from referee.tasks.model import Task

__all__ = [
    "DEFAULT_MEMORY_MB",
    "DEFAULT_SIGNATURE",
    "NumericSpec",
    "numeric_prompt",
    "record_outputs",
]

DEFAULT_SIGNATURE = "def solve(params: dict) -> dict"
DEFAULT_MEMORY_MB = 768


@dataclass(frozen=True)
class NumericSpec:
    """What the verifier needs of a task, checked."""

    entry_point: str
    params: list[dict[str, Any]]
    expected: list[Any]
    tolerance: Tolerance
    invariants: list[dict[str, Any]]
    time_limit_s: float
    memory_mb: int
    visible: dict[str, Any]

    @classmethod
    def of(cls, task: Task) -> NumericSpec:
        """The spec of ``task``; a :class:`VerifierError` naming what is missing or wrong."""
        p, h = task.payload, task.hidden
        missing = [k for k in ("entry_point", "tolerance", "visible") if k not in p]
        missing += [k for k in ("params", "expected") if k not in h]
        if missing:
            raise VerifierError(
                f"task {task.id!r} is not a numeric task: missing {', '.join(missing)} "
                "(make it with `referee tasks generate num-...` or import it as numeric-rows)"
            )
        params, expected = h["params"], h["expected"]
        if not isinstance(params, list) or not isinstance(expected, list):
            raise VerifierError(f"task {task.id!r}: params and expected must be lists")
        if len(params) != len(expected) or not params:
            raise VerifierError(
                f"task {task.id!r}: {len(params)} hidden parameter sets but "
                f"{len(expected)} expected outputs (at least one of each is needed)"
            )
        try:
            tol = Tolerance(p["tolerance"]["rtol"], p["tolerance"]["atol"])
        except (KeyError, TypeError, ValueError) as e:
            raise VerifierError(f"task {task.id!r}: bad tolerance ({e})") from e
        return cls(
            entry_point=str(p["entry_point"]),
            params=params,
            expected=expected,
            tolerance=tol,
            invariants=list(p.get("invariants", [])),
            time_limit_s=float(p.get("time_limit_s", 10.0)),
            memory_mb=int(p.get("memory_mb", DEFAULT_MEMORY_MB)),
            visible=p["visible"],
        )


def numeric_prompt(
    statement: str,
    signature: str,
    visible_params: dict[str, Any],
    visible_expected: Any,
    tolerance: Tolerance,
    invariants: list[dict[str, Any]],
    time_limit_s: float,
) -> str:
    """The prompt of a numeric task: the problem, the contract, one worked parameter set."""
    checks = "".join(f"\n- {describe_invariant(s)}" for s in invariants) or "\n- none"
    return (
        f"{statement}\n\n"
        f"Write a Python function with the signature `{signature}`. It receives one parameter "
        "set (a dict of numbers and lists) and returns plain numbers: a dict of floats and "
        "lists of floats (numpy arrays and scalars are converted to lists and floats). numpy "
        "and scipy are available; no network, no files.\n\n"
        "It is judged on hidden parameter sets of the same kind, each number against a trusted "
        f"reference within |got - want| <= atol + rtol*|want| (rtol={tolerance['rtol']:g}, "
        f"atol={tolerance['atol']:g}), and on these properties of the returned numbers:"
        f"{checks}\n\nEach call has {time_limit_s:g} seconds.\n\n"
        f"Example parameter set:\n{json.dumps(visible_params)}\n"
        f"Expected output (to the tolerance):\n{json.dumps(visible_expected)}\n\n"
        "Answer with the whole program in one ```python block."
    )


def record_outputs(
    sandbox: Sandbox,
    reference: str,
    entry_point: str,
    params: list[dict[str, Any]],
    *,
    time_limit_s: float,
    memory_mb: int,
    where: str = "the reference",
) -> list[Any]:
    """The reference's output on each parameter set, run in the sandbox (it may be imported,
    untrusted code). Every output must be finite numbers in lists and dicts; a failure is a
    :class:`TaskError` naming ``where`` and the set."""
    try:
        run = run_function(
            sandbox,
            reference,
            entry_point,
            params,
            time_limit_s=time_limit_s * 3,  # the reference is not in a hurry; the sandbox is
            memory_mb=memory_mb,
        )
    except RefereeError as e:
        raise TaskError(f"{where}: the sandbox failed while recording: {e}") from e
    outputs = []
    for i, outcome in enumerate(run.outcomes):
        if outcome.status != "ok":
            stderr = run.result.stderr.strip().splitlines()[-1:] if run.result.stderr else []
            raise TaskError(
                f"{where}: parameter set {i}: {outcome.status} ({outcome.detail}"
                f"{'; ' + stderr[0][:200] if stderr else ''})"
            )
        why = finite_numbers(outcome.value)
        if why:
            raise TaskError(f"{where}: parameter set {i}: the output is not plain numbers: {why}")
        outputs.append(outcome.value)
    if run.inconsistent:
        raise TaskError(f"{where}: a repeated call gave another answer (nondeterministic?)")
    return outputs
