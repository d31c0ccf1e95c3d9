"""CodeEnv on function tasks, in the real sandbox: single-turn, tools, limits, branching."""

from __future__ import annotations

import asyncio
import time

import pytest

from referee.envs import CodeEnv, EpisodeLimits, SyncEnvironment, make_env
from referee.errors import ConfigError, TaskError
from referee.tasks import Task, generate
from tests.envs.helpers import call, run, say


def _solution(task: Task) -> str:
    """The whole correct solution.py: the code prompt and the reference body."""
    return task.payload["code_prompt"] + task.hidden["reference"]


WRONG_BODY = "    return 12345\n"


async def _single(runtime, task, content):
    env = CodeEnv(runtime, single_turn=True)
    messages = await env.reset(task)
    result = await env.step({"role": "assistant", "content": content})
    verdict = await env.verify()
    await env.close()
    return env, messages, result, verdict


def test_single_turn_reference_passes(runtime, fn_tasks):
    for task in fn_tasks:
        env, messages, result, verdict = run(
            _single(runtime, task, f"Here it is:\n```python\n{task.hidden['reference']}```")
        )
        assert messages == [m.model_dump() for m in task.prompt]  # the plain completion prompt
        assert env.tools() == []
        assert result.done and result.reason == "answered" and result.observations == []
        assert verdict.passed and verdict.reward == 1.0, (task.id, verdict)


def test_single_turn_raw_text_and_whole_function_are_answers(runtime, fn_task):
    raw = run(_single(runtime, fn_task, fn_task.hidden["reference"]))[3]
    assert raw.passed
    whole = run(_single(runtime, fn_task, f"```python\n{_solution(fn_task)}```"))[3]
    assert whole.passed


def test_single_turn_wrong_answer_fails(runtime, fn_task):
    verdict = run(_single(runtime, fn_task, f"```python\n{WRONG_BODY}```"))[3]
    assert not verdict.passed and verdict.reward < 1.0 and verdict.infra_error is None


def test_multi_turn_write_run_submit(runtime, fn_task):
    async def episode():
        env = CodeEnv(runtime)
        messages = await env.reset(fn_task)
        assert messages[0]["role"] == "system" and "solution.py" in messages[0]["content"]
        assert {t["function"]["name"] for t in env.tools()} == {
            "list_files",
            "read_file",
            "write_file",
            "run_python",
            "run_tests",
            "submit",
        }
        first = await env.step(say(call("read_file", path="solution.py")))
        assert first.observations[0]["content"] == fn_task.payload["code_prompt"]
        wrote = await env.step(
            say(call("write_file", path="solution.py", content=_solution(fn_task)))
        )
        assert "wrote" in wrote.observations[0]["content"]
        ran = await env.step(
            say(call("run_python", code="import solution\nprint('got', solution.solve([]))"))
        )
        out = ran.observations[0]["content"]
        assert "exit 0" in out and "got " in out, out
        assert ran.metrics["exec_s"] > 0
        assert ran.metrics["env_overhead_s"] == pytest.approx(
            ran.metrics["env_s"] - ran.metrics["exec_s"]
        )
        tests = await env.step(say(call("run_tests")))
        assert "no visible tests" in tests.observations[0]["content"]
        assert not env.done
        sub = await env.step(say(call("submit", call_id="s1")))
        assert sub.done and sub.reason == "submitted"
        assert sub.observations == [
            {"role": "tool", "tool_call_id": "s1", "name": "submit", "content": "submitted"}
        ]
        verdict = await env.verify()
        await env.close()
        return verdict

    verdict = run(episode())
    assert verdict.passed and verdict.reward == 1.0


def test_submitting_the_untouched_workspace_fails(runtime, fn_task):
    async def episode():
        env = CodeEnv(runtime)
        await env.reset(fn_task)
        await env.step(say(call("submit")))
        verdict = await env.verify()
        await env.close()
        return verdict

    verdict = run(episode())
    assert not verdict.passed and verdict.infra_error is None


