"""Domains beyond code: one package each (sql, dataframe, numeric, shell, toolworld, verilog).

Each domain's package holds its task families, verifier, environment, import and exploit corpus,
and registers them into the registries of ``tasks``, ``verify`` and ``envs`` when imported;
:func:`load_domains` imports them all. Those registries call it on a miss, so a task of any
domain is judged, and its environment made, by name alone.

>>> from referee.domains import generate_family                           # doctest: +SKIP
>>> tasks = generate_family("sql-join", count=3, seed=0)                  # doctest: +SKIP
"""

from referee.domains.registry import (
    DOMAINS,
    ExploitOutcome,
    Family,
    FamilyGenerator,
    corpus_names,
    family_names,
    generate_family,
    get_family,
    lazy,
    load_domains,
    register_corpus,
    register_family,
    run_corpus,
)

__all__ = [
    "DOMAINS",
    "ExploitOutcome",
    "Family",
    "FamilyGenerator",
    "corpus_names",
    "family_names",
    "generate_family",
    "get_family",
    "lazy",
    "load_domains",
    "register_corpus",
    "register_family",
    "run_corpus",
]
