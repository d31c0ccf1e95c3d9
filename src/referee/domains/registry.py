"""Task families by name (``referee tasks generate NAME``) and the discovery of domains.

A *family* makes seeded, reproducible tasks with a difficulty knob: ``generate(count,
difficulty, seed)`` returns finished tasks (references recorded, ``provenance.unit`` set to the
family structure a held-out split keeps whole). The code domain's procedural families are
registered here; every other domain is a package found through the ``referee.domains`` entry
points (:mod:`referee.discovery`), whose ``register()`` registers its families, verifier,
environment, import source and red-team corpus, so everything about a domain lives in its
package:

>>> from referee.domains import family_names
>>> "list-ops" in family_names()
True

A new domain (``referee domains new NAME``, ``docs/domains.md``) registers, lazily (no heavy
import at registration), with :func:`register_family`, :func:`register_corpus`,
:func:`referee.verify.dispatch.register_kind`, :func:`referee.envs.register_env` and
:func:`referee.tasks.sources.register_source`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from referee.discovery import broken_note, discover_domains, note_part
from referee.errors import ConfigError
from referee.optional import require_extra
from referee.tasks.model import Task

__all__ = [
    "ExploitOutcome",
    "Family",
    "FamilyGenerator",
    "corpus_names",
    "family_names",
    "generate_family",
    "get_family",
    "lazy",
    "register_corpus",
    "register_family",
    "run_corpus",
]

#: ``generate(count, difficulty, seed) -> tasks``: ``difficulty`` None spreads the tasks over
#: 0, 0.1, ..., 1; task ``i`` uses seed ``seed + i``.
FamilyGenerator = Callable[[int, float | None, int], list[Task]]


@dataclass(frozen=True)
class Family:
    """A registered task family: its name, its domain, one line saying what it makes, and
    its generator."""

    name: str
    domain: str
    description: str
    generate: FamilyGenerator


@dataclass(frozen=True)
class ExploitOutcome:
    """One exploit of a domain's red-team corpus, judged: it is ``held`` when its reward is no
    more than ``baseline`` (what doing nothing earns on the same task) and it did not pass."""

    name: str
    klass: str  # what it tries: read-hidden, hardcode-visible, escape, resource, ...
    reward: float
    baseline: float
    passed: bool
    flags: tuple[str, ...] = ()

    @property
    def held(self) -> bool:
        return not self.passed and self.reward <= self.baseline


#: Runs a domain's exploit corpus (in the sandbox) and returns every exploit's outcome.
CorpusRunner = Callable[[], list[ExploitOutcome]]

_FAMILIES: dict[str, Family] = {}
_CORPORA: dict[str, CorpusRunner] = {}


def register_family(
    name: str,
    generate: FamilyGenerator,
    *,
    domain: str,
    description: str = "",
    replace: bool = False,
) -> Family:
    """Register ``generate`` as the family ``name`` of ``domain``; a taken name is a
    :class:`ConfigError` unless ``replace`` is given."""
    if not name or name != name.strip() or " " in name:
        raise ConfigError(f"a task family name is one word, got {name!r}")
    if name in _FAMILIES and not replace:
        raise ConfigError(f"task family {name!r} is registered already; pass replace=True")
    family = Family(name, domain, description, generate)
    _FAMILIES[name] = family
    note_part("family", name)
    return family


def register_corpus(domain: str, run: CorpusRunner, *, replace: bool = False) -> None:
    """Register ``run`` as ``domain``'s red-team corpus (``referee redteam --verifier DOMAIN``)."""
    if domain in _CORPORA and not replace:
        raise ConfigError(f"domain {domain!r} has a red-team corpus already; pass replace=True")
    _CORPORA[domain] = run
    note_part("corpus", domain)


def corpus_names() -> list[str]:
    """The domains with a red-team corpus, sorted."""
    discover_domains()
    return sorted(_CORPORA)


def run_corpus(domain: str) -> list[ExploitOutcome]:
    """Run ``domain``'s red-team corpus; a :class:`ConfigError` naming the corpora if none."""
    discover_domains()
    try:
        run = _CORPORA[domain]
    except KeyError:
        raise ConfigError(
            f"no red-team corpus for {domain!r}; domains with one: "
            f"{', '.join(corpus_names()) or 'none'}{broken_note()}"
        ) from None
    return run()


def family_names(domain: str | None = None) -> list[str]:
    """The registered families' names (of ``domain`` only, if given), sorted."""
    discover_domains()
    return sorted(n for n, f in _FAMILIES.items() if domain is None or f.domain == domain)


def get_family(name: str) -> Family:
    """The family ``name``; a :class:`ConfigError` listing the families otherwise."""
    discover_domains()
    try:
        return _FAMILIES[name]
    except KeyError:
        raise ConfigError(
            f"unknown task family {name!r}; available: {', '.join(family_names())}{broken_note()}"
        ) from None


def generate_family(
    name: str, *, count: int, difficulty: float | None = None, seed: int = 0
) -> list[Task]:
    """``count`` tasks of family ``name`` (seeds ``seed``, ``seed + 1``...)."""
    if count < 1:
        raise ConfigError(f"count must be at least 1, got {count}")
    if difficulty is not None and not 0.0 <= difficulty <= 1.0:
        raise ConfigError(f"difficulty must be in [0, 1], got {difficulty}")
    return get_family(name).generate(count, difficulty, seed)


def lazy(target: str, *, extra: str | None = None, needed_for: str = "") -> Callable[..., Any]:
    """A callable that imports ``"package.module:attribute"`` on its first call and calls it:
    a domain registers its parts without importing them (pandas, numpy, duckdb load only when
    a task of the domain is made or judged). With ``extra``, each call first checks that
    referee's extra of that name is installed (:func:`referee.optional.require_extra`): a core
    install refuses the part in one line naming ``pip install 'referee[EXTRA]'``."""
    module, _, attribute = target.partition(":")
    if not module or not attribute:
        raise ConfigError(f"a lazy target is 'package.module:attribute', got {target!r}")

    def call(*args: Any, **kwargs: Any) -> Any:
        if extra is not None:
            require_extra(extra, needed_for=needed_for or target)
        return getattr(importlib.import_module(module), attribute)(*args, **kwargs)

    call.__name__ = attribute
    call.__qualname__ = target
    # What it stands for, so that its signature can be read (referee.envs.registry.env_keywords).
    setattr(call, "lazy_target", target)  # noqa: B010 (mypy: a function has no such attribute)
    return call


def _procedural(family: str) -> FamilyGenerator:
    def generate(count: int, difficulty: float | None, seed: int) -> list[Task]:
        from referee.verify.record import generate_recorded  # runs references in the sandbox

        return generate_recorded(family, count=count, difficulty=difficulty, seed=seed)

    return generate


def _register_code_families() -> None:
    from referee.tasks.procedural import FAMILIES

    for family in FAMILIES:
        register_family(
            family,
            _procedural(family),
            domain="code",
            description="procedural Python function tasks (tests recorded in the sandbox)",
        )


_register_code_families()
