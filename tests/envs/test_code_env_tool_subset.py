"""CodeEnv's ``tools=`` allow-list: only the named tools are offered, and only they run."""

from __future__ import annotations

import pytest

from referee.envs import CodeEnv
from referee.envs.code_tools import TOOL_SCHEMAS
from referee.errors import ConfigError
from tests.envs.helpers import call, run, say


def test_only_the_named_tools_are_offered_and_run(runtime, fn_task):
    async def episode():
        env = CodeEnv(runtime, tools=("submit", "write_file"))
        await env.reset(fn_task)
        # TOOL_SCHEMAS' order, whatever the order given: the prompt a model sees is stable.
        names = [s["function"]["name"] for s in env.tools()]
        refused = await env.step(say(call("run_python", code="print(1)")))
        body = fn_task.hidden["reference"]
        wrote = await env.step(
            say(
                call(
                    "write_file", path="solution.py", content=fn_task.payload["code_prompt"] + body
                )
            )
        )
        submitted = await env.step(say(call("submit")))
        verdict = await env.verify()
        await env.close()
        return names, refused, wrote, submitted, verdict

    names, refused, wrote, submitted, verdict = run(episode())
    assert names == ["write_file", "submit"]
    text = refused.observations[0]["content"]
    assert text.startswith("error: unknown tool 'run_python'")
    assert "the tools are write_file, submit" in text
    assert refused.metrics["tool_errors"] == 1.0 and not refused.done
    assert wrote.observations[0]["content"].startswith("wrote ")
    assert submitted.done and submitted.reason == "submitted"
    assert verdict.passed


def test_the_default_offers_every_tool(runtime, fn_task):
    async def names():
        env = CodeEnv(runtime)
        await env.reset(fn_task)
        got = [s["function"]["name"] for s in env.tools()]
        await env.close()
        return got

    assert run(names()) == list(TOOL_SCHEMAS)


@pytest.mark.parametrize("tools", [("write_file", "rm_rf"), ()])
def test_unknown_or_no_tools_are_refused(runtime, tools):
    with pytest.raises(ConfigError, match="tools must name some of"):
        CodeEnv(runtime, tools=tools)
