"""The dataframe domain: pandas pipelines over input tables, judged on hidden tables.

A task gives input tables (a visible sample as CSV), an instruction and the output's columns;
the answer is a Python program defining ``transform(tables) -> pandas.DataFrame``. The verifier
runs it in the sandbox on hidden input sets of the same schema and compares its results with the
reference's on the host, then checks the task's rules (docs/domains/dataframe.md).

Registered here, lazily (importing this package loads neither pandas nor the sandbox):

* families ``df-clean``, ``df-join-aggregate``, ``df-pivot``, ``df-window``, ``df-dates``
  (:mod:`.families`) and ``df-pipeline`` (:mod:`.pipelines`: dirty inputs, a declared data
  contract checked with pandera);
* the verifier of :attr:`~referee.tasks.kinds.TaskKind.DATAFRAME` (:mod:`.verifier`);
* the environment ``dataframe`` (:mod:`.env`): tools to list and preview the tables, run a
  script on the sample, and submit;
* the import source ``dataframe-rows`` (:mod:`.imports`);
* the red-team corpus ``dataframe`` (:mod:`.redteam`, with :mod:`.redteam_pipeline`'s
  exploits for ``df-pipeline``).

>>> from referee.domains import family_names
>>> "df-window" in family_names("dataframe")
True
"""

from __future__ import annotations

from typing import Any

from referee.domains.dataframe.names import FAMILY_NAMES
from referee.domains.registry import FamilyGenerator, lazy, register_corpus, register_family
from referee.envs.registry import register_env
from referee.optional import require_extra
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.tasks.sources import register_source
from referee.verify.dispatch import register_kind

__all__ = ["FAMILY_NAMES", "register"]

#: pandas and numpy, on the host and in the sandbox: ``pip install 'referee[dataframe]'``.
_NEEDS: dict[str, Any] = {"extra": "dataframe", "needed_for": "the dataframe domain"}


def _family(name: str) -> FamilyGenerator:
    def generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
        require_extra(**_NEEDS)
        from referee.domains.dataframe.families import generate as make

        return make(name, count, difficulty, seed)

    return generate


def register() -> None:
    """Dataframe pipelines over input tables, judged on hidden inputs of the same schema."""
    for _name, _description in FAMILY_NAMES.items():
        register_family(_name, _family(_name), domain="dataframe", description=_description)
    register_kind(
        TaskKind.DATAFRAME,
        lazy("referee.domains.dataframe.verifier:make_verifier", **_NEEDS),
        lazy("referee.domains.dataframe.verifier:count_tests"),
    )
    register_env("dataframe", lazy("referee.domains.dataframe.env:DataframeEnv", **_NEEDS))
    register_source(
        "dataframe-rows",
        lazy("referee.domains.dataframe.imports:load_rows", **_NEEDS),
        description="dataframe pipeline tasks: instruction, input tables, reference (JSONL)",
        reads_file=True,
        skips_bad_rows=True,
    )
    register_corpus(
        "dataframe", lazy("referee.domains.dataframe.redteam_pipeline:run_corpus", **_NEEDS)
    )
