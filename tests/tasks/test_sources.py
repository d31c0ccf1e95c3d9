"""The task-source registry: names, lookup, registration, humaneval registered."""

import pytest

from referee.errors import ConfigError
from referee.tasks.model import Task
from referee.tasks.sources import (
    get_source,
    load_source,
    register_source,
    source_names,
    unregister_source,
)


@pytest.fixture
def registry():
    """Registrations are process-wide: put the registry back as it was after the test."""
    before = {name: get_source(name) for name in source_names()}
    yield
    for name in source_names():
        unregister_source(name)
    for entry in before.values():
        register_source(entry.name, entry.load, description=entry.description)


def test_humaneval_is_registered_and_loads_lazily_with_the_split():
    assert "humaneval" in source_names()
    tasks = load_source("humaneval", split="train")
    assert len(tasks) == 164 and {t.split for t in tasks} == {"train"}
    assert tasks[0].id == "HumanEval/0"


def test_a_new_format_is_one_registration(registry):
    seen = []

    def toy(split: str) -> list[Task]:
        seen.append(split)
        return [Task.create(name="toy/a-v1", prompt="a", split=split)]

    entry = register_source("toy", toy, description="one toy task")
    assert get_source("toy") == entry and entry.description == "one toy task"
    assert source_names() == sorted(["humaneval", "toy"])
    assert [t.id for t in load_source("toy")] == ["toy/a-v1"] and seen == ["heldout"]


def test_unknown_names_and_splits_are_refused_with_the_choices(registry):
    with pytest.raises(ConfigError, match="unknown task source 'apps'; available: humaneval"):
        get_source("apps")
    with pytest.raises(ConfigError, match="split must be train or heldout, got 'dev'"):
        load_source("humaneval", split="dev")


def test_a_taken_name_needs_replace_and_names_are_one_word(registry):
    with pytest.raises(ConfigError, match=r"already registered.*replace=True"):
        register_source("humaneval", lambda split: [])
    register_source("humaneval", lambda split: [], replace=True)
    assert load_source("humaneval") == []
    with pytest.raises(ConfigError, match="one word"):
        register_source("two words", lambda split: [])
    unregister_source("humaneval")
    assert "humaneval" not in source_names()
    with pytest.raises(ConfigError, match="unknown task source 'humaneval'"):
        unregister_source("humaneval")