def test_malformed_calls_become_error_observations(runtime, fn_task):
    async def episode():
        env = CodeEnv(runtime)
        await env.reset(fn_task)
        bad_json = {
            "id": "a",
            "type": "function",
            "function": {"name": "read_file", "arguments": "{no"},
        }
        no_name = {"id": "b", "type": "function", "function": {"arguments": "{}"}}
        result = await env.step(
            say(
                bad_json,
                no_name,
                call("rm_rf", call_id="c"),
                call("read_file", call_id="d"),  # missing path
                call("read_file", call_id="e", path=3),  # wrong type
                call("read_file", call_id="f", path="../../etc/passwd"),
                call("read_file", call_id="g", path="missing.py"),
                call("write_file", call_id="h", path="x.py", content="ok", extra=1),
                call("read_file", call_id="i", path="/workspace/solution.py"),  # fine
            )
        )
        not_a_list = await env.step({"role": "assistant", "content": "", "tool_calls": "oops"})
        await env.close()
        return result, not_a_list

    result, not_a_list = run(episode())
    by_id = {o["tool_call_id"]: o["content"] for o in result.observations}
    assert list(by_id) == list("abcdefghi")
    assert "not valid JSON" in by_id["a"]
    assert "needs" in by_id["b"]
    assert "unknown tool 'rm_rf'" in by_id["c"]
    assert "missing argument(s) path" in by_id["d"]
    assert "must be of type string" in by_id["e"]
    assert by_id["f"].startswith("error:") and ".." in by_id["f"]
    assert "no file 'missing.py'" in by_id["g"]
    assert "unknown argument(s) extra" in by_id["h"]
    assert by_id["i"].startswith("def solve")
    assert result.metrics["tool_errors"] == 8 and result.metrics["tool_calls"] == 9
    assert not result.done
    assert "must be a list" in not_a_list.observations[0]["content"]


def test_max_turns_ends_the_episode_and_autosubmit_decides_the_answer(runtime, fn_task):
    async def episode(autosubmit):
        env = CodeEnv(runtime, limits=EpisodeLimits(max_turns=2), autosubmit=autosubmit)
        await env.reset(fn_task)
        r1 = await env.step(say(call("write_file", path="solution.py", content=_solution(fn_task))))
        r2 = await env.step(say(call("list_files")))
        with pytest.raises(ConfigError, match="is over"):
            await env.step(say(call("list_files")))
        verdict = await env.verify()
        await env.close()
        return r1, r2, verdict

    r1, r2, judged = run(episode(True))
    assert not r1.done and r2.done and r2.reason == "max_turns"
    assert judged.passed  # the workspace as it stands is the answer
    _, _, unjudged = run(episode(False))
    assert not unjudged.passed and unjudged.reward == 0.0


def test_max_tokens_uses_the_reported_count(runtime, fn_task):
    async def episode():
        env = CodeEnv(runtime, limits=EpisodeLimits(max_tokens=100))
        await env.reset(fn_task)
        small = await env.step(say(call("list_files")) | {"completion_tokens": 60})
        big = await env.step(say(call("list_files")) | {"usage": {"completion_tokens": 50}})
        await env.close()
        return small, big

    small, big = run(episode())
    assert not small.done and small.metrics["tokens"] == 60
    assert big.done and big.reason == "max_tokens"


def test_step_and_episode_timeouts(runtime, fn_task):
    async def episode():
        env = CodeEnv(runtime, limits=EpisodeLimits(step_timeout_s=0.5, episode_timeout_s=1.5))
        await env.reset(fn_task)
        t0 = time.perf_counter()
        slow = await env.step(say(call("run_python", code="import time\ntime.sleep(30)")))
        took = time.perf_counter() - t0
        again = await env.step(say(call("run_python", code="import time\ntime.sleep(30)")))
        more = None
        if not again.done:
            more = await env.step(say(call("run_python", code="import time\ntime.sleep(30)")))
        await env.close()
        return slow, took, again, more

    slow, took, again, more = run(episode())
    assert "timed out" in slow.observations[0]["content"] and took < 3
    assert not slow.done
    last = more or again
    assert last.done and last.reason == "timeout"


def test_the_step_timeout_bounds_a_whole_message(runtime, fn_task):
    async def episode():
        env = CodeEnv(runtime, limits=EpisodeLimits(step_timeout_s=0.6))
        await env.reset(fn_task)
        sleep = "import time\ntime.sleep(30)"
        r = await env.step(
            say(
                call("run_python", call_id="a", code=sleep),
                call("run_python", call_id="b", code=sleep),
                call("list_files", call_id="c"),
            )
        )
        await env.close()
        return r

    r = run(episode())
    by_id = {o["tool_call_id"]: o["content"] for o in r.observations}
    assert "timed out" in by_id["a"]
    assert by_id["b"].startswith("not run") or "timed out" in by_id["b"]
    assert "solution.py" in by_id["c"]  # no sandbox run: not bound by the turn's time
    assert r.metrics["env_s"] < 1.5 and not r.done


