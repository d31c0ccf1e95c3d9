"""The laboratory domain: simulated systems with hidden laws, an experiment budget, and a
model judged on held-out predictions.

Four families, one per field: ``lab-kinetics`` (a reactant's rate law and Arrhenius
temperature dependence), ``lab-population`` (a species' growth law under harvesting),
``lab-pharmacology`` (a drug's absorption and elimination) and ``lab-circuits`` (what a sealed
box in series with a capacitor holds, from its step response). Each task hides a law and its
parameters; the agent runs noisy experiments within a budget (the ``lab`` environment's
``run_experiment`` tool), then submits a model (``submit``): one of the task's candidate laws
with a number for each parameter, as JSON. The judge predicts held-out experiments with its
own simulator from the submitted and the true model (:mod:`.verifier`); no submitted code
runs anywhere. Difficulty (0..1) shrinks the budget, raises the noise, hides which law holds
and sends the held-out queries beyond the experimental ranges. ``docs/domains/lab.md`` tells
the whole story.

Everything registers lazily: importing this package loads none of its modules.

>>> from referee.domains import family_names
>>> family_names("lab")
['lab-circuits', 'lab-kinetics', 'lab-pharmacology', 'lab-population']
"""

from __future__ import annotations

from referee.domains.registry import lazy, register_corpus, register_family
from referee.envs.registry import register_env
from referee.tasks.kinds import register_task_kind
from referee.verify.dispatch import register_kind

__all__ = ["FAMILIES", "register"]

_PKG = "referee.domains.lab"

#: The families and what each makes.
FAMILIES = {
    "lab-kinetics": ("generate_kinetics", "a reactant's rate law and its temperature dependence"),
    "lab-population": ("generate_population", "a species' growth law under harvesting"),
    "lab-pharmacology": ("generate_pharmacology", "a drug's absorption and elimination"),
    "lab-circuits": ("generate_circuits", "a sealed circuit's step response"),
}


def register() -> None:
    """A laboratory: hidden laws, noisy experiments on a budget, models judged on held-out runs."""
    kind = register_task_kind("lab", answer_format="text")
    for name, (function, what) in FAMILIES.items():
        register_family(
            name,
            lazy(f"{_PKG}.families:{function}"),
            domain="lab",
            description=f"lab: {what} (experiments on a budget, judged on held-out runs)",
        )
    register_kind(
        kind, lazy(f"{_PKG}.verifier:make_verifier"), lazy(f"{_PKG}.verifier:count_tests")
    )
    register_env("lab", lazy(f"{_PKG}.env:LabEnv"))
    register_corpus("lab", lazy(f"{_PKG}.redteam:run_corpus"))
