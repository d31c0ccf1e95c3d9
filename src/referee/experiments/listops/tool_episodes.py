"""Episodes of a local model in a tool environment, in batches, as TRL's GRPO rolls them out.

Held-out evaluation of the multi-turn experiment runs real episodes: the model's tool calls
go to :class:`~referee.envs.code.CodeEnv` (the sandbox), and the verifier judges what the
episode left. The loop is the one ``GRPOTrainer`` runs with an ``environment_factory``
(TRL 1.16, ``_tool_call_loop``), so a held-out number measures what training optimised:

1. the opening is rendered by the chat template with the tools
   (:func:`~referee.experiments.listops.chat.prompt_ids`); the model generates one turn, up
   to its end-of-turn token;
2. TRL's parser (``trl.chat_template_utils.parse_response``) reads the turn. A turn without a
   tool call ends the episode (its text never reaches the environment); so does the turn
   after ``max_tool_calls`` rounds of tools;
3. each call runs as one environment step and its text comes back as a tool message, worded
   as :class:`~referee.train.trl_env.TRLEnvironment` words it; calls TRL could not make (an
   unknown tool, arguments the tool's signature refuses) come back as TRL's ``{"error": ...}``;
4. the tool results are appended as tokens
   (:func:`~referee.experiments.listops.chat.tool_suffix_ids`), unless they would take the episode
   past ``max_completion_tokens`` (model and tool tokens after the prompt, TRL's
   ``max_completion_length``): then it ends there, as in TRL;
5. the environment's verdict (``CodeEnv.verify``: the submitted answer, or the workspace as it
   stands) is the result. Rows of a batch generate together; greedy unless ``temperature``.

>>> eps = run_episodes(model, tok, heldout, make_env, tools,                # doctest: +SKIP
...                    max_tool_calls=3, max_completion_tokens=160)
>>> sum(e.passed for e in eps) / len(eps)                                   # doctest: +SKIP
0.41
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.envs.base import ChatMessage, Environment
from referee.experiments.listops.chat import prompt_ids, tool_suffix_ids
from referee.tasks.model import Task
from referee.verify.verdict import Verdict

__all__ = ["Episode", "run_episodes"]


@dataclass
class Episode:
    """One episode: the conversation as TRL's completions hold it, and its verdict."""

    task_id: str
    messages: list[ChatMessage]  # the opening, then assistant turns and tool results
    #: "answered" (a turn without a tool call), "max_tool_calls", "length" (the budget)
    end: str = ""
    completion_tokens: int = 0  # model and tool tokens after the prompt
    tool_calls: int = 0
    verdict: Verdict | None = None
    ids: list[int] = field(default_factory=list, repr=False)
    prompt_len: int = 0
    #: one per token of ``ids`` after the prompt: 1 where the model wrote it, 0 where a tool
    #: result was appended (what a loss on the model's own turns keeps, as TRL's tool mask)
    model_mask: list[int] = field(default_factory=list, repr=False)

    @property
    def passed(self) -> bool:
        return bool(self.verdict is not None and self.verdict.passed)

    @property
    def submitted(self) -> bool:
        """Whether a ``submit`` call ran (else the workspace as it stood was judged)."""
        return any(
            m.get("role") == "tool"
            and m.get("name") == "submit"
            and m.get("content") == "submitted"
            for m in self.messages
        )

    def record(self) -> dict[str, Any]:
        """A JSON-ready row (for a trajectories file)."""
        v = self.verdict
        return {
            "task_id": self.task_id, "messages": self.messages, "end": self.end,
            "completion_tokens": self.completion_tokens, "tool_calls": self.tool_calls,
            "submitted": self.submitted, "reward": v.reward if v else None, "passed": self.passed,
            "infra_error": v.infra_error if v else "no verdict",
        }  # fmt: skip


def run_episodes(
    model: Any, tok: Any, tasks: Sequence[Task], make_env: Callable[[], Environment],
    tools: Sequence[Callable[..., Any]], *, max_tool_calls: int, max_completion_tokens: int,
    temperature: float = 0.0, seed: int = 0, batch_size: int = 64,
) -> list[Episode]:  # fmt: skip
    """One episode per task (see the module docstring); results in the order of ``tasks``.

    ``tools`` are the functions TRL offers (the methods of an ``environment_class`` instance):
    the prompt is rendered with them and calls are checked against their signatures.
    Episodes run ``batch_size`` at a time, each batch with its environments (and workspaces)."""
    out: list[Episode] = []
    for lo in range(0, len(tasks), batch_size):
        out += asyncio.run(
            _run(model, tok, list(tasks[lo : lo + batch_size]), make_env, list(tools),
                 max_tool_calls, max_completion_tokens, temperature, seed + lo, batch_size)
        )  # fmt: skip
    return out


