"""Domains as packages: the ``referee.domains`` entry points, found and loaded once.

A domain is a distribution that declares, in its ``pyproject.toml``::

    [project.entry-points."referee.domains"]
    mydomain = "referee_mydomain:register"

``register`` is a callable taking no arguments that registers the domain's parts (families,
verifier kind, environment, import source, red-team corpus) with referee's registries; its
docstring's first line describes the domain. The eight built-in domains are declared the same way
in referee's own ``pyproject.toml`` and found the same way.

The registries (task kinds, verifiers, environments, sources, families, corpora) sit *above*
this module and call :func:`discover_domains` on a miss; this module imports nothing of them
(only the standard library and :mod:`referee.errors`), so no import circle runs through it.
Each registration calls :func:`note_part`, which files the part under the domain being loaded,
so that ``referee domains list`` can say what each domain brought.

Loading is once per process and thread-safe. A domain whose ``register`` raises does not stop
the others: its :class:`DomainRecord` keeps the error, ``referee domains list`` and ``referee
doctor`` show it, and a lookup that misses says which domains failed (:func:`broken_note`).

Running from a source tree without referee installed (``PYTHONPATH=src``, no ``dist-info``, or
another checkout's ``dist-info`` without this group) the built-in entry points are read from the
``pyproject.toml`` beside ``src/`` (distribution ``referee (source tree)``); with neither, the
built-in domains are missing and a single record says why.

>>> from referee.discovery import domain_records
>>> "sql" in [r.name for r in domain_records()]
True
"""

from __future__ import annotations

import threading
import tomllib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path

from referee.errors import ConfigError

__all__ = [
    "ENTRY_POINT_GROUP",
    "PART_KINDS",
    "DomainRecord",
    "broken_note",
    "discover_domains",
    "domain_record",
    "domain_records",
    "isolated_discovery",
    "note_part",
]

#: The entry-point group every domain, built-in or not, is declared in.
ENTRY_POINT_GROUP = "referee.domains"
#: The kinds of part a domain registers (the registries' :func:`note_part` calls).
PART_KINDS = ("family", "kind", "env", "source", "corpus")
_SOURCE_TREE = "referee (source tree)"


@dataclass
class DomainRecord:
    """One domain's entry point and what loading it gave: where it comes from, its parts
    (``parts["family"]``, ``parts["kind"]``, ...), and ``error``, one line, if it failed."""

    name: str
    target: str  # "package.module:register"
    distribution: str
    version: str
    description: str = ""
    error: str | None = None
    parts: dict[str, list[str]] = field(default_factory=lambda: {k: [] for k in PART_KINDS})

    @property
    def ok(self) -> bool:
        return self.error is None


_RECORDS: dict[str, DomainRecord] = {}
_STATE = {"started": False}
_LOCK = threading.RLock()
_LOADING: ContextVar[DomainRecord | None] = ContextVar("referee_domain_loading", default=None)
Found = tuple[EntryPoint, str, str]  # an entry point, its distribution's name and version


def note_part(kind: str, name: str) -> None:
    """File a registered part under the domain whose ``register`` is running (in this thread);
    called by the registries, a no-op outside a domain's loading."""
    record = _LOADING.get()
    if record is not None and name not in record.parts.setdefault(kind, []):
        record.parts[kind].append(name)


def discover_domains() -> None:
    """Load every ``referee.domains`` entry point once (the first caller loads, the others wait;
    a call from inside a domain's ``register`` returns at once)."""
    with _LOCK:
        if _STATE["started"]:
            return
        _STATE["started"] = True
        for ep, dist, version in _FINDER[0]():
            _load(ep, dist, version)


def domain_records() -> list[DomainRecord]:
    """Every domain found, loaded or failed, sorted by name."""
    discover_domains()
    return sorted(_RECORDS.values(), key=lambda r: r.name)


def domain_record(name: str) -> DomainRecord:
    """The domain ``name``; a :class:`ConfigError` naming the domains otherwise."""
    discover_domains()
    try:
        return _RECORDS[name]
    except KeyError:
        names = ", ".join(sorted(_RECORDS)) or "none"
        raise ConfigError(f"unknown domain {name!r}; the domains: {names}") from None


