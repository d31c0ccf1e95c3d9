"""OpenAIPolicy against a fake OpenAI-compatible server on loopback."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator

import pytest

from referee.errors import PolicyError
from referee.policy import OpenAIPolicy, PolicyOutputError, Sampling
from referee.policy.openai_compat import parse_response
from tests.policy.fake_openai import FakeOpenAI
from tests.rollout.fakes import CALC_TOOL

USER = [{"role": "user", "content": "hello there"}]


@pytest.fixture(scope="module")
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


@pytest.fixture(autouse=True)
def _clean(server: FakeOpenAI) -> None:
    server.reset()


def gen(policy: OpenAIPolicy, messages=USER, **kw):  # type: ignore[no-untyped-def]
    return asyncio.run(policy.generate(messages, **kw))


def test_text_reply_with_logprobs_token_ids_and_usage(server: FakeOpenAI) -> None:
    policy = OpenAIPolicy(server.url, "echo")
    g = gen(
        policy, sampling=Sampling(temperature=0.5, top_p=0.9, max_tokens=64, seed=3, stop=("\n",))
    )
    assert g.message == {"role": "assistant", "content": "echo: hello there"}
    n = len("echo: hello there")
    assert g.token_ids == [ord(c) for c in "echo: hello there"]
    assert g.logprobs is not None and len(g.logprobs) == n
    assert g.logprobs[:2] == pytest.approx([-0.01, -0.02])
    assert g.prompt_token_ids == list(range(1, 1 + len("hello there")))
    assert (g.prompt_tokens, g.completion_tokens, g.finish_reason) == (11, n, "stop")
    assert g.latency_s > 0 and g.extra["attempts"] == 1
    (body,) = server.requests
    assert body["messages"] == USER
    assert (body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (
        0.5,
        0.9,
        64,
        3,
    )
    assert body["stop"] == ["\n"] and body["logprobs"] is True and body["return_token_ids"] is True
    assert "tools" not in body and "Authorization" not in server.headers[0]


def test_tool_calls_become_part_of_the_message(server: FakeOpenAI) -> None:
    policy = OpenAIPolicy(server.url, "calc", tool_choice="auto")
    g = gen(policy, [{"role": "user", "content": "calc/6x7"}], tools=[CALC_TOOL])
    assert g.message["content"] is None
    assert g.message["tool_calls"] == [
        {
            "id": "call_6_7",
            "type": "function",
            "function": {"name": "multiply", "arguments": '{"a": 6, "b": 7}'},
        }
    ]
    assert g.finish_reason == "tool_calls"
    assert server.requests[0]["tools"] == [CALC_TOOL]
    assert server.requests[0]["tool_choice"] == "auto"


def test_tool_call_arguments_sent_as_an_object_become_json_text(server: FakeOpenAI) -> None:
    g = gen(OpenAIPolicy(server.url, "args-object"), tools=[CALC_TOOL])
    assert g.message["tool_calls"][0]["function"]["arguments"] == '{"a": 2, "b": 3}'


def test_a_server_error_is_retried_then_succeeds(server: FakeOpenAI) -> None:
    g = gen(OpenAIPolicy(server.url, "flaky", backoff_s=0.01))
    assert g.message["content"] == "echo: hello there"
    assert g.extra["attempts"] == 2 and server.counts["flaky"] == 2


def test_a_rate_limit_is_retried(server: FakeOpenAI) -> None:
    g = gen(OpenAIPolicy(server.url, "ratelimit", backoff_s=0.01))
    assert g.extra["attempts"] == 2


def test_retries_are_bounded(server: FakeOpenAI) -> None:
    policy = OpenAIPolicy(server.url, "down", max_retries=2, backoff_s=0.01)
    with pytest.raises(PolicyError) as e:
        gen(policy)
    assert server.counts["down"] == 3
    assert (
        "HTTP 503" in str(e.value) and server.url in str(e.value) and "3 attempts" in str(e.value)
    )


def test_a_client_error_is_not_retried_and_names_the_fix(server: FakeOpenAI) -> None:
    with pytest.raises(PolicyError, match="return_token_ids=False"):
        gen(OpenAIPolicy(server.url, "bad-request", backoff_s=0.01))
    assert server.counts["bad-request"] == 1


def test_a_wrong_base_url_says_to_check_it(server: FakeOpenAI) -> None:
    wrong = server.url.removesuffix("/v1")
    with pytest.raises(PolicyError, match=r"HTTP 404.*ending in /v1"):
        gen(OpenAIPolicy(wrong, "echo"))


def test_a_hanging_server_times_out_as_a_policy_error(server: FakeOpenAI) -> None:
    policy = OpenAIPolicy(server.url, "hang", backoff_s=0.01)
    start = time.perf_counter()
    with pytest.raises(PolicyError, match=r"timed out after 0\.3s") as e:
        gen(policy, sampling=Sampling(timeout_s=0.3))
    assert time.perf_counter() - start < 3
    assert server.url in str(e.value)
    assert server.counts["hang"] == 1  # timeouts are the runner's to retry


def test_no_server_is_a_policy_error_naming_the_url() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    policy = OpenAIPolicy(url, "echo", max_retries=1, backoff_s=0.01)
    with pytest.raises(PolicyError, match="is the server running") as e:
        gen(policy)
    assert url in str(e.value) and "2 attempts" in str(e.value)


def test_no_choices_is_an_output_error(server: FakeOpenAI) -> None:
    with pytest.raises(PolicyOutputError, match="no choices"):
        gen(OpenAIPolicy(server.url, "empty"))


def test_a_body_that_is_not_json_is_a_policy_error(server: FakeOpenAI) -> None:
    with pytest.raises(PolicyError, match="not JSON"):
        gen(OpenAIPolicy(server.url, "not-json"))


def test_vllm_extensions_and_logprobs_can_be_switched_off(server: FakeOpenAI) -> None:
    g = gen(OpenAIPolicy(server.url, "echo", return_token_ids=False, logprobs=False))
    body = server.requests[0]
    assert "return_token_ids" not in body and "logprobs" not in body
    assert g.token_ids is None and g.logprobs is None and g.prompt_token_ids is None
    assert g.completion_tokens == len("echo: hello there")  # from usage


def test_api_key_and_extra_body_are_sent(server: FakeOpenAI) -> None:
    gen(OpenAIPolicy(server.url, "echo", api_key="sk-test", extra_body={"top_k": 20}))
    assert server.headers[0]["Authorization"] == "Bearer sk-test"
    assert server.requests[0]["top_k"] == 20


def test_one_policy_serves_successive_event_loops(server: FakeOpenAI) -> None:
    policy = OpenAIPolicy(server.url, "echo")
    assert gen(policy).message["content"] == gen(policy).message["content"]

    async def concurrently() -> list[str]:
        async with policy:
            outs = await asyncio.gather(
                *(policy.generate([{"role": "user", "content": str(i)}]) for i in range(8))
            )
        return [o.message["content"] for o in outs]

    assert asyncio.run(concurrently()) == [f"echo: {i}" for i in range(8)]


def test_a_base_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(PolicyError, match="http://localhost:8000/v1"):
        OpenAIPolicy("localhost:8000", "m")


def test_parse_response_drops_logprobs_that_do_not_cover_every_token() -> None:
    data = {
        "choices": [
            {
                "message": {"role": "assistant", "content": "ab"},
                "finish_reason": "length",
                "logprobs": {"content": [{"logprob": -1.0}, {"token": "b"}]},
            }
        ]
    }
    g = parse_response(data)
    assert g.logprobs is None and g.token_ids is None and g.finish_reason == "length"
    with pytest.raises(PolicyOutputError, match="without a message"):
        parse_response({"choices": [{"finish_reason": "stop"}]})
