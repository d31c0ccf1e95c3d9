"""One dispatch from a task's kind to its verifier, and the places that judge through it."""

from __future__ import annotations

import asyncio
import json

import pytest

from referee.errors import ConfigError
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.verify.dispatch import (
    VerifierSet,
    count_tests,
    kind_spec,
    register_kind,
    unregister_kind,
)
from referee.verify.function import FunctionVerifier
from referee.verify.pytest_verifier import PytestVerifier
from referee.verify.testgen_verifier import TestgenVerifier
from referee.verify.verdict import Verdict


class Fake:
    """A verifier that says which one it is."""

    def __init__(self, name: str) -> None:
        self.name, self.seen, self.closed = name, [], False

    def verify(self, task, answer):
        self.seen.append((task.id, answer))
        return Verdict(task_id=task.id, reward=0.5, passed=False, verifier=self.name)

    def close(self):
        self.closed = True


def _task(kind: str, fmt: str, name: str = "") -> Task:
    return Task.create(name=name or f"t/{kind}-v1", prompt="p", kind=kind, answer_format=fmt)


FN, PATCH, WRITE, CUSTOM = (
    _task("function", "code"),
    _task("repo-patch", "patch"),
    _task("test-writing", "patch"),
    _task("custom", "text"),
)


@pytest.fixture
def swapped():
    """Swap fakes in for the registered verifiers of the code kinds; restore them after."""
    kinds = (TaskKind.FUNCTION, TaskKind.REPO_PATCH, TaskKind.TEST_WRITING)
    saved = {k: kind_spec(k) for k in kinds}
    made: dict[TaskKind, Fake] = {}

    def factory(kind):
        def make(setup):
            made[kind] = Fake(f"fake-{kind.value}")
            return made[kind]

        return make

    for k in kinds:
        register_kind(k, factory(k), saved[k].count_tests, replace=True)
    yield made
    for k, spec in saved.items():
        register_kind(k, spec.make_verifier, spec.count_tests, replace=True)


def test_each_kind_goes_to_its_own_verifier():
    fakes = {k: Fake(k.value) for k in (TaskKind.FUNCTION, TaskKind.REPO_PATCH)}
    fakes[TaskKind.TEST_WRITING] = Fake("test-writing")
    with VerifierSet(lambda: None, verifiers=fakes) as vs:
        for task in (FN, PATCH, WRITE):
            assert vs.verify(task, "answer").verifier == task.kind.value
        verdicts = list(vs.verify_many([(WRITE, "a"), (FN, "b"), (PATCH, "c")], workers=2))
    assert [v.verifier for v in verdicts] == ["test-writing", "function", "repo-patch"]
    assert fakes[TaskKind.FUNCTION].seen == [(FN.id, "answer"), (FN.id, "b")]
    assert not any(f.closed for f in fakes.values())  # given, so not the set's to close


def test_the_registry_makes_the_code_verifiers_on_first_use(harness_sb):
    with VerifierSet(harness_sb) as vs:
        fv = vs.verifier(TaskKind.FUNCTION)
        assert isinstance(fv, FunctionVerifier) and fv.sandbox is harness_sb
        pv = vs.verifier(TaskKind.REPO_PATCH)
        assert isinstance(pv, PytestVerifier) and pv.sandbox is harness_sb  # shared
        assert isinstance(vs.verifier(TaskKind.TEST_WRITING), TestgenVerifier)
        assert vs.verifier(TaskKind.FUNCTION) is fv  # made once
    assert harness_sb.run_python("print(6 * 7)").stdout == "42\n"  # given: still open
    with pytest.raises(ConfigError, match="closed"):
        vs.verifier(TaskKind.FUNCTION)


def test_a_set_closes_what_it_made(swapped):
    with VerifierSet(lambda: None) as vs:
        vs.verify(FN, "x")
        vs.verify(PATCH, "y")
    assert swapped[TaskKind.FUNCTION].closed and swapped[TaskKind.REPO_PATCH].closed
    assert TaskKind.TEST_WRITING not in swapped  # never needed, never made


