"""Demonstrations as tool-use episodes, and the tiny chat model that imitates them.

An imperfect demonstrator
(:class:`~referee.experiments.listops.demonstrator.Demonstrator`) writes a body of code; a
demonstration is an episode of the TRL environment class that really runs it::

    system     Write the function to solution.py with write_file, then call submit.
    user       keep the even numbers; then return their sum.
    assistant  <tool_call>{"name": "write_file", "arguments": {"path": "solution.py",
               "content": "def solve(xs: list[int]):\\n    xs = [...]\\n    return sum(xs)\\n"}}
    tool       wrote 77 bytes to solution.py           (what the environment answered)
    assistant  <tool_call>{"name": "submit", "arguments": {}}
    tool       submitted
    assistant  Done.                                  (TRL generates once after the last tool)

The verifier then judges the episode, so the demonstrations' pass rate is measured, not
assumed. :func:`sft_row` turns a conversation into the token ids TRL's tool loop would build
for it (:mod:`~referee.experiments.listops.chat`) with a mask of the assistant's own tokens,
the only ones the fine-tuning loss covers.

>>> eps, keys = demonstrations(Env, train, Demonstrator(), draws=8, openings=op)  # doctest: +SKIP
>>> row = sft_row(tok, eps[keys[0]][0], tools)                              # doctest: +SKIP
>>> sorted(row)                                                             # doctest: +SKIP
['completion_mask', 'input_ids']
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from referee.envs.code_tasks import SOLUTION_FILE
from referee.experiments.listops.chat import (
    assistant_ids,
    assistant_text,
    chat_tokenizer,
    prompt_ids,
    system_block,
    tool_call,
    tool_suffix_ids,
)
from referee.experiments.listops.demonstrator import Demonstrator
from referee.tasks.model import Task
from referee.train.trl_env import TRLEnvironment

__all__ = ["FINAL", "chat_model", "demonstration", "demonstrations", "sft_row"]

#: The demonstrations' last turn: TRL generates once more after the last tool results.
FINAL = "Done."

Conversation = list[dict[str, Any]]
Key = tuple[str, str]  # (task id, the demonstrated body)


def demonstration(
    env_class: type[TRLEnvironment], task: Task, body: str, opening: Sequence[dict[str, Any]]
) -> tuple[Conversation, bool]:
    """One demonstrated episode, really run: (its conversation, did the verifier pass it)."""
    code = str(task.payload["code_prompt"]).splitlines()[0] + "\n" + body
    env: Any = env_class()
    env.reset(task_id=task.id)
    conversation = list(opening)
    for name, args in (("write_file", {"path": SOLUTION_FILE, "content": code}), ("submit", {})):
        conversation.append(
            {"role": "assistant", "content": "", "tool_calls": [tool_call(name, args)]}
        )
        conversation.append({"role": "tool", "name": name, "content": getattr(env, name)(**args)})
    conversation.append({"role": "assistant", "content": FINAL})
    env.get_reward()
    return conversation, bool(env.verdict is not None and env.verdict.passed)


def demonstrations(
    env_class: type[TRLEnvironment], tasks: Sequence[Task], demo: Demonstrator, *, draws: int,
    openings: dict[str, Any], workers: int = 2,
) -> tuple[dict[Key, tuple[Conversation, bool]], list[Key]]:  # fmt: skip
    """``draws`` demonstrations of each task: (the episodes by key, each draw's key in order).

    Draws that write the same code are one episode (its transcript would be the same); the
    distinct ones run ``workers`` at a time (episodes are independent, the sandbox is shared)."""
    keys = [(t.id, demo.solve(t, draw=d)) for d in range(max(1, draws)) for t in tasks]
    by_id = {t.id: t for t in tasks}
    todo = list(dict.fromkeys(keys))
    with ThreadPoolExecutor(workers) as pool:
        done = pool.map(lambda k: demonstration(env_class, by_id[k[0]], k[1], openings[k[0]]), todo)
        episodes = dict(zip(todo, done, strict=True))
    return episodes, keys


def sft_row(
    tok: Any,
    conversation: Conversation,
    tools: Sequence[Any],
    memo: dict[str, list[int]] | None = None,
) -> dict[str, list[int]]:
    """Token ids as TRL's tool loop would build the episode, and the mask of the model's own
    tokens: ``{"input_ids", "completion_mask"}``, which TRL's SFTTrainer takes as they are.

    ``memo`` keeps the ids of parts already seen (the opening of a task, "submitted", the
    submit call...), which most demonstrations share."""
    memo = {} if memo is None else memo

    def part(kind: str, value: Any) -> list[int]:
        key = kind + json.dumps(value, sort_keys=True, default=str)
        if key not in memo:
            if kind == "prompt":
                memo[key] = prompt_ids(tok, value, tools)
            elif kind == "tools":
                memo[key] = tool_suffix_ids(tok, value)
            else:
                memo[key] = assistant_ids(tok, value)
        return memo[key]

    first = next(i for i, m in enumerate(conversation) if m["role"] == "assistant")
    ids = list(part("prompt", conversation[:first]))
    mask = [0] * len(ids)
    pending: list[dict[str, Any]] = []
    for m in conversation[first:]:
        if m["role"] == "tool":
            pending.append(m)
            continue
        if pending:
            suffix = part("tools", pending)
            ids, mask, pending = ids + suffix, mask + [0] * len(suffix), []
        turn = part("assistant", m)
        ids, mask = ids + turn, mask + [1] * len(turn)
    return {"input_ids": ids, "completion_mask": mask}


def chat_model(
    conversations: Sequence[Conversation], tools: Sequence[Any], *, model: str | None,
    tiny: Any, seed: int = 0,
) -> tuple[Any, Any]:  # fmt: skip
    """(tokenizer, model): the tiny model and a tokenizer trained on ``conversations``, or the
    local model ``model`` with its own tokenizer (which must do tool calling as TRL needs)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl.chat_template_utils import add_response_schema, supports_tool_calling

    from referee.errors import ConfigError
    from referee.experiments.listops.tiny import tiny_model

    if model is not None:
        tok = AutoTokenizer.from_pretrained(model)
        if getattr(tok, "response_template", None) is None and not getattr(
            tok, "response_schema", None
        ):
            add_response_schema(tok)  # TRL's parser of tool calls, as GRPOTrainer would add it
        if not supports_tool_calling(tok):
            raise ConfigError(
                f"{model}'s chat template does not do tool calling as TRL needs it; use a "
                "model with a template TRL knows (Qwen2.5, Qwen3, Llama 3...)"
            )
        return tok, AutoModelForCausalLM.from_pretrained(model)
    # A throwaway tokenizer renders the texts; the real one is trained on them, with the text
    # every demonstration holds the same as one token each (see _fixed).
    renderer = chat_tokenizer(["def solve(xs):"], vocab_size=300)
    first = conversations[0]
    opening = first[: next(i for i, m in enumerate(first) if m["role"] == "assistant")]
    fixed = [system_block(renderer, opening, tools), *_fixed_calls(renderer)]
    texts = [renderer.apply_chat_template(c, tools=tools, tokenize=False) for c in conversations]
    for s in fixed:
        texts = [t.replace(s, " ") for t in texts]
    tok = chat_tokenizer(texts, fixed=fixed)
    return tok, tiny_model(tok, tiny, seed=seed)


def _fixed_calls(renderer: Any) -> list[str]:
    """The tool calls' text that is the same in every demonstration, as the template writes it:
    ``write_file``'s up to the file's content, and the whole ``submit`` call. As single tokens
    they cost one position each (the model still writes them, TRL still parses the text)."""

    def call_text(name: str, args: dict[str, Any]) -> str:
        message = {"role": "assistant", "content": "", "tool_calls": [tool_call(name, args)]}
        text = assistant_text(renderer, message)
        return text.split("<tool_call>\n", 1)[1].split("\n</tool_call>", 1)[0]

    mark = "\ue000"  # a private-use character: no code holds it, and the template keeps it
    write = call_text("write_file", {"path": SOLUTION_FILE, "content": mark}).split(mark)[0]
    return [write, call_text("submit", {})]
