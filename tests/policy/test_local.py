"""TransformersPolicy on a tiny random Llama with a locally trained tokenizer (CPU, offline)."""

from __future__ import annotations

import asyncio
import copy
import os
import time
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
torch = pytest.importorskip("torch")

from referee.policy import Generation, Sampling, policy_from_spec  # noqa: E402
from referee.policy.local import TransformersPolicy, parse_tool_calls, plain_prompt  # noqa: E402
from tests.policy import tiny_lm  # noqa: E402

USER = [{"role": "user", "content": "What is 6 times 7?"}]
GREEDY = Sampling(temperature=0.0, max_tokens=12)


@pytest.fixture(scope="module")
def tok():  # type: ignore[no-untyped-def]
    return tiny_lm.tokenizer()


@pytest.fixture(scope="module")
def policy(tok) -> TransformersPolicy:  # type: ignore[no-untyped-def]
    return TransformersPolicy(tiny_lm.model(tok), tok)


def gen(policy: TransformersPolicy, messages=USER, sampling=GREEDY, **kw) -> Generation:  # type: ignore[no-untyped-def]
    return asyncio.run(policy.generate(messages, sampling=sampling, **kw))


def rescored(policy: TransformersPolicy, g: Generation) -> torch.Tensor:
    """The completion's log-probabilities from one forward pass over prompt + completion."""
    assert g.prompt_token_ids is not None and g.token_ids is not None
    ids = torch.tensor([g.prompt_token_ids + g.token_ids])
    with torch.no_grad():
        logits = policy.model(ids).logits[0, len(g.prompt_token_ids) - 1 : -1]
    lp = torch.log_softmax(logits.float(), dim=-1)
    return lp, lp.gather(1, torch.tensor(g.token_ids)[:, None]).squeeze(1)


def test_greedy_is_deterministic_and_picks_the_argmax(policy: TransformersPolicy) -> None:
    a, b = gen(policy), gen(policy)
    assert a.token_ids == b.token_ids and a.message == b.message
    assert a.token_ids is not None and a.logprobs is not None
    assert len(a.logprobs) == len(a.token_ids) == a.completion_tokens == 12
    assert a.finish_reason == "length"
    full, chosen = rescored(policy, a)
    assert torch.equal(full.argmax(dim=-1), torch.tensor(a.token_ids))
    assert torch.allclose(chosen, torch.tensor(a.logprobs), atol=1e-4)
    assert a.prompt_token_ids == policy.tokenizer(plain_prompt(USER))["input_ids"]
    assert a.prompt_tokens == len(a.prompt_token_ids) and a.latency_s > 0


def test_sampling_with_a_seed_repeats_and_leaves_the_callers_rng_alone(
    policy: TransformersPolicy,
) -> None:
    hot = Sampling(temperature=1.0, max_tokens=16, seed=11)
    state = torch.random.get_rng_state()
    a, b = gen(policy, sampling=hot), gen(policy, sampling=hot)
    assert torch.equal(state, torch.random.get_rng_state())
    c = gen(policy, sampling=Sampling(temperature=1.0, max_tokens=16, seed=12))
    assert a.token_ids == b.token_ids and a.token_ids != c.token_ids
    _, chosen = rescored(policy, c)  # logprobs are the model's own, not the sampler's
    assert torch.allclose(chosen, torch.tensor(c.logprobs), atol=1e-4)


def test_a_stop_string_cuts_the_text_and_ends_generation(policy: TransformersPolicy) -> None:
    full = gen(policy, sampling=Sampling(temperature=0.0, max_tokens=24))
    text = full.message["content"]
    stop = text[len(text) // 2 : len(text) // 2 + 2]
    cut = gen(policy, sampling=Sampling(temperature=0.0, max_tokens=24, stop=(stop,)))
    assert cut.message["content"] == text[: text.find(stop)]
    assert cut.finish_reason == "stop"
    assert cut.token_ids == full.token_ids[: len(cut.token_ids)]
    assert len(cut.token_ids) < len(full.token_ids) and len(cut.logprobs) == len(cut.token_ids)


def test_end_of_sequence_is_kept_in_the_ids_but_not_the_text(tok) -> None:  # type: ignore[no-untyped-def]
    m = copy.deepcopy(tiny_lm.model(tok))
    head = torch.nn.Linear(32, len(tok), bias=True)
    with torch.no_grad():
        head.weight.zero_()
        head.bias.zero_()
        head.bias[tok.eos_token_id] = 50.0  # always end
    m.lm_head = head
    g = gen(TransformersPolicy(m, tok))
    assert g.token_ids == [tok.eos_token_id] and g.message["content"] == ""
    assert g.finish_reason == "stop" and g.logprobs[0] > -1e-3


def test_a_batch_matches_one_by_one(policy: TransformersPolicy) -> None:
    convs = [
        USER,
        [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "add 2 and 3"},
        ],
    ]
    batch = asyncio.run(policy.generate_batch(convs, GREEDY))
    for conv, b in zip(convs, batch, strict=True):
        one = gen(policy, conv)
        assert b.token_ids == one.token_ids and b.prompt_token_ids == one.prompt_token_ids
        assert torch.allclose(torch.tensor(b.logprobs), torch.tensor(one.logprobs), atol=1e-4)
    assert asyncio.run(policy.generate_batch([], GREEDY)) == []


def test_the_event_loop_keeps_running_during_generation(policy: TransformersPolicy) -> None:
    async def main() -> tuple[int, float]:
        ticks = 0
        task = asyncio.create_task(
            policy.generate(USER, sampling=Sampling(temperature=0.0, max_tokens=200))
        )
        start = time.perf_counter()
        while not task.done():
            ticks += 1
            await asyncio.sleep(0.001)
        await task
        return ticks, time.perf_counter() - start

    ticks, elapsed = asyncio.run(main())
    assert elapsed > 0.05 and ticks >= 10


