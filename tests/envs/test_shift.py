"""The distribution-shift wrappers on a small in-process environment: each one's effect, its
seeding, the record, specs, composition, snapshots, and the runner writing Trajectory.shift."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from referee.envs.base import ChatMessage, Environment, StepResult
from referee.envs.shift import (
    AddObservationNoise,
    FailToolsTransiently,
    InjectMisleadingLogs,
    ShiftWrapper,
    SlowTools,
    TruncateObservations,
    parse_shift,
    shift_factory,
    shift_label,
    shift_record,
    wrap_env,
)
from referee.errors import ConfigError
from referee.policy.scripted import ScriptedPolicy
from referee.rollout.runner import RolloutRunner
from referee.rollout.shift_report import compare_shifts
from referee.rollout.shift_report import main as shift_report_main
from referee.tasks.model import Task
from referee.verify.verdict import Verdict
from tests.envs.helpers import call, run, say

LISTING = "\n".join(f"pkg/module_{i}.py ({100 + i} bytes)" for i in range(8))
OUTPUTS = {
    "list_files": LISTING,
    "run_tests": "1 of 3 tests passed (exit 0 in 12.0 ms)\nFAILED tests/test_a.py::test_x\n"
    "FAILED tests/test_a.py::test_y\nPASSED tests/test_b.py::test_z",
    "read_file": "error: no file 'nope.py' in the workspace",
}


class ToolEnv(Environment):
    """Answers each tool call with a fixed text; ``ran`` keeps the calls it really ran; the
    verdict is whether ``fix`` was called."""

    name = "tooly"

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.fixed = False
        self.turns = 0

    async def reset(self, task: Task) -> list[ChatMessage]:
        self.task, self.ran, self.fixed, self.turns = task, [], False, 0
        return [{"role": "user", "content": task.user_prompt}]

    async def step(self, message: ChatMessage) -> StepResult:
        self.turns += 1
        observations = []
        for c in message.get("tool_calls") or []:
            name = c["function"]["name"]
            self.ran.append(name)
            self.fixed = self.fixed or name == "fix"
            observations.append(
                {"role": "tool", "tool_call_id": c["id"], "name": name,
                 "content": OUTPUTS.get(name, f"{name} done")}
            )  # fmt: skip
        done = self.fixed or self.turns >= 6
        return StepResult(observations, done, {"tool_calls": float(len(observations))}, "x")

    @property
    def done(self) -> bool:
        return self.fixed or self.turns >= 6

    async def verify(self) -> Verdict:
        return Verdict(
            task_id=self.task.id, reward=float(self.fixed), passed=self.fixed, verifier="toy"
        )

    async def snapshot(self) -> Any:
        return (list(self.ran), self.fixed, self.turns)

    async def restore(self, snapshot: Any) -> None:
        ran, self.fixed, self.turns = snapshot
        self.ran = list(ran)


TASK = Task.create(name="demo/tooly-v1", prompt="Fix it.")
OTHER = Task.create(name="demo/tooly-v2", prompt="Fix it too.")
SCRIPT = [say(call("list_files")), say(call("run_tests")), say(call("read_file"))]


def observe(env: Environment, task: Task = TASK, script: list[Any] = SCRIPT) -> list[str]:
    """The tool outputs the policy sees over a scripted episode."""

    async def episode() -> list[str]:
        await env.reset(task)
        seen = []
        for message in script:
            result = await env.step(message)
            seen += [m["content"] for m in result.observations]
        return seen

    return run(episode())


CLEAN = observe(ToolEnv())
OBSERVATION_SHIFTS = [
    "AddObservationNoise(rate=0.1)",
    "TruncateObservations(max_chars=40,keep=both)",
    "ReorderToolOutput(tools=*)",
    "ParaphraseToolOutput",
    "InjectMisleadingLogs(p=1.0)",
]


@pytest.mark.parametrize("spec", OBSERVATION_SHIFTS)
def test_an_observation_shift_changes_what_is_seen_the_same_way_for_the_same_seed(spec):
    first = observe(wrap_env(ToolEnv(), _seeded(spec, 1)))
    again = observe(wrap_env(ToolEnv(), parse_shift(_seeded(spec, 1))))
    other = observe(wrap_env(ToolEnv(), _seeded(spec, 2)))
    assert first != CLEAN and first == again
    if not spec.startswith("Truncate"):  # truncation is deterministic: no seed to tell apart
        assert other != first
    env = wrap_env(ToolEnv(), _seeded(spec, 1))
    observe(env)
    (record,) = shift_record(env)
    assert record["wrapper"] == spec.split("(")[0] and record["seed"] == 1
    assert len(record["turns"]) == 3 and sum(record["totals"].values()) > 0
    assert wrap_env(ToolEnv(), record["spec"]).spec == record["spec"]  # the spec reads back


def _seeded(spec: str, seed: int) -> str:
    return spec[:-1] + f",seed={seed})" if "(" in spec else f"{spec}(seed={seed})"


def test_each_shift_does_what_it_says():
    noisy = observe(AddObservationNoise(ToolEnv(), rate=0.05))
    assert all(len(a) > 0.8 * len(b) for a, b in zip(noisy, CLEAN, strict=True))
    cut = observe(TruncateObservations(ToolEnv(), max_chars=30, keep="tail"))
    assert cut[0].startswith("[... ") and cut[0].endswith(LISTING[-30:])
    shuffled = observe(wrap_env(ToolEnv(), "ReorderToolOutput"))  # list_files only
    assert sorted(shuffled[0].split("\n")) == sorted(LISTING.split("\n"))
    assert shuffled[0] != LISTING and shuffled[1:] == CLEAN[1:]
    reworded = observe(wrap_env(ToolEnv(), "ParaphraseToolOutput"))
    assert "1 of 3 tests passed" not in reworded[1] and "tests/test_a.py" in reworded[1]
    assert "FAILED tests/" not in reworded[1] and "no file" not in reworded[2]
    lied = observe(InjectMisleadingLogs(ToolEnv(), p=1.0, lines=("INFO: all tests passed",)))
    assert all("INFO: all tests passed" in o for o in lied)
    assert [o.replace("INFO: all tests passed", "").strip("\n") for o in lied][2] == CLEAN[2]


def test_failed_calls_are_not_run_answer_in_order_and_can_be_retried():
    inner = ToolEnv()
    env = FailToolsTransiently(inner, p=1.0, tools=("run_tests",))
    message = say(call("list_files", "a"), call("run_tests", "b"), call("read_file", "c"))

    async def episode() -> StepResult:
        await env.reset(TASK)
        return await env.step(message)

    result = run(episode())
    assert inner.ran == ["list_files", "read_file"]  # the failed call never reached the tool
    assert [m["tool_call_id"] for m in result.observations] == ["a", "b", "c"]
    failure = result.observations[1]["content"]
    assert failure.startswith("error:") and "run_tests" in failure
    assert result.metrics["shift.FailToolsTransiently.failed_calls"] == 1.0
    # Every call failing: the inner environment is not stepped at all.
    always = FailToolsTransiently(ToolEnv(), p=1.0)
    seen = observe(always, script=[say(call("fix"))] * 3)
    assert all(s.startswith("error:") for s in seen) and always.env.ran == [] and not always.done
    assert run(always.verify()).reward == 0.0
    # Some calls failing, reproducibly: a retry after a failure can succeed.
    flaky = observe(FailToolsTransiently(ToolEnv(), p=0.5, seed=3), script=[say(call("x"))] * 6)
    again = observe(FailToolsTransiently(ToolEnv(), p=0.5, seed=3), script=[say(call("x"))] * 6)
    assert flaky == again and "x done" in flaky and any(s.startswith("error:") for s in flaky)


def test_slow_tools_sleep_what_they_record_and_no_more_than_the_cap():
    env = SlowTools(ToolEnv(), delay_s=0.05, jitter=0.0, max_step_s=0.08)
    t0 = time.perf_counter()
    observe(env, script=[say(call("a")), say(call("a"), call("b"), call("c"))])
    took = time.perf_counter() - t0
    (record,) = shift_record(env)
    assert record["turns"] == [
        {"slowed_calls": 1, "delay_ms": 50},
        {"slowed_calls": 3, "delay_ms": 80},  # 150 ms capped at max_step_s
    ]
    assert took >= 0.125


def test_the_verdict_is_the_inner_environments_whatever_the_policy_was_told():
    stack = "AddObservationNoise(rate=0.2);InjectMisleadingLogs(p=1.0,lines=INFO: all tests passed)"
    env = wrap_env(ToolEnv(), stack)
    seen = observe(env, script=[say(call("run_tests"))] * 2)
    assert any("all tests passed" in s for s in seen)
    assert run(env.verify()) == run(env.env.env.verify()) and run(env.verify()).reward == 0.0


def test_stacks_record_every_layer_innermost_first_and_episodes_are_indexed_per_task():
    make = shift_factory(ToolEnv, ["AddObservationNoise(rate=0.1)", "FailToolsTransiently(p=0.3)"])
    envs = [make() for _ in range(3)]
    seen = [observe(envs[0]), observe(envs[1]), observe(envs[2], task=OTHER)]
    records = [shift_record(e) for e in envs]
    assert [r["wrapper"] for r in records[0]] == ["AddObservationNoise", "FailToolsTransiently"]
    assert [[r["episode"] for r in rs] for rs in records] == [[0, 0], [1, 1], [0, 0]]
    assert seen[0] != seen[1]  # episode 1 of a task is not a copy of episode 0
    remake = shift_factory(
        ToolEnv, ["AddObservationNoise(rate=0.1)", "FailToolsTransiently(p=0.3)"]
    )
    assert [observe(remake()), observe(remake())] == seen[:2]  # a rerun matches
    assert shift_label(records[0]).startswith("AddObservationNoise(rate=0.1,seed=0)+Fail")
    assert shift_label([]) == "clean" and shift_record(ToolEnv()) == []


def test_a_restored_episode_is_perturbed_as_it_was():
    env = wrap_env(ToolEnv(), "AddObservationNoise(rate=0.2)")

    async def episode() -> tuple[list[str], list[str]]:
        await env.reset(TASK)
        await env.step(SCRIPT[0])
        snap = await env.snapshot()
        first = [m["content"] for s in SCRIPT[1:] for m in (await env.step(s)).observations]
        await env.restore(snap)
        second = [m["content"] for s in SCRIPT[1:] for m in (await env.step(s)).observations]
        return first, second

    first, second = run(episode())
    assert first == second and len(shift_record(env)[0]["turns"]) == 3
    with pytest.raises(ConfigError, match="snapshot"):
        run(env.restore("not a snapshot"))


def test_specs_read_both_spellings_and_bad_ones_name_the_problem():
    assert parse_shift("AddObservationNoise:rate=0.05,seed=1").params == {"rate": 0.05, "seed": 1}
    assert parse_shift("SlowTools( delay_s = 1 , tools=run_tests|read_file )").params == {
        "delay_s": 1.0, "tools": ("run_tests", "read_file")
    }  # fmt: skip
    problems = {
        "AddNoise": "unknown shift 'AddNoise'; the shifts are AddObservationNoise, Truncate",
        "FailToolsTransiently(q=1)": "has no parameter 'q'; its parameters are p, tools, seed",
        "FailToolsTransiently(p=2)": "FailToolsTransiently: p must be a probability",
        "TruncateObservations:keep=middle": "keep must be one of head, tail, both",
        "AddObservationNoise:rate=lots": "rate must be float, got 'lots'",
        "SlowTools(p)": "parameters are written key=value",
        "9Lives": "cannot read the shift",
    }
    for spec, message in problems.items():
        with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
            parse_shift(spec)
    from referee.envs import make_env

    with pytest.raises(ConfigError, match="unknown shift"):
        make_env("code", shift=["Nope"])


def test_a_wrapper_passes_through_what_it_does_not_shift():
    env = wrap_env(ToolEnv(), "TruncateObservations")
    assert isinstance(env, ShiftWrapper) and env.name == "tooly" and env.tools() == []
    observe(env)
    assert env.turns == 3 and env.ran == ["list_files", "run_tests", "read_file"]  # inner attrs


def _fixer(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    last = messages[-1]
    if last.get("role") == "tool" and last["content"].startswith("error:"):
        return say(call("fix", f"r{len(messages)}"))  # retry
    return say(call("fix", f"c{len(messages)}"))


def test_the_runner_records_the_shift_on_the_trajectory_and_the_report_compares(tmp_path, capsys):
    tasks = [TASK, OTHER]
    clean = RolloutRunner(ToolEnv, ScriptedPolicy(_fixer), group_size=2).run_sync(tasks)
    shifted = RolloutRunner(
        shift_factory(ToolEnv, "FailToolsTransiently(p=1.0)"), ScriptedPolicy(_fixer), group_size=2
    ).run_sync(tasks)
    assert all(t.shift == [] and t.passed for t in clean)
    (record,) = shifted[0].shift
    # Every turn failed, so the inner environment never ended it: the runner's max_turns did.
    assert record["totals"] == {"failed_calls": 8} and len(record["turns"]) == 8
    assert shifted[0].end_reason == "max_turns"
    assert shifted[0].turns[0].metrics["shift.FailToolsTransiently.failed_calls"] == 1.0
    assert json.loads(shifted[0].model_dump_json())["shift"][0]["wrapper"] == record["wrapper"]
    rows = compare_shifts(clean + shifted)
    assert [(r.label, r.episodes, r.success, r.drop) for r in rows] == [
        ("clean", 4, 1.0, 0.0),
        ("FailToolsTransiently(p=1.0,tools=*,seed=0)", 4, 0.0, 1.0),
    ]
    # The same table from JSONL files, as a run's sink writes them.
    path = tmp_path / "trajectories.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in clean + shifted))
    assert shift_report_main([str(path)]) == 0
    table = capsys.readouterr().out
    assert "| `clean` | 4 | 100% | 0 |" in table and "| 4 | 0% | 100 |" in table


def test_a_remote_environment_is_wrapped_like_any_other():
    """A RemoteEnvironment against a stub server (a ToolEnv behind httpx.MockTransport): the
    failed call never reaches the server, the verdict is the server's."""
    import httpx

    from referee.service import AsyncClient, RemoteEnvironment

    server, received = ToolEnv(), []

    async def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content or b"{}")
        if request.url.path == "/v1/sessions":
            messages = await server.reset(TASK)
            return httpx.Response(200, json={"session_id": "s1", "messages": messages, "tools": []})
        if request.url.path.endswith("/step"):
            received.append([c["function"]["name"] for c in body["message"]["tool_calls"]])
            r = await server.step(body["message"])
            verdict = (await server.verify()).model_dump(mode="json") if r.done else None
            return httpx.Response(
                200, json={"messages": r.observations, "done": r.done, "verdict": verdict}
            )
        if request.url.path.endswith("/verify"):
            return httpx.Response(200, json=(await server.verify()).model_dump(mode="json"))
        return httpx.Response(200, json={})  # DELETE: the session is closed

    async def episode() -> tuple[list[str], Verdict]:
        client = AsyncClient("http://stub", transport=httpx.MockTransport(handle))
        remote = RemoteEnvironment(client, "tooly")
        env = wrap_env(remote, "FailToolsTransiently(p=1.0,tools=run_tests);ReorderToolOutput")
        await env.reset(TASK)
        first = await env.step(say(call("run_tests", "a"), call("list_files", "b")))
        await env.step(say(call("fix")))
        verdict = await env.verify()
        await env.close()
        await client.aclose()
        return [m["content"] for m in first.observations], verdict

    seen, verdict = asyncio.run(episode())
    assert received == [["list_files"], ["fix"]]
    assert seen[0].startswith("error:") and sorted(seen[1].split("\n")) == sorted(
        LISTING.split("\n")
    )
    assert verdict.passed and verdict.verifier == "toy"
