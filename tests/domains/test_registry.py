"""The domains' registry: families by name, red-team corpora, lazy targets."""

import pytest

from referee.domains import (
    ExploitOutcome,
    family_names,
    generate_family,
    get_family,
    lazy,
    register_corpus,
    register_family,
    registry,
    run_corpus,
)
from referee.errors import ConfigError
from referee.tasks.model import Task


def test_code_families_are_registered_under_the_code_domain():
    assert {"list-ops", "list-pipeline", "recurrence", "string-pipeline"} <= set(
        family_names("code")
    )
    assert get_family("list-ops").domain == "code"


def test_unknown_family_names_the_available_ones():
    with pytest.raises(ConfigError, match=r"unknown task family .nope.*list-ops"):
        get_family("nope")


def test_a_registered_family_generates_and_checks_its_arguments(monkeypatch):
    monkeypatch.setattr(registry, "_FAMILIES", dict(registry._FAMILIES))
    made = []

    def gen(count, difficulty, seed):
        made.append((count, difficulty, seed))
        return [Task.create(name=f"t/x-{seed + i}-v1", prompt="p") for i in range(count)]

    register_family("toy-family", gen, domain="toy", description="toys")
    assert next(t.id for t in generate_family("toy-family", count=2, seed=5)).startswith("t/x-5")
    assert made == [(2, None, 5)]
    with pytest.raises(ConfigError, match="registered already"):
        register_family("toy-family", gen, domain="toy")
    with pytest.raises(ConfigError, match="count must be at least 1"):
        generate_family("toy-family", count=0)
    with pytest.raises(ConfigError, match="difficulty must be in"):
        generate_family("toy-family", count=1, difficulty=2.0)


def test_corpora_run_by_domain_and_an_exploit_holds_only_at_or_below_doing_nothing(monkeypatch):
    monkeypatch.setattr(registry, "_CORPORA", {})
    outcomes = [
        ExploitOutcome("a", "hardcode", reward=0.0, baseline=0.0, passed=False),
        ExploitOutcome("b", "hardcode", reward=0.5, baseline=0.0, passed=False),
        ExploitOutcome("c", "escape", reward=1.0, baseline=1.0, passed=True),
    ]
    register_corpus("toy", lambda: outcomes)
    assert [o.held for o in run_corpus("toy")] == [True, False, False]
    with pytest.raises(ConfigError, match="no red-team corpus for 'other'"):
        run_corpus("other")


def test_lazy_imports_its_target_on_the_first_call_only():
    dumps = lazy("json:dumps")
    assert dumps([1]) == "[1]" and dumps.__qualname__ == "json:dumps"
    with pytest.raises(ConfigError, match=r"package\.module:attribute"):
        lazy("json")
