"""A domain declared as data, and registered in one call: :class:`Domain`.

Every domain registers the same six parts (task kind, families, verifier, environment, import
sources, red-team corpus), each lazily, so that importing the domain's package loads nothing of
it; a :class:`Domain` names them by ``"module:attribute"`` targets relative to its package and
:meth:`Domain.register` does the registering:

>>> from referee.domains.kit import Domain, Source, families, hidden_count
>>> SQL = Domain(
...     "sql",
...     package="referee.domains.sql",
...     kind="sql",
...     families=families("families:generate", {"sql-join": "joins across tables"}),
...     verifier="verifier:make_verifier",          # make_verifier(setup: VerifierSetup)
...     count_tests=hidden_count("instances"),       # or a "module:function" target
...     env="env:SqlEnv",                            # registered under the domain's name
...     sources=(Source("text-to-sql", "imports:load_text_to_sql", "text-to-SQL JSONL"),),
...     corpus="redteam:run_corpus",                 # registered under the domain's name
... )
>>> SQL.target("env:SqlEnv")
'referee.domains.sql.env:SqlEnv'

The domain's entry point is then ``def register(): SQL.register()`` (its docstring's first line
is the domain's description in ``referee domains list``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from referee.domains.registry import FamilyGenerator, lazy, register_corpus, register_family
from referee.envs.registry import register_env
from referee.tasks.kinds import TaskKind, register_task_kind
from referee.tasks.model import Task
from referee.tasks.sources import register_source
from referee.verify.dispatch import register_kind

__all__ = ["Domain", "FamilyPart", "Source", "families", "hidden_count"]


@dataclass(frozen=True)
class FamilyPart:
    """A family's generator (a target in the domain's package) and its one-line description.
    The generator is called ``(count, difficulty, seed)``; with ``named``, the family's name
    comes first (one generator serving several families)."""

    target: str
    description: str
    named: bool = False


@dataclass(frozen=True)
class Source:
    """An import source (``referee tasks import NAME [FILE]``): its name, its loader's target
    and one line saying what it reads. With ``reads_file`` (the default) the loader is called
    ``(split, path, on_bad_row=None, **options)`` and reads a file; without it, ``(split,
    on_bad_row=None, **options)`` (a benchmark whose data ships in a package). ``options``
    names the ``--option KEY=VALUE`` keys it takes. Either way it skips the rows it cannot use
    under ``--skip-bad``."""

    name: str
    target: str
    description: str
    reads_file: bool = True
    options: tuple[str, ...] = ()


def families(target: str, descriptions: Mapping[str, str]) -> dict[str, FamilyPart]:
    """Families that one generator makes, given each family's name first:
    ``target(name, count, difficulty, seed)``."""
    return {name: FamilyPart(target, about, named=True) for name, about in descriptions.items()}


def hidden_count(key: str) -> Callable[[Task], int]:
    """How many tests a task has: the length of its ``hidden[key]`` list (0 if not a list).

    >>> hidden_count("inputs")(Task.create(name="d/x-v1", prompt="p", hidden={"inputs": [1, 2]}))
    2
    """

    def count(task: Task) -> int:
        value = task.hidden.get(key, [])
        return len(value) if isinstance(value, list) else 0

    count.__qualname__ = f"hidden_count({key!r})"
    return count


@dataclass(frozen=True)
class Domain:
    """Everything a domain registers (see the module docstring).

    ``kind``: one of referee's :class:`TaskKind` members, or a new kind's name (registered with
    ``answer_format``). ``verifier``: a target called with the verifier set's
    :class:`~referee.verify.dispatch.VerifierSetup`. ``count_tests``: a target or a callable.
    ``extra``: referee's extra every part but the test count needs (``pip install
    'referee[EXTRA]'``), checked before a part is imported."""

    name: str
    package: str
    kind: TaskKind | str
    families: Mapping[str, FamilyPart]
    verifier: str
    count_tests: str | Callable[[Task], int]
    env: str | None = None
    sources: tuple[Source, ...] = ()
    corpus: str | None = None
    extra: str | None = None
    answer_format: str | None = None
    _needs: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        needs = {"extra": self.extra, "needed_for": f"the {self.name} domain"} if self.extra else {}
        object.__setattr__(self, "_needs", needs)

    def target(self, relative: str) -> str:
        """``"module:attribute"`` in the domain's package, as :func:`lazy` takes it."""
        return f"{self.package}.{relative}"

    def part(self, relative: str) -> Callable[..., Any]:
        """The lazy callable of ``relative`` (the domain's extra checked first, if any)."""
        return lazy(self.target(relative), **self._needs)

    def register(self) -> None:
        """Register every part, lazily: nothing of the domain is imported here."""
        kind = (
            self.kind
            if isinstance(self.kind, TaskKind)
            else register_task_kind(self.kind, answer_format=self.answer_format)
        )
        for name, family in self.families.items():
            register_family(
                name, self._family(name, family), domain=self.name, description=family.description
            )
        count = self.count_tests
        register_kind(
            kind,
            self.part(self.verifier),
            lazy(self.target(count)) if isinstance(count, str) else count,
        )
        if self.env is not None:
            register_env(self.name, self.part(self.env))
        for source in self.sources:
            register_source(
                source.name,
                self.part(source.target),
                description=source.description,
                reads_file=source.reads_file,
                options=source.options,
                skips_bad_rows=True,
            )
        if self.corpus is not None:
            register_corpus(self.name, self.part(self.corpus))

    def _family(self, name: str, family: FamilyPart) -> FamilyGenerator:
        make = self.part(family.target)
        if not family.named:
            return make

        def generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
            tasks: list[Task] = make(name, count, difficulty, seed)
            return tasks

        return generate
