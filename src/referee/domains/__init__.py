"""Domains beyond code: one package each (sql, dataframe, numeric, shell, toolworld, verilog
here; others from any installed distribution).

Each domain's package holds its task families, verifier, environment, import and exploit corpus;
its ``register()``, a ``referee.domains`` entry point, registers them into the registries of
``tasks``, ``verify`` and ``envs`` (:mod:`referee.discovery` loads them all, once, when a
registry misses), so a task of any domain is judged, and its environment made, by name alone.
``docs/domains.md`` is the guide to writing one.

>>> from referee.domains import generate_family                           # doctest: +SKIP
>>> tasks = generate_family("sql-join", count=3, seed=0)                  # doctest: +SKIP
"""

from referee.domains.registry import (
    ExploitOutcome,
    Family,
    FamilyGenerator,
    corpus_names,
    family_names,
    generate_family,
    get_family,
    lazy,
    register_corpus,
    register_family,
    run_corpus,
)

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
