"""End to end on code: RolloutRunner + OpenAIPolicy (a fake server on loopback) + CodeEnv in the
real sandbox, on recorded procedural function tasks, with the trajectories stored and read back.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.envs import CodeRuntime, make_env
from referee.policy import OpenAIPolicy, Sampling
from referee.rollout import RolloutRunner, read_jsonl
from referee.rollout.trajectory import Trajectory
from referee.tasks import Task, generate
from referee.track.export import export_jsonl
from referee.track.store import TrackStore
from referee.verify.record import record_function_tasks
from tests.policy.fake_openai import CodeAnswer, FakeOpenAI

TOOLS = {"list_files", "read_file", "write_file", "run_python", "run_tests", "submit"}
WRONG_BODY = "    return 12345\n"
#: Per task id, the arguments its visible test and the agent's run_python probe call solve with.
PROBE_ARGS: dict[str, list[Any]] = {}


def _reference(task: Task) -> str:
    return str(task.payload["code_prompt"] + task.hidden["reference"])


def _host_call(task: Task, args: list[Any]) -> Any:
    """The reference's result on ``args``, computed here (trusted code, for the expectations)."""
    namespace: dict[str, Any] = {}
    exec(_reference(task), namespace)
    return namespace[task.payload["entry_point"]](*args)


def _probe(args: list[Any]) -> str:
    return f"import solution\nprint('probe:', repr(solution.solve(*{args!r})))"


@pytest.fixture(scope="module")
def tasks(harness_sb: Any) -> list[Task]:
    """Two recorded procedural tasks, each with one visible test that run_tests can run."""
    drafts = []
    for family, seed in (("list-pipeline", 11), ("string-pipeline", 12)):
        draft = generate(family, difficulty=0.3, seed=seed)
        args = PROBE_ARGS[draft.id] = draft.hidden["generated_inputs"][-1]
        expected = _host_call(draft, args)
        visible = [f"assert solve(*{args!r}) == {expected!r}"]
        drafts.append(
            draft.model_copy(update={"payload": {**draft.payload, "visible_tests": visible}})
        )
    return record_function_tasks(harness_sb, drafts)


@pytest.fixture(scope="module")
def runtime(harness_sb: Any) -> Iterator[CodeRuntime]:
    with CodeRuntime(sandbox=harness_sb) as rt:
        yield rt


@pytest.fixture(scope="module")
def server(tasks: list[Task]) -> Iterator[FakeOpenAI]:
    """The right solution.py for the first task, a wrong one for the second (keyed by the
    docstring, which only that task's prompt holds)."""
    right, wrong = tasks
    with FakeOpenAI() as s:
        s.code_answers = {
            _docstring(right): CodeAnswer(_reference(right), _probe(PROBE_ARGS[right.id])),
            _docstring(wrong): CodeAnswer(
                wrong.payload["code_prompt"] + WRONG_BODY,
                _probe(PROBE_ARGS[wrong.id]),
            ),
        }
        yield s


@pytest.fixture(autouse=True)
def _clean(server: FakeOpenAI) -> None:
    server.reset()


def _docstring(task: Task) -> str:
    return str(task.payload["code_prompt"]).split('"""')[1]


def _decoded(token_ids: list[int] | None) -> str:
    """The fake server's tokens are the characters of what it answered."""
    assert token_ids is not None
    return "".join(map(chr, token_ids))


def _assert_tokens_from_the_server(t: Trajectory) -> None:
    for turn in t.turns:
        assert turn.token_ids is not None and turn.logprobs is not None and turn.prompt_token_ids
        assert len(turn.token_ids) == len(turn.logprobs) == turn.completion_tokens > 0
        assert turn.logprobs[:2] == pytest.approx([-0.01, -0.02])
        assert turn.prompt_tokens == len(turn.prompt_token_ids)