def broken_note() -> str:
    """``" (domains that failed to load: NAME: ERROR; ...)"`` for a lookup's error message, or
    ``""`` when every domain loaded."""
    broken = [f"{r.name}: {r.error}" for r in domain_records() if r.error]
    return f" (domains that failed to load: {'; '.join(broken)})" if broken else ""


def _load(ep: EntryPoint, dist: str, version: str) -> None:
    if ep.name in _RECORDS:  # the same name twice: the first on sys.path wins, the other is noted
        first = _RECORDS[ep.name]
        if first.distribution != dist:
            first.error = first.error or (
                f"the name is declared twice, by {first.distribution} and {dist}; "
                "uninstall one of them"
            )
        return
    record = DomainRecord(ep.name, ep.value, dist, version)
    _RECORDS[ep.name] = record
    try:
        register = ep.load()  # imports referee's registries too: their own parts are not noted
        if not callable(register):
            raise ConfigError(f"{ep.value} is not callable; point the entry point at register()")
        token = _LOADING.set(record)
        try:
            register()
        finally:
            _LOADING.reset(token)
        doc = (getattr(register, "__doc__", None) or "").strip()
        record.description = doc.splitlines()[0] if doc else ""
    except Exception as e:  # a broken domain must not break the others: kept, shown, named
        record.error = " ".join(f"{type(e).__name__}: {e}".split())


def _installed() -> Iterator[Found]:
    """The group's entry points with their distribution's name and version; referee's own read
    from its source tree when no installed referee declares them."""
    found = list(entry_points(group=ENTRY_POINT_GROUP))
    if not any(ep.dist is not None and _is_referee(ep.dist.name) for ep in found):
        yield from _source_tree_entry_points()
    for ep in found:
        dist = ep.dist
        yield ep, dist.name if dist else "?", dist.version if dist else "?"


def _is_referee(name: str) -> bool:
    return name.lower().replace("_", "-") == "referee"


def _source_tree_entry_points() -> Iterator[Found]:
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        declared: dict[str, str] = project["entry-points"][ENTRY_POINT_GROUP]
        version = str(project.get("version", "?"))
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        _RECORDS["referee"] = DomainRecord(
            "referee",
            "",
            "referee",
            "?",
            error="referee is not installed and no pyproject.toml declares its domains beside "
            "its source: the built-in domains are missing (pip install -e .)",
        )
        return
    for name, value in declared.items():
        yield EntryPoint(name, value, ENTRY_POINT_GROUP), _SOURCE_TREE, version


#: Where discovery finds the entry points (swapped by :func:`isolated_discovery` only).
_FINDER: list[Callable[[], Iterable[Found]]] = [_installed]


@contextmanager
def isolated_discovery(
    points: Iterable[EntryPoint], *, load: bool = True
) -> Iterator[list[DomainRecord]]:
    """Discover ``points`` (distribution ``"?"``) instead of the installed entry points, on
    fresh records, and give the records (none yet unless ``load``: the first lookup loads);
    the process's records come back after. For tests of discovery: what the points'
    ``register`` registered stays registered.

    >>> from importlib.metadata import EntryPoint
    >>> bad = EntryPoint("bad", "no_such_module:register", ENTRY_POINT_GROUP)
    >>> with isolated_discovery([bad]) as records:
    ...     records[0].error
    "ModuleNotFoundError: No module named 'no_such_module'"
    """
    with _LOCK:
        saved_records, saved_state = dict(_RECORDS), dict(_STATE)
        _RECORDS.clear()
        _STATE["started"] = False
        _FINDER[0] = lambda: ((ep, "?", "?") for ep in points)
    try:
        yield domain_records() if load else []
    finally:
        with _LOCK:
            _RECORDS.clear()
            _RECORDS.update(saved_records)
            _STATE.update(saved_state)
            _FINDER[0] = _installed
