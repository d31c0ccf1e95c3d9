"""CodeEnv on repository tasks synthesised from tests/fixtures/minirepo, end to end."""

from __future__ import annotations

from referee.envs import CodeEnv, make_env
from tests.envs.helpers import MINIREPO, call, run, say


def _broken_path(task):
    (path,) = task.payload["overrides"]
    return path


def test_bugfix_episode_read_fix_test_submit(runtime, mini_tasks):
    task = mini_tasks["bugfix"][0]
    path = _broken_path(task)
    fixed = (MINIREPO / path).read_text()

    async def episode():
        env = CodeEnv(runtime)
        messages = await env.reset(task)
        assert "diff" in messages[0]["content"] and messages[-1]["content"] == task.user_prompt
        listing = await env.step(say(call("list_files")))
        shown = await env.step(say(call("read_file", path=path)))
        before = await env.step(say(call("run_tests")))
        ran = await env.step(
            say(call("run_python", code=f"import {path[:-3].replace('/', '.')} as m\nprint('ok')"))
        )
        await env.step(
            say(
                call("write_file", path=path, content=fixed),
                # A new file and a deleted one: the submitted diff must carry both.
                call("write_file", path="minilib/notes.txt", content="fixed it\n"),
                call("run_python", code="import os\nos.remove('pyproject.toml')"),
            )
        )
        after = await env.step(say(call("run_tests")))
        await env.step(say(call("submit")))
        patch = await env.answer()
        verdict = await env.verify()
        await env.close()
        return listing, shown, before, ran, after, patch, verdict

    listing, shown, before, ran, after, patch, verdict = run(episode())
    assert f"{path} (" in listing.observations[0]["content"]
    assert shown.observations[0]["content"] == task.payload["overrides"][path]
    f2p = task.hidden["fail_to_pass"]
    head = before.observations[0]["content"].splitlines()[0]
    assert head.startswith(f"0 of {len(f2p)} tests passed"), before.observations[0]["content"]
    assert "exit 0" in ran.observations[0]["content"] and "ok" in ran.observations[0]["content"]
    assert after.observations[0]["content"].startswith(f"{len(f2p)} of {len(f2p)} tests passed")
    assert "new file mode" in patch and "deleted file mode" in patch and "__pycache__" not in patch
    assert verdict.passed and verdict.reward == 1.0, verdict


def test_bugfix_without_a_fix_fails_and_a_text_diff_is_an_answer(runtime, mini_tasks):
    task = mini_tasks["bugfix"][0]

    async def episode(message):
        env = CodeEnv(runtime)
        await env.reset(task)
        r = await env.step(message)
        v = await env.verify()
        await env.close()
        return r, v

    r, v = run(episode(say(call("submit"))))
    assert r.done and not v.passed and v.reward == 0.0 and v.infra_error is None
    text = f"The fix:\n```diff\n{task.hidden['reference_patch']}```"
    r, v = run(episode({"role": "assistant", "content": text}))
    assert r.done and r.reason == "answered" and v.passed


def test_visible_tests_are_the_ones_the_prompt_names(runtime, mini_tasks):
    task = mini_tasks["bugfix"][0]
    # A test that passes in the starting state: one of another module than the broken one.
    other = (
        "tests/test_textutil.py::test_chunk"
        if _broken_path(task) == "minilib/stats.py"
        else "tests/test_stats.py::test_running_max"
    )

    async def episode():
        env = CodeEnv(runtime)
        await env.reset(task)
        default = await env.step(say(call("run_tests")))
        named = await env.step(say(call("run_tests", tests=[other])))
        await env.close()
        return default, named

    default, named = run(episode())
    text = default.observations[0]["content"]
    for t in task.hidden["fail_to_pass"]:
        assert t in text
    assert other not in text  # PASS_TO_PASS ids are not run unless asked for
    assert named.observations[0]["content"].startswith("1 of 1 tests passed")


def test_testgen_episode_writes_tests_and_is_judged_by_mutants(runtime, mini_tasks):
    task = mini_tasks["testgen"][0]
    target = task.hidden["target_test_file"]
    original = (MINIREPO / target).read_text()

    async def episode():
        env = CodeEnv(runtime)
        await env.reset(task)
        await env.step(say(call("write_file", path=target, content=original)))
        tests = await env.step(say(call("run_tests")))
        await env.step(say(call("submit")))
        verdict = await env.verify()
        await env.close()
        return tests, verdict

    tests, verdict = run(episode())
    assert target in tests.observations[0]["content"]
    assert "tests passed" in tests.observations[0]["content"]
    assert verdict.passed and verdict.reward == 1.0, verdict


def test_code_factory_is_multi_turn_for_repositories(runtime, mini_tasks):
    env = make_env("code", runtime=runtime)
    run(env.reset(mini_tasks["bugfix"][0]))
    assert len(env.tools()) == 6
    run(env.close())