def test_multi_turn_write_try_submit_over_http_is_judged_and_stored(
    tmp_path: Path, tasks: list[Task], runtime: CodeRuntime, server: FakeOpenAI
) -> None:
    right, wrong = tasks
    uids_held = set(runtime.sandbox.uids._held)
    with TrackStore(tmp_path / "run") as store:
        runner = RolloutRunner(
            lambda: make_env("code", runtime=runtime, single_turn=False),
            OpenAIPolicy(server.url, "code-agent"),
            concurrency=4,
            group_size=2,
            store=store,
            run_id="e2e",
            sampling=Sampling(temperature=0.7, max_tokens=2048),
            max_infra_retries=0,
        )
        out = runner.run_sync(tasks, step=3)
        requests = list(server.requests)
        stored = {t.id: t for t in store.iter_trajectories()}
        passed_ids = {t.id for t in store.trajectories(passed=True)}
        by_task = {
            tid: store.trajectories(task_id=tid, run_id="e2e", step=3)
            for tid in (right.id, wrong.id)
        }
        export_jsonl(store, tmp_path / "export.jsonl")

    assert set(runtime.sandbox.uids._held) == uids_held  # every episode's workspace gave its back
    assert [t.task_id for t in out] == [right.id, right.id, wrong.id, wrong.id]
    assert all(t.error is None and t.attempts == 1 for t in out), [t.error for t in out]
    assert all(t.env == "code" and t.policy == "openai:code-agent" for t in out)
    assert [t.end_reason for t in out] == ["submitted"] * 4
    assert [t.passed for t in out] == [True, True, False, False]
    assert [t.reward for t in out][:2] == [1.0, 1.0]
    for t in out[2:]:
        assert t.verdict is not None and t.verdict.infra_error is None
        assert t.reward is not None and t.reward < 1.0
        assert any(x.status != "passed" for x in t.verdict.tests)
    assert out[0].group_id == out[1].group_id != out[2].group_id == out[3].group_id

    # The episode's first messages: the tool system prompt, then the task's own prompt.
    first = out[0]
    assert [m["role"] for m in first.messages] == ["system", "user"]
    assert "solution.py" in first.messages[0]["content"]
    assert first.messages[1]["content"] == right.prompt[0].content

    for t, task in ((out[0], right), (out[2], wrong)):
        solution = server.code_answers[_docstring(task)].solution
        args = PROBE_ARGS[task.id]
        assert len(t.turns) == 3 and t.tool_calls == 4
        write, trial, submit = t.turns
        (call,) = write.assistant["tool_calls"]
        assert call["function"]["name"] == "write_file"
        assert json.loads(call["function"]["arguments"]) == {
            "path": "solution.py",
            "content": solution,
        }
        assert write.observations == [
            {
                "role": "tool",
                "tool_call_id": "call_0_0",
                "name": "write_file",
                "content": f"wrote {len(solution.encode())} bytes to solution.py",
            }
        ]
        assert write.finish_reason == "tool_calls" and write.metrics["tool_calls"] == 1.0

        assert [c["function"]["name"] for c in trial.assistant["tool_calls"]] == [
            "run_python",
            "run_tests",
        ]
        ran, tested = trial.observations
        assert (ran["tool_call_id"], tested["tool_call_id"]) == ("call_1_0", "call_1_1")
        assert ran["content"].startswith("exit 0 in"), ran["content"]
        got = _host_call(task, args) if task is right else 12345
        assert f"probe: {got!r}" in ran["content"]
        assert trial.metrics["tool_calls"] == 2.0 and trial.metrics["exec_s"] > 0

        assert submit.observations == [
            {"role": "tool", "tool_call_id": "call_2_0", "name": "submit", "content": "submitted"}
        ]
        # Token ids and logprobs are the server's, turn by turn.
        _assert_tokens_from_the_server(t)
        for turn, name in zip(t.turns, ("write_file", "run_python", "submit"), strict=True):
            assert name in _decoded(turn.token_ids)
    assert out[0].turns[1].observations[1]["content"].startswith("1 of 1 visible tests passed")
    wrong_tests = out[2].turns[1].observations[1]["content"]
    assert wrong_tests.startswith("0 of 1 visible tests passed") and "FAILED assert" in wrong_tests

    # What went over the wire: the six tools every turn, and each tool result sent back.
    assert len(requests) == 4 * 3
    assert all({x["function"]["name"] for x in r["tools"]} == TOOLS for r in requests)
    last = next(
        r
        for r in requests
        if sum(m["role"] == "assistant" for m in r["messages"]) == 2
        and _docstring(right) in r["messages"][1]["content"]
    )
    assert [m["role"] for m in last["messages"]] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "tool",
    ]
    assert last["messages"][3]["content"].startswith("wrote ")
    assert last["temperature"] == 0.7 and last["logprobs"] is True

    # The store and its JSONL export hold exactly these trajectories, equal to those returned.
    assert set(stored) == {t.id for t in out}
    for t in out:
        assert stored[t.id].model_dump() == t.model_dump()
    assert passed_ids == {out[0].id, out[1].id}
    assert [t.id for t in by_task[wrong.id]] and all(not t.passed for t in by_task[wrong.id])
    assert {t.id for t in by_task[right.id]} == {out[0].id, out[1].id}
    from_jsonl = {t.id: t for t in read_jsonl(tmp_path / "export.jsonl")}
    assert {k: v.model_dump() for k, v in from_jsonl.items()} == {t.id: t.model_dump() for t in out}
    with TrackStore(tmp_path / "run", create=False) as reopened:
        assert reopened.count_trajectories() == 4
        back = next(x for x in reopened.trajectories(task_id=right.id) if x.id == out[0].id)
        assert back.turns[0].token_ids == out[0].turns[0].token_ids
        assert back.verdict == out[0].verdict


def test_single_turn_python_block_over_http(
    tasks: list[Task], runtime: CodeRuntime, server: FakeOpenAI
) -> None:
    runner = RolloutRunner(
        lambda: make_env("code", runtime=runtime),  # function tasks: single-turn by default
        OpenAIPolicy(server.url, "code-single"),
        concurrency=2,
        sampling=Sampling(temperature=0.0, max_tokens=1024),
        max_infra_retries=0,
    )
    out = runner.run_sync(tasks)
    assert all(t.error is None for t in out), [t.error for t in out]
    assert [t.passed for t in out] == [True, False]
    assert out[0].reward == 1.0
    wrong_reward = out[1].reward
    assert wrong_reward is not None and wrong_reward < 1.0
    for t, task in zip(out, tasks, strict=True):
        (turn,) = t.turns
        assert t.end_reason == "answered" and t.tool_calls == 0 and turn.observations == []
        assert t.messages == [m.model_dump() for m in task.prompt]  # no system prompt, no tools
        assert "```python\n" in t.final_text() and _decoded(turn.token_ids) == t.final_text()
        _assert_tokens_from_the_server(t)
    assert len(server.requests) == 2
    assert all("tools" not in r and r["temperature"] == 0.0 for r in server.requests)
