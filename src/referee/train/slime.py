"""referee inside slime: a custom reward (``--custom-rm-path``) and a multi-turn generate
function (``--custom-generate-function-path``).

slime (``THUDM/slime``, commit ``624b824a898ab0ec1fcb4d373004c7f3852bf515``) is **not on the
package index here**: this module is written against its published signatures, recorded in
``tests/trainers/fixtures/signatures/slime.json``, and tested with a recorded-signature stand-in
``Sample`` and a stand-in generate server (``tests/train/test_slime_adapter.py``).

slime names functions by dotted import path. What the user writes::

    --custom-rm-path referee.train.slime.reward           # one sample
    --custom-rm-path referee.train.slime.group_reward --group-rm   # a list of samples
    --custom-generate-function-path referee.train.slime.generate   # multi-turn with tools
    --label-key task_id                                   # the column with the task id
    # REFEREE_TASKS=/data/tasks.jsonl in the rollout workers' environment

or, with no referee in slime's process, the remote reward served by ``referee serve --compat
slime`` (``--rm-type remote_rm --rm-url http://HOST:8000/slime/reward``).

Labels: ``sample.label`` is the task id or a JSON object with ``task_id`` (the one rule,
:func:`referee.train.lookup.label_task_id`, shared with the service's slime route). A label
naming no task, a task not in the task file, and a held-out task (refused where the trainer
trains) are :class:`~referee.errors.ConfigError`, never a reward of 0. ``reward`` judges
``sample.response`` as referee's single-turn environment reads a text answer; for a sample that
:func:`generate` ran, it returns the reward of that episode (``sample.metadata["referee"]``).

:func:`generate` runs a :class:`~referee.train.skyrl.TextEpisode` over referee's ``CodeEnv``:
each turn POSTs the token ids so far to slime's router (``http://{args.sglang_router_ip}:
{args.sglang_router_port}/generate``, SGLang's ``{"input_ids", "sampling_params",
"return_logprob": true}``), reads ``text`` and ``meta_info.output_token_logprobs``
(``[logprob, token_id, ...]`` per token) and ``meta_info.finish_reason.type``, runs the model's
``<tool_call>`` blocks, and appends the tool results (ChatML user turn by default,
``args.referee_feedback_template`` to change it). It fills ``tokens`` (prompt + response),
``response``, ``response_length``, ``loss_mask`` (1 for model tokens, 0 for tool output),
``rollout_log_probs`` (0.0 for tool output), ``status`` (``COMPLETED``, or ``TRUNCATED`` when
the model hit its token limit), and ``reward`` (the verifier's, at the episode's end). The
tokenizer is ``transformers.AutoTokenizer.from_pretrained(args.hf_checkpoint)`` (cached), or
``args.referee_tokenizer`` if set. Options on ``args``: ``referee_max_turns`` (default 8),
``referee_multi_turn`` (default: by task kind), ``referee_tasks``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from typing import Any

from referee.errors import ConfigError
from referee.train.lookup import (
    TaskSource,
    check_split,
    label_task_id,
    resolve_task,
    score_text,
)
from referee.train.openrlhf import CHATML_FEEDBACK
from referee.train.skyrl import TextEpisode

__all__ = ["CHATML_FEEDBACK", "eval_reward", "generate", "group_reward", "reward"]


def _tasks(args: Any) -> TaskSource:
    return getattr(args, "referee_tasks", None)


def _judge(args: Any, sample: Any, *, allow_heldout: bool) -> float:
    done = (getattr(sample, "metadata", None) or {}).get("referee")
    if isinstance(done, dict) and "reward" in done:
        return float(done["reward"])
    task = resolve_task({"task_id": label_task_id(sample.label)}, _tasks(args))
    check_split(task, allow_heldout=allow_heldout)
    return float(score_text(task, sample.response or "").reward)


async def reward(args: Any, sample: Any, **kwargs: Any) -> float:
    """slime's ``custom_rm``: ``await fn(args, sample, **kwargs) -> float``."""
    return await asyncio.to_thread(_judge, args, sample, allow_heldout=False)


