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

from referee.domains.kit import Domain, FamilyPart

__all__ = ["DOMAIN", "FAMILIES", "register"]

#: The families and what each makes.
FAMILIES = {
    "lab-kinetics": ("generate_kinetics", "a reactant's rate law and its temperature dependence"),
    "lab-population": ("generate_population", "a species' growth law under harvesting"),
    "lab-pharmacology": ("generate_pharmacology", "a drug's absorption and elimination"),
    "lab-circuits": ("generate_circuits", "a sealed circuit's step response"),
}

#: Pure Python on the host (the simulators are ours): no extra, and no sandbox.
DOMAIN = Domain(
    "lab",
    package=__name__,
    kind="lab",
    answer_format="text",
    families={
        name: FamilyPart(
            f"families:{function}",
            f"lab: {what} (experiments on a budget, judged on held-out runs)",
        )
        for name, (function, what) in FAMILIES.items()
    },
    verifier="verifier:make_verifier",
    count_tests="verifier:count_tests",
    env="env:LabEnv",
    corpus="redteam:run_corpus",
)


def register() -> None:
    """A laboratory: hidden laws, noisy experiments on a budget, models judged on held-out runs."""
    DOMAIN.register()
