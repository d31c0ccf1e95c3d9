"""The reasoning domain: reasoning-gym's procedural generators as referee task families.

Each reasoning-gym dataset referee can judge (:mod:`.catalog`, 61 of its 106) is a family
``rg-NAME`` whose difficulty knob drives the dataset's own curriculum (:mod:`.families`); a
task's answer is text in ``<answer>`` tags, judged on the host by a mode that parses it as data
and never runs it (:mod:`.judge`, :mod:`.verifier`). reasoning-gym is an extra
(``pip install 'referee[reasoning]'``): only generating tasks needs it, judging them does not.

Importing this package registers, lazily: the families, the task kind ``reasoning`` and its
verifier, and the red-team corpus ``reasoning`` (:mod:`.redteam`). ``docs/domains/reasoning.md``
lists the datasets, their modes and the ones left out with the reason.
"""

from __future__ import annotations

from referee.domains.kit import Domain, families
from referee.domains.reasoning.catalog import DATASETS, family_name

__all__ = ["DOMAIN", "register"]

#: No extra checked here: only generating tasks needs reasoning-gym (it loads, ~10 s, when the
#: first task is made); judging them does not.
DOMAIN = Domain(
    "reasoning",
    package=__name__,
    kind="reasoning",
    answer_format="text",
    families=families(
        "families:generate_family",
        {
            family_name(dataset): f"reasoning-gym {dataset}, judged by {mode}"
            for dataset, mode in DATASETS.items()
        },
    ),
    verifier="verifier:make_verifier",
    count_tests="verifier:count_tests",
    corpus="redteam:run_corpus",
)


def register() -> None:
    """reasoning-gym's datasets as families, judged by text comparison."""
    DOMAIN.register()
