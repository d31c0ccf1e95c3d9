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

from referee.domains.dataframe.names import FAMILY_NAMES
from referee.domains.kit import Domain, Source, families
from referee.tasks.kinds import TaskKind

__all__ = ["DOMAIN", "FAMILY_NAMES", "register"]

#: pandas and numpy, on the host and in the sandbox: ``pip install 'referee[dataframe]'``.
DOMAIN = Domain(
    "dataframe",
    package=__name__,
    kind=TaskKind.DATAFRAME,
    families=families("families:generate", FAMILY_NAMES),
    verifier="verifier:make_verifier",
    count_tests="verifier:count_tests",
    env="env:DataframeEnv",
    sources=(
        Source(
            "dataframe-rows",
            "imports:load_rows",
            "dataframe pipeline tasks: instruction, input tables, reference (JSONL)",
        ),
    ),
    corpus="redteam_pipeline:run_corpus",
    extra="dataframe",
)


def register() -> None:
    """Dataframe pipelines over input tables, judged on hidden inputs of the same schema."""
    DOMAIN.register()
