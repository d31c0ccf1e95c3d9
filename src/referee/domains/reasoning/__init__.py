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

from referee.domains.reasoning.catalog import DATASETS, family_name
from referee.domains.registry import FamilyGenerator, lazy, register_corpus, register_family
from referee.tasks.kinds import register_task_kind
from referee.tasks.model import Task
from referee.verify.dispatch import register_kind

__all__: list[str] = []


def register() -> None:
    """reasoning-gym's datasets as families, judged by text comparison."""
    for dataset in DATASETS:
        register_family(
            family_name(dataset),
            _generator(dataset),
            domain="reasoning",
            description=f"reasoning-gym {dataset}, judged by {DATASETS[dataset]}",
        )
    kind = register_task_kind("reasoning", answer_format="text")
    register_kind(
        kind,
        lazy("referee.domains.reasoning.verifier:make_verifier"),
        lazy("referee.domains.reasoning.verifier:count_tests"),
    )
    register_corpus("reasoning", lazy("referee.domains.reasoning.redteam:run_corpus"))


def _generator(dataset: str) -> FamilyGenerator:
    def generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
        # reasoning-gym (an extra, ~10 s to import) loads when the first task is made.
        from referee.domains.reasoning.families import generate as family

        return family(dataset)(count, difficulty, seed)

    return generate
