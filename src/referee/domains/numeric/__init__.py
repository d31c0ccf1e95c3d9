"""The numeric domain: scientific computing a computational scientist meets, judged by numbers.

Tasks (``kind="numeric"``) ask for a Python function ``solve(params) -> dict`` that integrates
an ODE, solves a linear or nonlinear system, finds a root or an optimum, estimates an integral,
fits a model to noisy data or simulates a small physical system. The answer runs in a sandbox
with numpy and scipy on hidden parameter sets; its numbers come back as plain data and are
judged on the host, by tolerance against a reference and by invariants (residuals, conserved
quantities) computed from them. ``docs/domains/numeric.md`` tells the whole story.

Registered here, lazily (importing this package loads neither numpy nor scipy):

* families ``num-ode``, ``num-linear``, ``num-root``, ``num-optimize``, ``num-quadrature``,
  ``num-fit``, ``num-simulate`` (:mod:`.families`);
* the verifier of :attr:`TaskKind.NUMERIC <referee.tasks.kinds.TaskKind.NUMERIC>`
  (:mod:`.verifier`);
* the environment ``numeric`` (:mod:`.env`): run a script, check the visible set, submit;
* the import source ``numeric-rows`` (:mod:`.imports`);
* the red-team corpus ``numeric`` (:mod:`.redteam`).

>>> from referee.domains import family_names
>>> "num-ode" in family_names("numeric")
True
"""

from __future__ import annotations

from typing import Any

from referee.domains.registry import lazy, register_corpus, register_family
from referee.envs.registry import register_env
from referee.optional import require_extra
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.tasks.sources import register_source
from referee.verify.dispatch import Verifier, VerifierSetup, register_kind

__all__ = ["FAMILIES", "register"]

#: numpy and scipy, on the host and in the sandbox: ``pip install 'referee[numeric]'``.
_NEEDS: dict[str, Any] = {"extra": "numeric", "needed_for": "the numeric domain"}

#: The families and what each makes.
FAMILIES = {
    "num-ode": "integrate an ODE system (Lotka-Volterra, stiff linear) to given times",
    "num-linear": "solve a dense linear system, conditioning up to 1e10",
    "num-root": "roots: Kepler's equation, a contractive nonlinear system",
    "num-optimize": "minimise a regularised logistic loss to a small gradient",
    "num-quadrature": "integrate an oscillatory function over pieces and in total",
    "num-fit": "least-squares fit of an exponential decay to noisy data",
    "num-simulate": "simulate heat on a periodic rod, a pendulum or planets (conservation laws)",
}


def _family(name: str) -> Any:
    generate = lazy("referee.domains.numeric.families:generate", **_NEEDS)

    def make(count: int, difficulty: float | None, seed: int) -> list[Task]:
        return generate(name, count, difficulty, seed)  # type: ignore[no-any-return]

    return make


def _verifier(setup: VerifierSetup) -> Verifier:
    # Numeric tasks need numpy and scipy in the sandbox's view: a sandbox of their own.
    require_extra(**_NEEDS)
    from referee.domains.numeric.verifier import NumericVerifier

    return NumericVerifier()


def _count_tests(task: Task) -> int:
    params = task.hidden.get("params", [])
    return len(params) if isinstance(params, list) else 0


def register() -> None:
    """Scientific computing, judged by tolerance and invariants on hidden parameter sets."""
    for _name, _description in FAMILIES.items():
        register_family(_name, _family(_name), domain="numeric", description=_description)
    register_kind(TaskKind.NUMERIC, _verifier, _count_tests)
    register_env("numeric", lazy("referee.domains.numeric.env:NumericEnv", **_NEEDS))
    register_source(
        "numeric-rows",
        lazy("referee.domains.numeric.imports:numeric_rows_tasks", **_NEEDS),
        description="numeric problems: JSONL rows (problem, reference, parameter_sets, tolerance)",
        reads_file=True,
        skips_bad_rows=True,
    )
    register_corpus("numeric", lazy("referee.domains.numeric.redteam:run_corpus", **_NEEDS))
