"""referee.domains.kit: what every domain repeats, written once."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from referee import optional
from referee.domains import registry
from referee.domains.kit import (
    Attack,
    Domain,
    FamilyPart,
    SandboxedVerifier,
    Source,
    check_reference_and_empty,
    exploit_outcome,
    families,
    hidden_count,
    judge_task,
    runner_sandbox,
    tool_call_error,
    tool_schemas,
)
from referee.envs import registry as envs
from referee.envs.tools import ToolCall, function_tool
from referee.errors import ConfigError
from referee.tasks import sources
from referee.tasks.imports.rows import RowError, iter_rows
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.verify import dispatch
from referee.verify.verdict import TestOutcome as Outcome
from referee.verify.verdict import Verdict

PACKAGE = {
    "__init__.py": "",
    "families.py": (
        "from referee.tasks.model import Task\n"
        "def generate(name, count, difficulty, seed):\n"
        "    return [Task.create(name=f'kitdemo/{name}-{seed + i}-v1', prompt='p',\n"
        "                        hidden={'inputs': [1, 2, 3]}) for i in range(count)]\n"
    ),
    "verifier.py": "def make_verifier(setup):\n    return ('verifier', setup)\n",
    "env.py": "class DemoEnv:\n    def __init__(self, turns=1):\n        self.turns = turns\n",
    "imports.py": "def load(split, path, on_bad_row=None):\n    return []\n",
    "redteam.py": "def run_corpus():\n    return []\n",
}


@pytest.fixture
def registries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Each registry a copy for the test, and a package ``kitdemo`` on the path."""
    monkeypatch.setattr(registry, "_FAMILIES", dict(registry._FAMILIES))
    monkeypatch.setattr(registry, "_CORPORA", dict(registry._CORPORA))
    monkeypatch.setattr(envs, "_REGISTRY", dict(envs._REGISTRY))
    monkeypatch.setattr(sources, "_SOURCES", dict(sources._SOURCES))
    monkeypatch.setattr(dispatch, "_REGISTRY", dict(dispatch._REGISTRY))
    (tmp_path / "kitdemo").mkdir()
    for name, text in PACKAGE.items():
        (tmp_path / "kitdemo" / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("kitdemo")]:
        del sys.modules[name]


def _demo(**changes: object) -> Domain:
    fields: dict[str, object] = {
        "package": "kitdemo",
        "kind": TaskKind.FUNCTION,  # replaced in the copied registry only
        "families": {
            **families("families:generate", {"kd-one": "the first"}),
            "kd-two": FamilyPart("families:generate", "the second", named=True),
        },
        "verifier": "verifier:make_verifier",
        "count_tests": hidden_count("inputs"),
        "env": "env:DemoEnv",
        "sources": (Source("kitdemo-rows", "imports:load", "demo rows"),),
        "corpus": "redteam:run_corpus",
    }
    return Domain("kitdemo", **{**fields, **changes})


def test_a_domain_registers_every_part_lazily(registries: Path) -> None:
    dispatch._REGISTRY.pop(TaskKind.FUNCTION)
    _demo().register()
    assert not [m for m in sys.modules if m.startswith("kitdemo")]  # nothing imported yet
    assert registry.family_names("kitdemo") == ["kd-one", "kd-two"]
    [task] = registry.generate_family("kd-two", count=1, seed=4)
    assert task.id.startswith("kitdemo/kd-two-4")
    spec = dispatch.kind_spec(TaskKind.FUNCTION)
    assert spec.make_verifier("setup") == ("verifier", "setup") and spec.count_tests(task) == 3
    assert envs.make_env("kitdemo", turns=3).turns == 3
    assert sources.get_source("kitdemo-rows").description == "demo rows"
    assert registry.run_corpus("kitdemo") == []
    assert registry.get_family("kd-one").description == "the first"


