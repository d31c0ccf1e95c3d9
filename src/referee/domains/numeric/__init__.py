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

from referee.domains.kit import Domain, Source, families, hidden_count
from referee.tasks.kinds import TaskKind

__all__ = ["DOMAIN", "FAMILIES", "register"]

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

#: numpy and scipy, on the host and in the sandbox: ``pip install 'referee[numeric]'``.
DOMAIN = Domain(
    "numeric",
    package=__name__,
    kind=TaskKind.NUMERIC,
    families=families("families:generate", FAMILIES),
    verifier="verifier:make_verifier",
    count_tests=hidden_count("params"),
    env="env:NumericEnv",
    sources=(
        Source(
            "numeric-rows",
            "imports:numeric_rows_tasks",
            "numeric problems: JSONL rows (problem, reference, parameter_sets, tolerance)",
        ),
    ),
    corpus="redteam:run_corpus",
    extra="numeric",
)


def register() -> None:
    """Scientific computing, judged by tolerance and invariants on hidden parameter sets."""
    DOMAIN.register()