def test_the_chat_template_is_used_with_tools_and_argument_objects(
    policy: TransformersPolicy,
) -> None:
    tok = tiny_lm.tokenizer(tiny_lm.CHAT_TEMPLATE)
    p = TransformersPolicy(policy.model, tok)
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "multiply", "arguments": '{"a": 6, "b": 7}'},
    }
    messages = [
        *USER,
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "content": "42"},
    ]
    text = p.prompt_text(messages, tools=[{"type": "function"}])
    assert text.startswith("<s>user\nWhat is 6 times 7?</s>")
    assert (
        "[call multiply a=6]" in text
        and "<s>tools 1</s>" in text
        and text.endswith("<s>assistant\n")
    )
    g = gen(p, messages, tools=[{"type": "function"}])
    # The template writes <s> itself: no second one is added in front.
    assert g.prompt_token_ids == tok(text, add_special_tokens=False)["input_ids"]


def test_a_prompt_format_replaces_template_and_transcript(policy: TransformersPolicy) -> None:
    p = TransformersPolicy(
        policy.model, policy.tokenizer, prompt_format=lambda m, t: "Q: " + m[-1]["content"] + "\nA:"
    )
    assert p.prompt_text(USER) == "Q: What is 6 times 7?\nA:"
    assert gen(p).prompt_token_ids == policy.tokenizer("Q: What is 6 times 7?\nA:")["input_ids"]


def test_tool_calls_are_parsed_only_when_tools_were_offered(policy: TransformersPolicy) -> None:
    text = 'Let me. <tool_call>{"name": "multiply", "arguments": {"a": 6, "b": 7}}</tool_call>'
    p = TransformersPolicy(policy.model, policy.tokenizer, prompt_format=lambda m, t: "x")
    p.tool_parser = lambda s: parse_tool_calls(text)
    with_tools = gen(p, tools=[{"type": "function"}])
    assert with_tools.message["content"] == "Let me."
    assert with_tools.message["tool_calls"][0]["function"] == {
        "name": "multiply",
        "arguments": '{"a": 6, "b": 7}',
    }
    assert with_tools.finish_reason == "length"  # it ran out of tokens; the calls still count
    assert "tool_calls" not in gen(p).message


def test_parse_tool_calls_leaves_malformed_blocks_in_the_text() -> None:
    assert parse_tool_calls("plain") == ("plain", [])
    bad = "<tool_call>{not json}</tool_call>"
    assert parse_tool_calls(bad) == (bad, [])
    content, calls = parse_tool_calls('<tool_call>{"name": "f", "arguments": "{}"}</tool_call>')
    assert content is None and calls[0]["function"] == {"name": "f", "arguments": "{}"}


def test_plain_prompt_renders_tools_and_calls() -> None:
    call = {"function": {"name": "f", "arguments": '{"x": 1}'}}
    text = plain_prompt(
        [{"role": "assistant", "content": "", "tool_calls": [call]}], tools=[{"n": 1}]
    )
    assert (
        text
        == 'tools: [{"n": 1}]\nassistant: <tool_call>{"name": "f", "arguments": {"x": 1}}</tool_call>\nassistant:'
    )


def test_one_torch_thread_by_default(policy: TransformersPolicy) -> None:
    gen(policy)
    assert torch.get_num_threads() == 1


def test_a_model_in_training_is_generated_from_in_eval_mode_and_left_training(
    policy: TransformersPolicy,
) -> None:
    modes: list[bool] = []
    hook = policy.model.register_forward_pre_hook(
        lambda module, args: modes.append(module.training)
    )
    policy.model.train(True)
    try:
        gen(policy)
        assert policy.model.training and modes and not any(modes)
    finally:
        policy.model.train(False)
        hook.remove()


def test_a_saved_model_loads_from_its_path_and_from_a_spec(
    policy: TransformersPolicy, tmp_path: Path
) -> None:
    policy.model.save_pretrained(tmp_path)
    policy.tokenizer.save_pretrained(tmp_path)
    loaded = policy_from_spec(f"local:{tmp_path}")
    assert isinstance(loaded, TransformersPolicy) and loaded.name == f"local:{tmp_path}"
    assert gen(loaded).token_ids == gen(policy).token_ids


def test_a_missing_model_is_a_config_error(tmp_path: Path) -> None:
    from referee.errors import ConfigError

    with pytest.raises(ConfigError, match="could not load"):
        TransformersPolicy(str(tmp_path / "nothing"))
    with pytest.raises(ConfigError, match="tokenizer"):
        TransformersPolicy(tiny_lm.model(tiny_lm.tokenizer()))


def test_concurrent_requests_queue_for_the_policys_own_thread(policy: TransformersPolicy) -> None:
    import threading

    threads = set()

    def fmt(messages, tools):  # type: ignore[no-untyped-def]
        threads.add(threading.current_thread().name)
        return plain_prompt(messages, tools)

    p = TransformersPolicy(policy.model, policy.tokenizer, prompt_format=fmt)
    convs = [[{"role": "user", "content": f"add {i} and 3"}] for i in range(4)]

    async def together() -> list[Generation]:
        return list(await asyncio.gather(*(p.generate(c, sampling=GREEDY) for c in convs)))

    outs = asyncio.run(together())
    assert len(threads) == 1 and threads.pop().startswith("referee-policy")
    assert [o.token_ids for o in outs] == [gen(p, c).token_ids for c in convs]
    p.close()
    p.close()


def test_it_satisfies_the_policy_protocol(policy: TransformersPolicy) -> None:
    from referee.policy import Policy

    assert isinstance(policy, Policy)