def test_a_domain_with_an_extra_checks_it_before_importing_a_part(
    registries: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(optional.EXTRAS, "kitdemo", ["no_such_module_for_kitdemo"])
    dispatch._REGISTRY.pop(TaskKind.FUNCTION)
    _demo(extra="kitdemo").register()
    with pytest.raises(ConfigError, match=r"the kitdemo domain needs referee's kitdemo extra"):
        registry.generate_family("kd-one", count=1)
    with pytest.raises(ConfigError, match=r"pip install 'referee\[kitdemo\]'"):
        envs.make_env("kitdemo")
    assert not [m for m in sys.modules if m.startswith("kitdemo")]
    task = Task.create(name="kitdemo/x-v1", prompt="p", hidden={"inputs": [1]})
    assert dispatch.kind_spec(TaskKind.FUNCTION).count_tests(task) == 1  # counting needs none


def test_a_new_kind_is_registered_with_its_answer_format(registries: Path) -> None:
    _demo(kind="kitdemo-kind", answer_format="code").register()
    assert TaskKind("kitdemo-kind") in dispatch._REGISTRY


def _verdict(reward: float, passed: bool = False, infra: str | None = None) -> Verdict:
    return Verdict(task_id="t", reward=reward, passed=passed, infra_error=infra)


def test_an_exploit_is_judged_against_the_empty_answer_on_its_task() -> None:
    task = Task.create(name="kitdemo/x-v1", prompt="p")
    seen: list[str] = []
    rewards = {"": 0.25, "guess": 0.25, "better": 0.5, "broke": 0.0}

    def verify(t: Task, answer: str) -> Verdict:
        seen.append(answer)
        return _verdict(rewards[answer], infra="sandbox lost" if answer == "broke" else None)

    attacks = (Attack(n, "hardcode", n) for n in ("guess", "better", "broke"))
    outcomes = judge_task(verify, task, attacks)
    assert seen == ["", "guess", "better", "broke"]  # the baseline first
    assert [(o.name, o.baseline, o.held) for o in outcomes] == [
        ("guess", 0.25, True),
        ("better", 0.25, False),
        ("broke", 0.25, False),  # an infrastructure failure is never held
    ]
    assert outcomes[2].flags == ("infra-error",) and outcomes[2].passed
    assert exploit_outcome("p", "x", _verdict(1.0, passed=True), 1.0).held is False


def test_an_imported_row_needs_a_passing_reference_and_a_failing_empty_answer(
    tmp_path: Path,
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{"id": 1}\n')
    [row] = iter_rows(path)
    task = Task.create(name="kitdemo/x-v1", prompt="p", hidden={"reference": "good"})
    failed = Outcome(name="case 1", status="failed", detail="got 2")

    def verifier(gold: bool, empty: bool, empty_infra: str | None = None):
        def verify(t: Task, answer: str) -> Verdict:
            if answer == "good":
                return (
                    _verdict(1.0, True)
                    if gold
                    else Verdict(task_id="t", reward=0.0, passed=False, tests=[failed])
                )
            return _verdict(1.0 if empty else 0.0, empty, empty_infra)

        return verify

    assert check_reference_and_empty(row, verifier(True, False), task).passed
    with pytest.raises(
        RowError, match=r"field 'reference': the reference does not pass \(case 1: got 2\)"
    ):
        check_reference_and_empty(row, verifier(False, False), task)
    with pytest.raises(RowError, match="field 'check': it decides nothing"):
        check_reference_and_empty(
            row, verifier(True, True), task, empty_field="check", empty_passes="it decides nothing"
        )
    with pytest.raises(RowError, match="the empty answer could not be judged: no sandbox"):
        check_reference_and_empty(row, verifier(True, False, "no sandbox"), task)


def test_a_tool_call_is_checked_against_the_tools() -> None:
    schemas = tool_schemas(
        [
            function_tool("run", "Run it.", {"code": {"type": "string"}}),
            function_tool("submit", "Submit.", {"code": {"type": "string"}}),
        ]
    )
    assert tool_call_error(ToolCall("1", "run", {"code": "x"}), schemas) == ""
    assert tool_call_error(ToolCall("2", "rm", {}), schemas) == (
        "unknown tool 'rm'; the tools are run, submit"
    )
    assert "code" in tool_call_error(ToolCall("3", "run", {}), schemas)
    assert tool_call_error(ToolCall("4", "run", {}, error="bad JSON"), schemas) == "bad JSON"


class _Box:
    def __init__(self) -> None:
        self.closed = False
        self.preload: dict[str, str] = {}

    def close(self) -> None:
        self.closed = True


def test_a_verifier_closes_the_sandbox_it_made_and_only_that() -> None:
    made = _Box()
    with SandboxedVerifier(None, lambda: made) as verifier:
        assert verifier.sandbox is made
    assert made.closed
    given = _Box()
    SandboxedVerifier(given, _Box).close()
    assert not given.closed
    SandboxedVerifier(given, _Box, own=True).close()
    assert given.closed


def test_a_runner_sandbox_preloads_the_runner_beside_what_is_given() -> None:
    with runner_sandbox({"demo_runner": "X = 1\n"}, preload={"other": ""}) as box:
        assert box.preload == {"other": "", "demo_runner": "X = 1\n"}