async def eval_reward(args: Any, sample: Any, **kwargs: Any) -> float:
    """:func:`reward` that accepts held-out tasks (an evaluation dataset's ``custom_rm_path``)."""
    return await asyncio.to_thread(_judge, args, sample, allow_heldout=True)


async def group_reward(args: Any, samples: Sequence[Any], **kwargs: Any) -> list[float]:
    """slime's ``--group-rm`` form: ``await fn(args, samples, **kwargs) -> list[float]``."""
    return list(await asyncio.gather(*(reward(args, s) for s in samples)))


@functools.lru_cache(maxsize=4)
def _tokenizer_for(path: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)


def _tokenizer(args: Any) -> Any:
    tok = getattr(args, "referee_tokenizer", None)
    if tok is not None:
        return tok
    path = getattr(args, "hf_checkpoint", None)
    if not path:
        raise ConfigError("slime's args name no hf_checkpoint to load the tokenizer from")
    return _tokenizer_for(str(path))


def _prompt_text(sample: Any, tok: Any) -> str:
    prompt = sample.prompt
    if isinstance(prompt, str):
        return prompt
    kwargs = dict(getattr(sample, "apply_chat_template_kwargs", None) or {})
    return str(
        tok.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True, **kwargs)
    )


async def _post(url: str, payload: dict[str, Any]) -> dict[str, Any]:
    import httpx

    async with httpx.AsyncClient(timeout=None) as client:
        response = await client.post(url, json=payload)
        response.raise_for_status()
        data: dict[str, Any] = response.json()
        return data


async def generate(args: Any, sample: Any, sampling_params: dict[str, Any]) -> Any:
    """slime's ``custom_generate``: ``await fn(args, sample, sampling_params) -> Sample``."""
    tok = _tokenizer(args)
    max_turns = int(getattr(args, "referee_max_turns", 8))
    row = {"task_id": label_task_id(sample.label), "max_turns": max_turns}
    episode = TextEpisode(
        row, tasks=_tasks(args), multi_turn=getattr(args, "referee_multi_turn", None)
    )
    template = str(getattr(args, "referee_feedback_template", CHATML_FEEDBACK))
    url = f"http://{args.sglang_router_ip}:{args.sglang_router_port}/generate"
    if episode.multi_turn:
        await asyncio.to_thread(episode.init, [])
    prompt_ids = list(tok.encode(_prompt_text(sample, tok), add_special_tokens=False))
    response_ids: list[int] = []
    mask: list[int] = []
    logprobs: list[float] = []
    text = ""
    status = "completed"
    try:
        done = False
        while not done:
            payload = {
                "input_ids": prompt_ids + response_ids,
                "sampling_params": dict(sampling_params),
                "return_logprob": True,
            }
            out = await _post(url, payload)
            meta = out.get("meta_info") or {}
            pairs = meta.get("output_token_logprobs") or []
            ids = [int(p[1]) for p in pairs]
            turn_text = str(out.get("text", ""))
            if not ids and turn_text:
                ids = list(tok.encode(turn_text, add_special_tokens=False))
            response_ids += ids
            mask += [1] * len(ids)
            logprobs += [float(p[0]) for p in pairs] if pairs else [0.0] * len(ids)
            text += turn_text
            if (meta.get("finish_reason") or {}).get("type") == "length":
                status = "truncated"
            observations, _, done, _ = await asyncio.to_thread(episode.step, turn_text)
            if status == "truncated" and not done:
                break
            if not done:
                content = observations[0]["content"] if observations else ""
                obs = template.format(observation=content)
                feedback = list(tok.encode(obs, add_special_tokens=False))
                response_ids += feedback
                mask += [0] * len(feedback)
                logprobs += [0.0] * len(feedback)
                text += obs
    finally:
        await asyncio.to_thread(episode.close)
    sample.tokens = prompt_ids + response_ids
    sample.response = text
    sample.response_length = len(response_ids)
    sample.loss_mask = mask
    sample.rollout_log_probs = logprobs
    sample.status = getattr(type(sample).Status, status.upper())
    sample.reward = float(episode.reward) if episode.done else 0.0
    metadata = dict(getattr(sample, "metadata", None) or {})
    metadata["referee"] = {"reward": sample.reward, **episode.metrics()}
    sample.metadata = metadata
    return sample
