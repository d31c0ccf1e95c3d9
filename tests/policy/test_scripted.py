"""ScriptedPolicy and policy_from_spec."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

from referee.errors import ConfigError, PolicyError
from referee.policy import Generation, ScriptedPolicy, policy_from_spec

USER = {"role": "user", "content": "q"}


def reply(policy: ScriptedPolicy, messages: list[dict]) -> Generation:  # type: ignore[type-arg]
    return asyncio.run(policy.generate(messages))


def test_a_list_is_played_by_turn_so_episodes_do_not_share_a_cursor() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    p = ScriptedPolicy(["one", {"tool_calls": [call], "content": None}])
    assert reply(p, [USER]).message == {"role": "assistant", "content": "one"}
    assert reply(p, [USER]).message["content"] == "one"  # a second episode starts over
    second = reply(p, [USER, {"role": "assistant", "content": "one"}, USER])
    assert second.message["tool_calls"] == [call] and second.finish_reason == "tool_calls"
    assert p.calls == 3


def test_running_out_of_script_is_a_policy_error() -> None:
    p = ScriptedPolicy(["only"])
    with pytest.raises(PolicyError, match="1 replies"):
        reply(p, [USER, {"role": "assistant", "content": "only"}])


def test_exceptions_in_the_script_are_raised() -> None:
    p = ScriptedPolicy([PolicyError("server down")])
    with pytest.raises(PolicyError, match="server down"):
        reply(p, [USER])


def test_callables_sync_and_async_see_the_conversation_and_tools() -> None:
    seen = []

    def sync(messages, tools):  # type: ignore[no-untyped-def]
        seen.append(tools)
        return messages[-1]["content"].upper()

    async def later(messages, tools):  # type: ignore[no-untyped-def]
        await asyncio.sleep(0)
        return Generation(
            message={"role": "assistant", "content": "x"}, token_ids=[1], logprobs=[-0.5]
        )

    assert (
        asyncio.run(ScriptedPolicy(sync).generate([USER], tools=[{"t": 1}])).message["content"]
        == "Q"
    )
    assert seen == [[{"t": 1}]]
    g = reply(ScriptedPolicy(later), [USER])
    assert g.token_ids == [1] and g.logprobs == [-0.5]


def test_delays_are_injected_per_call() -> None:
    p = ScriptedPolicy(["a"], delay_s=lambda i: 0.2 if i == 0 else 0.0)
    start = time.perf_counter()
    g = reply(p, [USER])
    assert time.perf_counter() - start >= 0.2 and g.latency_s >= 0.2
    start = time.perf_counter()
    reply(p, [USER])
    assert time.perf_counter() - start < 0.15


def test_an_empty_script_is_refused() -> None:
    with pytest.raises(PolicyError):
        ScriptedPolicy([])


# ---- policy_from_spec ---------------------------------------------------------------------------


def test_spec_openai() -> None:
    p = policy_from_spec("openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-0.5B")
    assert p.name == "openai:Qwen/Qwen2.5-0.5B"
    assert p.url == "http://127.0.0.1:8000/v1/chat/completions"  # type: ignore[attr-defined]


def test_spec_scripted_text_and_file(tmp_path: Path) -> None:
    assert reply(policy_from_spec("scripted:42"), [USER]).message["content"] == "42"  # type: ignore[arg-type]
    path = tmp_path / "replies.json"
    path.write_text(json.dumps(["a", {"content": "b"}]))
    p = policy_from_spec(f"scripted:@{path}")
    assert reply(p, [USER, {"role": "assistant", "content": "a"}]).message["content"] == "b"  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "spec, why",
    [
        ("openai:http://h:1/v1", "model's name is missing"),
        ("gpt4", "expected KIND:VALUE"),
        ("magic:thing", "unknown kind 'magic'"),
        ("scripted:@/nonexistent/replies.json", "cannot read"),
    ],
)
def test_bad_specs_name_the_accepted_forms(spec: str, why: str) -> None:
    with pytest.raises(ConfigError) as e:
        policy_from_spec(spec)
    assert why in str(e.value) and "openai:http://HOST:PORT/v1#MODEL" in str(e.value)
    assert "local:PATH" in str(e.value)


def test_importing_policies_does_not_import_torch_or_httpx() -> None:
    import subprocess

    code = "import sys, referee.policy; print('torch' in sys.modules, 'httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_the_shipped_policies_satisfy_the_protocol() -> None:
    from referee.policy import OpenAIPolicy, Policy

    assert isinstance(ScriptedPolicy(["a"]), Policy)
    assert isinstance(OpenAIPolicy("http://127.0.0.1:1/v1", "m"), Policy)
