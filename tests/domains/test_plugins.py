"""Domains as packages: the ``referee.domains`` entry points (referee.discovery)."""

from __future__ import annotations

import threading
import time
from importlib.metadata import EntryPoint

import pytest

from referee.discovery import (
    ENTRY_POINT_GROUP,
    broken_note,
    domain_record,
    domain_records,
    isolated_discovery,
)
from referee.domains import family_names
from referee.envs import make_env
from referee.errors import ConfigError, TaskError
from referee.tasks.kinds import TaskKind, parse_kind, register_task_kind
from referee.tasks.model import Task, read_tasks, write_tasks
from tests.domains import plugin_fixture

BUILT_IN = {"sql", "dataframe", "numeric", "shell", "toolworld", "verilog", "lab"}


def _ep(name: str, target: str) -> EntryPoint:
    return EntryPoint(name, target, ENTRY_POINT_GROUP)


def test_the_built_in_domains_are_entry_points_with_their_parts() -> None:
    records = {r.name: r for r in domain_records()}
    assert set(records) >= BUILT_IN
    sql = records["sql"]
    assert sql.ok and sql.target == "referee.domains.sql:register"
    assert sql.distribution.startswith("referee") and sql.version != "?"
    assert sql.parts["kind"] == ["sql"] and sql.parts["env"] == ["sql"]
    assert sql.parts["corpus"] == ["sql"] and "sql-join" in sql.parts["family"]
    # referee's own parts (the code families, the code environments) belong to no domain.
    assert not any("list-ops" in r.parts["family"] for r in records.values())
    assert not any("code" in r.parts["env"] for r in records.values())


def test_a_broken_domain_is_recorded_and_the_others_load() -> None:
    points = [
        _ep("missing", "no_such_module_for_referee:register"),
        _ep("raises", "tests.domains.plugin_fixture:broken"),
        _ep("not-callable", "tests.domains.plugin_fixture:NOT_CALLABLE"),
        _ep("good", "tests.domains.plugin_fixture:register"),
    ]
    with isolated_discovery(points) as records:
        by_name = {r.name: r for r in records}
        assert by_name["good"].ok, by_name["good"].error
        assert by_name["good"].parts["family"] == ["plugin-fixture-family"]
        assert by_name["good"].description == "A test domain: one family, one kind."
        assert by_name["missing"].error == (
            "ModuleNotFoundError: No module named 'no_such_module_for_referee'"
        )
        assert by_name["raises"].error == "RuntimeError: the domain's bug on two lines"
        assert "is not callable" in (by_name["not-callable"].error or "")
        note = broken_note()
        assert "raises: RuntimeError" in note and "good" not in note
        # A lookup that misses names the broken domains.
        with pytest.raises(ConfigError, match="domains that failed to load: missing"):
            make_env("no-such-env")
        with pytest.raises(ConfigError, match="unknown domain 'nope'"):
            domain_record("nope")
    assert "plugin-fixture-family" in family_names()  # what it registered stays registered
    assert {r.name for r in domain_records()} >= BUILT_IN  # the process's records came back


def test_discovery_loads_each_domain_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    plugin_fixture.CALLS.clear()
    slow = plugin_fixture.register

    def register() -> None:
        time.sleep(0.2)
        slow()

    monkeypatch.setattr(plugin_fixture, "register", register)
    points = [_ep("good", "tests.domains.plugin_fixture:register")]
    with isolated_discovery(points, load=False):
        seen: list[int] = []
        threads = [
            threading.Thread(target=lambda: seen.append(len(domain_records()))) for _ in range(4)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert plugin_fixture.CALLS == ["register"] and seen == [1, 1, 1, 1]


def test_a_registered_kind_round_trips_through_a_task_file(tmp_path: object) -> None:
    kind = register_task_kind("plugin-roundtrip", answer_format="code")
    assert TaskKind("plugin-roundtrip") is kind and parse_kind("plugin-roundtrip") is kind
    assert kind.answer_format == "code" and not kind.is_repository
    assert kind not in list(TaskKind)  # the enum's own members are unchanged
    task = Task.create(name="p/x-v1", prompt="p", kind="plugin-roundtrip", answer_format="code")
    path = f"{tmp_path}/t.jsonl"
    write_tasks(path, [task])
    (back,) = read_tasks(path)  # the hash, which covers the kind, verifies on reading
    assert back == task and back.kind is kind
    assert '"kind":"plugin-roundtrip"' in open(path).read().replace(" ", "")
    with pytest.raises(ConfigError, match="answer format 'code'"):
        register_task_kind("plugin-roundtrip", answer_format="text")
    with pytest.raises(ConfigError, match="one of referee's own"):
        register_task_kind("sql", answer_format="code")
    with pytest.raises(TaskError, match="unknown task kind 'never-registered'"):
        parse_kind("never-registered")
    with pytest.raises(TaskError, match="answers with answer_format 'code'"):
        Task.create(name="p/y-v1", prompt="p", kind="plugin-roundtrip", answer_format="text")
