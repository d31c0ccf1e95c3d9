"""The task-source registry: names, lookup, registration, humaneval registered."""

import pytest

from referee.errors import ConfigError
from referee.tasks.model import Task
from referee.tasks.sources import (
    check_source_call,
    get_source,
    iter_source,
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
        register_source(
            entry.name,
            entry.load,
            description=entry.description,
            reads_file=entry.reads_file,
            options=entry.options,
            skips_bad_rows=entry.skips_bad_rows,
        )


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
    assert "toy" in source_names() and source_names() == sorted(source_names())
    assert [t.id for t in load_source("toy")] == ["toy/a-v1"] and seen == ["heldout"]


def test_unknown_names_and_splits_are_refused_with_the_choices(registry):
    with pytest.raises(
        ConfigError, match="unknown task source 'nosuch'; available: agentbench-os, apps, "
    ):
        get_source("nosuch")
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


PUBLIC = ["apps", "codecontests", "deepcoder", "livecodebench", "swebench", "taco", "verl"]


def test_the_public_formats_are_registered_as_sources_that_read_a_file():
    for name in PUBLIC:
        assert get_source(name).reads_file, name
    assert not get_source("humaneval").reads_file
    assert get_source("deepcoder").options == ("subset",)


def test_a_file_is_required_by_file_sources_and_refused_by_the_others(tmp_path):
    with pytest.raises(ConfigError, match=r"'apps' reads a dataset file: give it \(referee"):
        check_source_call("apps", "train")
    with pytest.raises(ConfigError, match="'humaneval' takes no file"):
        check_source_call("humaneval", "train", tmp_path / "x.jsonl")
    with pytest.raises(ConfigError, match=r"takes no option repo_dir \(its options: subset\)"):
        check_source_call("deepcoder", "train", tmp_path / "x.jsonl", ["repo_dir"])
    with pytest.raises(ConfigError, match="'humaneval' takes no option subset"):
        list(iter_source("humaneval", subset="x"))


def test_a_file_source_is_one_registration_and_streams(registry, tmp_path):
    calls = []

    def lines(split: str, path, prefix: str = "l"):
        for n, line in enumerate(open(path).read().split()):
            calls.append(n)
            yield Task.create(name=f"{prefix}/{line}", prompt=line, split=split)

    register_source("lines", lines, reads_file=True, options=["prefix"])
    (tmp_path / "f.txt").write_text("a b c")
    tasks = iter_source("lines", "train", tmp_path / "f.txt", prefix="w")
    assert next(tasks).id == "w/a" and calls == [0]  # one row at a time
    assert [t.id for t in load_source("lines", "train", tmp_path / "f.txt")] == [
        "l/a",
        "l/b",
        "l/c",
    ]