def test_a_kind_without_a_verifier_is_refused_naming_the_judged_kinds():
    with VerifierSet(lambda: None) as vs:
        with pytest.raises(ConfigError, match=r"no verifier .* kind 'custom'.*'function'"):
            vs.verify(CUSTOM, "hi")
        with pytest.raises(ConfigError, match="'custom'"):
            list(vs.verify_many([(FN, "x"), (CUSTOM, "y")]))  # before any work starts


def test_registering_a_kind_twice_needs_replace():
    spec = kind_spec(TaskKind.FUNCTION)
    with pytest.raises(ConfigError, match="registered already"):
        register_kind(TaskKind.FUNCTION, spec.make_verifier, spec.count_tests)


def test_a_later_kind_registers_its_verifier():
    with pytest.raises(ConfigError):
        kind_spec(TaskKind.CUSTOM)
    register_kind(TaskKind.CUSTOM, lambda setup: Fake("custom"), lambda t: 7)
    try:
        with VerifierSet(lambda: None) as vs:
            assert vs.verify(CUSTOM, "hi").verifier == "custom"
        assert count_tests(CUSTOM) == 7
    finally:
        assert unregister_kind(TaskKind.CUSTOM) is not None
    assert count_tests(CUSTOM) == 0 and unregister_kind(TaskKind.CUSTOM) is None


def test_test_counts_belong_to_the_kind():
    fn = Task.create(name="t/f-v1", prompt="p", hidden={"inputs": [1, 2, 3], "mutants": [1]})
    repo = Task.create(
        name="t/r-v1",
        prompt="p",
        kind="repo-patch",
        answer_format="patch",
        hidden={"fail_to_pass": ["a"], "pass_to_pass": ["b", "c"], "inputs": [1]},
    )
    write = Task.create(
        name="t/w-v1",
        prompt="p",
        kind="test-writing",
        answer_format="patch",
        hidden={"mutants": [1, 2], "fail_to_pass": ["a"]},
    )
    # The kind decides what is counted, whatever other keys the hidden data has.
    assert [count_tests(t) for t in (fn, repo, write, CUSTOM)] == [3, 3, 2, 0]


def test_code_runtime_and_code_env_judge_through_the_dispatch(swapped, harness_sb):
    from referee.envs import CodeEnv, CodeRuntime
    from referee.tasks.procedural import generate
    from referee.verify.record import record_function_tasks

    [fn_task] = record_function_tasks(harness_sb, [generate("list-ops", difficulty=0.2, seed=3)])

    with CodeRuntime(sandbox=harness_sb) as rt:
        assert rt.verify(PATCH, "diff").verifier == "fake-repo-patch"
        assert rt.verify(WRITE, "diff").verifier == "fake-test-writing"
        with pytest.raises(ConfigError, match="'custom'"):
            rt.verify(CUSTOM, "hi")

        async def episode():
            env = CodeEnv(rt, single_turn=True)
            await env.reset(fn_task)
            await env.step({"role": "assistant", "content": fn_task.hidden["reference"]})
            verdict = await env.verify()
            await env.close()
            return verdict

        assert asyncio.run(episode()).verifier == "fake-function"
        assert rt.function_verifier is swapped[TaskKind.FUNCTION]
    assert all(f.closed for f in swapped.values())


def test_cli_verify_judges_through_the_dispatch(swapped, tmp_path):
    from typer.testing import CliRunner

    from referee.cli import app
    from referee.tasks.model import write_tasks

    write_tasks(tmp_path / "t.jsonl", [FN, PATCH, WRITE])
    samples = [{"task_id": t.id, "completion": f"answer {i}"} for i, t in enumerate([FN, PATCH])]
    samples.append({"task_id": WRITE.id, "model_patch": "diff"})
    (tmp_path / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    files = ["--tasks", str(tmp_path / "t.jsonl"), "--samples", str(tmp_path / "s.jsonl")]
    r = CliRunner().invoke(app, ["verify", *files, "--json", "--workers", "2"])
    assert r.exit_code == 0, r.output
    verdicts = [json.loads(x) for x in r.stdout.splitlines() if x.startswith("{")]
    assert [v["verifier"] for v in verdicts] == [
        "fake-function",
        "fake-repo-patch",
        "fake-test-writing",
    ]
    assert swapped[TaskKind.FUNCTION].seen == [(FN.id, "answer 0")]
    assert all(f.closed for f in swapped.values())