def test_plain_text_answers_in_multi_turn(runtime, fn_task):
    async def episode():
        env = CodeEnv(runtime)
        await env.reset(fn_task)
        prose = await env.step({"role": "assistant", "content": "Let me think about it."})
        final = await env.step(
            {"role": "assistant", "content": f"```python\n{fn_task.hidden['reference']}```"}
        )
        verdict = await env.verify()
        await env.close()
        return prose, final, verdict

    prose, final, verdict = run(episode())
    assert not prose.done and prose.observations[0]["role"] == "user"
    assert "submit" in prose.observations[0]["content"]
    assert final.done and final.reason == "answered" and verdict.passed


def test_calls_after_submit_are_not_run(runtime, fn_task):
    async def episode():
        env = CodeEnv(runtime)
        await env.reset(fn_task)
        r = await env.step(
            say(
                call("submit", call_id="s"),
                call("write_file", call_id="w", path="a.py", content=""),
            )
        )
        files = await env.snapshot()
        await env.close()
        return r, files

    r, snap = run(episode())
    assert r.done and [o["tool_call_id"] for o in r.observations] == ["s", "w"]
    assert r.observations[1]["content"].startswith("not run")
    assert "a.py" not in {f[0] for f in snap.files.files}


def test_visible_tests_from_the_payload(runtime, fn_task):
    task = Task.create(
        name="test/visible-v1",
        prompt=fn_task.prompt,
        payload={
            **fn_task.payload,
            "visible_tests": ["assert solve([]) == solve([])", "assert solve([1]) == 'nope'"],
        },
        hidden=fn_task.hidden,
    )

    async def episode():
        env = CodeEnv(runtime)
        await env.reset(task)
        await env.step(say(call("write_file", path="solution.py", content=_solution(task))))
        r = await env.step(say(call("run_tests")))
        broken = await env.step(
            say(call("write_file", path="solution.py", content="def solve(:\n"))
        )
        r2 = await env.step(say(call("run_tests")))
        await env.close()
        return r, broken, r2

    r, _, r2 = run(episode())
    text = r.observations[0]["content"]
    assert text.startswith("1 of 2 visible tests passed"), text
    assert "PASSED assert solve([]) == solve([])" in text and "FAILED assert solve([1])" in text
    assert "does not import" in r2.observations[0]["content"]


def test_snapshot_restore_branches_independently(runtime, fn_task):
    async def episode():
        env = CodeEnv(runtime)
        await env.reset(fn_task)
        await env.step(say(call("write_file", path="solution.py", content=_solution(fn_task))))
        snap = await env.snapshot()
        # Branch A: break the solution, submit.
        await env.step(
            say(
                call(
                    "write_file",
                    path="solution.py",
                    content=fn_task.payload["code_prompt"] + WRONG_BODY,
                )
            )
        )
        await env.step(say(call("submit")))
        a = await env.verify()
        # Branch B, same environment: back to the snapshot, submit as it was.
        await env.restore(snap)
        assert not env.done and env.budget.turns == 1
        await env.step(say(call("submit")))
        b = await env.verify()
        # Branch C, another environment: side by side, writing does not touch the first.
        other = CodeEnv(runtime)
        await other.restore(snap)
        await other.step(say(call("write_file", path="solution.py", content="garbage")))
        c_files = await other.snapshot()
        await env.restore(snap)
        mine = await env.step(say(call("read_file", path="solution.py")))
        await other.close()
        await env.close()
        return a, b, c_files, mine

    a, b, c_files, mine = run(episode())
    assert not a.passed and b.passed
    assert dict((p, d) for p, d, _ in c_files.files.files)["solution.py"] == b"garbage"
    assert mine.observations[0]["content"] == _solution(fn_task)


def test_humaneval_tasks_single_and_multi_turn(runtime, harness_sb):
    from referee.tasks.humaneval import humaneval_tasks
    from referee.verify.record import record_function_tasks

    tasks = record_function_tasks(harness_sb, humaneval_tasks()[:2])

    async def episodes(task):
        single = CodeEnv(runtime, single_turn=True)
        await single.reset(task)
        await single.step({"role": "assistant", "content": task.hidden["reference"]})
        multi = CodeEnv(runtime)
        await multi.reset(task)
        whole = task.payload["code_prompt"] + task.hidden["reference"]
        await multi.step(say(call("write_file", path="solution.py", content=whole)))
        await multi.step(say(call("submit")))
        verdicts = (await single.verify(), await multi.verify())
        await single.close()
        await multi.close()
        return verdicts

    for task in tasks:
        a, b = run(episodes(task))
        assert a.passed and b.passed, (task.id, a, b)