async def _run(
    model: Any, tok: Any, tasks: list[Task], make_env: Callable[[], Environment],
    tools: list[dict[Any, Any] | Callable[..., Any]], max_tool_calls: int, budget: int,
    temperature: float,
    seed: int, batch_size: int,
) -> list[Episode]:  # fmt: skip
    from trl.chat_template_utils import parse_response

    by_name = {t.__name__: t for t in tools if callable(t)}
    envs = [make_env() for _ in tasks]
    episodes: list[Episode] = []
    try:
        for task, env in zip(tasks, envs, strict=True):
            opening = await env.reset(task)
            ids = prompt_ids(tok, opening, tools)
            episodes.append(Episode(task.id, list(opening), ids=ids, prompt_len=len(ids)))
        limit = int(getattr(model.config, "max_position_embeddings", 1 << 30))
        active = list(range(len(tasks)))
        for round_ in range(max_tool_calls + 1):
            if not active:
                break
            room = [min(budget - episodes[i].completion_tokens, limit - len(episodes[i].ids))
                    for i in active]  # fmt: skip
            turns = _generate(model, tok, [episodes[i].ids for i in active], room,
                              temperature, seed + round_, batch_size)  # fmt: skip
            still = []
            for i, new in zip(active, turns, strict=True):
                ep = episodes[i]
                message = parse_response(tok, new, prefix=ep.ids, tools=tools) if new else {}
                ep.ids = ep.ids + new
                ep.model_mask += [1] * len(new)
                ep.completion_tokens += len(new)
                if message:
                    ep.messages.append(message)
                calls = message.get("tool_calls") or []
                if not calls:
                    ended = bool(new) and new[-1] == tok.eos_token_id
                    ep.end = "answered" if ended else "length"
                    continue
                if round_ == max_tool_calls:
                    ep.end = "max_tool_calls"
                    continue
                results = []
                for c in calls:
                    ep.tool_calls += 1
                    name, text = await _tool(envs[i], by_name, c)
                    results.append({"role": "tool", "name": name, "content": text})
                suffix = tool_suffix_ids(tok, results)
                over = ep.completion_tokens + len(suffix) > budget
                if over or len(ep.ids) + len(suffix) >= limit:
                    # TRL drops tool results that do not fit and ends the episode there; the
                    # tools did run, so the workspace holds what they did.
                    ep.end = "length"
                    continue
                ep.ids = ep.ids + suffix
                ep.model_mask += [0] * len(suffix)
                ep.completion_tokens += len(suffix)
                ep.messages.extend(results)
                still.append(i)
            active = still
        verdicts = await asyncio.gather(*(env.verify() for env in envs))
        for ep, verdict in zip(episodes, verdicts, strict=True):
            ep.verdict = verdict
    finally:
        for env in envs:
            await env.close()
    return episodes


async def _tool(
    env: Environment, by_name: dict[str, Callable[..., Any]], call: dict[str, Any]
) -> tuple[str, str]:
    """(tool name, what the model is told) for one parsed call, as TRL and TRLEnvironment say it."""
    if call.get("type") != "function":
        return str(call.get("name", "unknown")), str(
            {"error": f"Unsupported tool call type: {call.get('type')}"}
        )
    fn = call.get("function") or {}
    name, args = str(fn.get("name")), fn.get("arguments") or {}
    method = by_name.get(name)
    if method is None:
        return name, str({"error": f"Tool {name} not found."})
    try:
        inspect.signature(method).bind(**args)  # TRL calls method(**arguments)
    except TypeError as e:
        return name, str({"error": str(e)})
    if env.done:
        reason = getattr(env, "reason", "") or "done"
        return name, f"not run: the episode is over ({reason}); no tool runs now"
    message: ChatMessage = {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "call", "type": "function", "function": {"name": name, "arguments": args}}
        ],
    }
    result = await env.step(message)
    text = "\n".join(str(o.get("content") or "") for o in result.observations)
    if result.done and result.reason != "submitted":
        text += f"\n[the episode has ended: {result.reason}]"
    return name, text


def _generate(
    model: Any, tok: Any, seqs: list[list[int]], room: list[int], temperature: float,
    seed: int, batch_size: int,
) -> list[list[int]]:  # fmt: skip
    """One turn per sequence: new tokens up to and including the end token, at most ``room``."""
    import torch

    out: list[list[int]] = []
    was_training = model.training
    # A transformers model says where it lives; a stand-in without ``device`` runs on the CPU.
    device = getattr(model, "device", None)
    model.eval()
    try:
        for lo in range(0, len(seqs), batch_size):
            chunk, caps = seqs[lo : lo + batch_size], room[lo : lo + batch_size]
            width = max(map(len, chunk))
            pad = tok.pad_token_id
            rows = [[pad] * (width - len(s)) + s for s in chunk]
            ids = torch.tensor(rows, device=device)
            mask = torch.tensor(
                [[0] * (width - len(s)) + [1] * len(s) for s in chunk], device=device
            )
            torch.manual_seed(seed + lo)
            with torch.no_grad():
                gen = model.generate(
                    input_ids=ids, attention_mask=mask, max_new_tokens=max(1, max(caps)),
                    do_sample=temperature > 0, temperature=temperature if temperature > 0 else None,
                    top_p=None, top_k=None, pad_token_id=pad, eos_token_id=tok.eos_token_id,
                )  # fmt: skip
            for row, cap in zip(gen[:, width:].tolist(), caps, strict=True):
                end = row.index(tok.eos_token_id) + 1 if tok.eos_token_id in row else len(row)
                out.append(row[: min(end, max(0, cap))])
    finally:
        model.train(was_training)
    return out