def test_concurrent_episodes_share_one_runtime(runtime, fn_tasks):
    async def one(task, good):
        env = CodeEnv(runtime)
        await env.reset(task)
        body = _solution(task) if good else task.payload["code_prompt"] + WRONG_BODY
        await env.step(say(call("write_file", path="solution.py", content=body)))
        await env.step(say(call("run_python", code="import solution")))
        await env.step(say(call("submit")))
        v = await env.verify()
        await env.close()
        return v.passed

    async def all_of_them():
        jobs = [one(t, good) for t in fn_tasks for good in (True, False)]
        return await asyncio.gather(*jobs)

    assert run(all_of_them()) == [True, False] * len(fn_tasks)


def test_sync_bridge_works_inside_a_running_loop(runtime, fn_task):
    async def inside_a_loop():
        asyncio.get_running_loop()  # a loop runs here, as in a notebook
        with SyncEnvironment(CodeEnv(runtime, single_turn=True)) as env:
            env.reset(fn_task)
            step = env.step({"role": "assistant", "content": fn_task.hidden["reference"]})
            return step.done, env.verify().passed

    assert run(inside_a_loop()) == (True, True)


def test_factory_names(runtime, fn_task):
    env = make_env("code", runtime=runtime)
    run(env.reset(fn_task))
    assert env.tools() == []  # "code" answers function tasks in one turn
    multi = make_env("code", runtime=runtime, single_turn=False)
    run(multi.reset(fn_task))
    assert len(multi.tools()) == 6
    single = make_env("code-single", runtime=runtime)
    assert isinstance(single, CodeEnv) and single.single_turn is True
    with pytest.raises(ConfigError, match=r"unknown environment 'nope'.*code-single"):
        make_env("nope")
    for e in (env, multi):
        run(e.close())


def test_tasks_it_cannot_run_are_task_errors(runtime, fn_task):
    env = CodeEnv(runtime)
    unrecorded = generate("list-pipeline", difficulty=0.2, seed=5)
    with pytest.raises(TaskError, match="record"):
        run(env.reset(unrecorded))
    text = Task.create(name="t/text-v1", prompt="Say hi.", answer_format="text")
    with pytest.raises(TaskError, match=r"'code'.*'patch'"):
        run(env.reset(text))
    with pytest.raises(ConfigError, match="reset"):
        run(env.step(say(call("list_files"))))


def test_owned_runtime_is_closed_by_shutdown():
    async def episode():
        async with CodeEnv(single_turn=True) as env:
            rt = env.runtime
        return rt

    rt = run(episode())
    with pytest.raises(ConfigError, match="closed"):
        rt.sandbox  # noqa: B018


def test_runtime_closes_only_what_it_made(harness_sb):
    from referee.envs import CodeRuntime

    rt = CodeRuntime(sandbox=harness_sb)
    assert rt.sandbox is harness_sb
    made = rt.function_verifier
    assert made.sandbox is harness_sb
    rt.close()
    assert harness_sb.run_python("print(6 * 7)").stdout == "42\n"  # the given one stays open
    with pytest.raises(ConfigError, match="closed"):
        rt.function_verifier  # noqa: B018


def test_episodes_give_their_sandbox_uid_back(runtime, fn_task):
    sb = runtime.sandbox
    if not sb.uids.privileged:
        pytest.skip("uids are only handed out to sandboxes when running as root")

    async def episodes(n):
        for _ in range(n):
            env = CodeEnv(runtime)  # a fresh environment per rollout, as the runner makes them
            await env.reset(fn_task)
            await env.step(say(call("list_files")))
            await env.close()

    run(episodes(1))
    held = len(sb.uids._held)
    run(episodes(5))
    assert len(sb.uids._held) == held


def test_an_infra_verdict_is_not_cached_a_retry_judges_again(harness_sb, fn_task):
    from referee.envs import CodeRuntime
    from referee.verify import FunctionVerifier, Verdict

    class FlakyOnce(FunctionVerifier):
        calls = 0

        def verify(self, task, completion, *, seed=None):
            FlakyOnce.calls += 1
            if FlakyOnce.calls == 1:
                return Verdict.infra(task.id, "sandbox died", "test")
            return super().verify(task, completion, seed=seed)

    rt = CodeRuntime(function_verifier=FlakyOnce(harness_sb))
    try:
        env = CodeEnv(rt, single_turn=True)

        async def episode():
            await env.reset(fn_task)
            await env.step({"role": "assistant", "content": fn_task.hidden["reference"]})
            first, second = await env.verify(), await env.verify()
            await env.close()
            return first, second

        first, second = run(episode())
        assert first.infra_error and second.passed and FlakyOnce.calls == 2
    finally:
        rt.close()
