"""``TransformersPolicy``: a local causal language model (transformers), for CPU runs and tests.

The prompt is the tokenizer's chat template when it has one (``add_generation_prompt=True``,
tools passed to the template). Without one it is a plain transcript, one line per message::

    tools: [{"type": "function", ...}]          (only when there are tools)
    system: You are terse.
    user: 2+2?
    assistant: <tool_call>{"name": "calc", "arguments": {"expr": "2+2"}}</tool_call>
    tool: 4
    assistant:

and ``prompt_format(messages, tools) -> str`` replaces both. Sampling follows
:class:`~referee.policy.base.Sampling` (temperature 0 is greedy; no top-k). Generation stops at
the end-of-sequence token (kept in ``token_ids``: the model chose to stop, and training needs
that choice), at a stop string (the text is cut before it, as the OpenAI API does; the token
ids keep what was generated), or at ``max_tokens``. ``logprobs`` are the model's own
log-probabilities of the chosen tokens (at temperature 1, before top-p), as vLLM reports by
default. Tool calls in the Hermes/Qwen format, ``<tool_call>{"name", "arguments"}</tool_call>``,
become ``tool_calls`` on the message when tools were offered (``tool_parser`` replaces this).

Generation runs on a thread of the policy's own, so the event loop keeps driving other
episodes' environments meanwhile. Requests queue for that one thread: one generation runs at a
time per policy (a seeded sample must not share the random generator with another, and the
waiting requests hold no thread of the loop's default pool, which environments use for their
sandbox runs). :meth:`generate_batch` is the way to throughput::

    policy = TransformersPolicy("path/to/model")                    # doctest: +SKIP
    gens = await policy.generate_batch([conv1, conv2], Sampling(0.7, seed=1))  # doctest: +SKIP

The device follows :func:`referee.policy.device.pick_device` unless given: CUDA where torch
sees a GPU (a model loaded from a path in bfloat16 where supported), the CPU otherwise
(float32). A model passed in already loaded stays on its device. On the CPU torch uses one
thread by default (``num_threads="auto"``): on a small shared CPU more threads made steps 10-30
times slower here.

A GGUF file loads through transformers' own reader (``gguf_file=``, dequantised to the dtype;
the ``gguf`` package must be installed): ``TransformersPolicy(folder, gguf_file="m.gguf")``.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import torch
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    GenerationConfig,
    GenerationMixin,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    StoppingCriteria,
    StoppingCriteriaList,
)

from referee.errors import ConfigError, PolicyError
from referee.optional import require_extra
from referee.policy.base import Generation, Sampling
from referee.policy.device import pick_device

__all__ = ["TransformersPolicy", "parse_tool_calls", "plain_prompt"]

Messages = list[dict[str, Any]]
Tools = list[dict[str, Any]] | None
PromptFormat = Callable[[Messages, Tools], str]
ToolParser = Callable[[str], tuple[str | None, list[dict[str, Any]]]]

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


class TransformersPolicy:
    """A transformers causal LM as a policy; see the module docstring.

    Args:
        model_or_path: a loaded model, or a local path / hub id for ``from_pretrained``.
        tokenizer: a tokenizer, a path for ``AutoTokenizer``, or None for the model's path.
        device: where the model runs (``"cpu"``, ``"cuda"``, ``"auto"``); None: ``auto`` for a
            path (:func:`~referee.policy.device.pick_device`), the model's own device for a
            loaded model.
        name: recorded on trajectories (default ``local:<path or class>``).
        prompt_format: ``(messages, tools) -> prompt text``, instead of the chat template.
        tool_parser: ``text -> (content, tool_calls)``, instead of the ``<tool_call>`` parser.
        num_threads: torch's intra-op threads, set for every generation; None leaves it alone;
            ``"auto"``: one on the CPU, left alone with a GPU.
        dtype: for ``from_pretrained`` (``torch.bfloat16``...); by default the device's
            (float32 on the CPU, bfloat16 or float16 on CUDA).
        gguf_file: the name of a GGUF file inside the folder ``model_or_path``, to load the
            model (and, unless given, the tokenizer) from.
        adapter: a folder of a PEFT adapter (LoRA: ``referee train --model`` writes one) put
            on the model, unmerged, as training evaluated it.
    """

    #: One generation at a time (one worker thread): callers that queue requests behind it
    #: (``referee eval``) run their episodes one by one instead.
    serial = True

    def __init__(
        self,
        model_or_path: PreTrainedModel | str,
        tokenizer: PreTrainedTokenizerBase | str | None = None,
        device: str | None = None,
        *,
        name: str | None = None,
        prompt_format: PromptFormat | None = None,
        tool_parser: ToolParser | None = None,
        num_threads: int | Literal["auto"] | None = "auto",
        dtype: torch.dtype | None = None,
        gguf_file: str | None = None,
        adapter: str | None = None,
    ) -> None:
        model: PreTrainedModel
        if isinstance(model_or_path, str):
            path = model_or_path
            chosen = pick_device(device)
            device = chosen.device
            self.num_threads: int | None = (
                chosen.threads if isinstance(num_threads, str) else num_threads
            )
            self._set_threads()
            extra: dict[str, Any] = {}
            if gguf_file is not None:
                require_extra("gguf", needed_for="a .gguf model")
                extra["gguf_file"] = gguf_file
            try:
                model = AutoModelForCausalLM.from_pretrained(
                    path, dtype=dtype or chosen.dtype, **extra
                )
            except (OSError, ValueError) as e:
                raise ConfigError(
                    f"could not load a causal language model from {path!r}: {e}; pass a folder "
                    "written by save_pretrained, or a .gguf file (or a hub id, with network "
                    "access)"
                ) from e
            label = f"{path}/{gguf_file}" if gguf_file else path
            if adapter is not None:
                model = _with_adapter(model, adapter)
                label = f"{label}+{adapter}"
        else:
            model, path, label = model_or_path, None, type(model_or_path).__name__
            extra = {}
            if device is None:
                device = str(next(model.parameters()).device)
            else:
                device = pick_device(device).device
            on_cpu = torch.device(device).type == "cpu"
            auto_threads = 1 if on_cpu else None
            self.num_threads = auto_threads if isinstance(num_threads, str) else num_threads
            self._set_threads()
        if tokenizer is None and path is None:
            raise ConfigError("a loaded model needs its tokenizer: pass tokenizer=...")
        if tokenizer is None or isinstance(tokenizer, str):
            source = tokenizer or path
            try:
                tokenizer = AutoTokenizer.from_pretrained(
                    source, **(extra if tokenizer is None else {})
                )
            except (OSError, ValueError) as e:
                raise ConfigError(f"could not load a tokenizer from {source!r}: {e}") from e
        # A PEFT model wraps a GenerationMixin and forwards generate() to it
        if not isinstance(model, GenerationMixin) and not callable(
            getattr(model, "generate", None)
        ):
            raise ConfigError(f"{label} cannot generate: pass a causal language model")
        # Module.to, called unbound: transformers' wrapped ``to`` confuses type checkers.
        torch.nn.Module.to(model, device)
        self.model: Any = model  # a PreTrainedModel, or a PEFT model wrapping one
        self.tokenizer = tokenizer
        self.device = device
        self.name = name or f"local:{label}"
        self.prompt_format = prompt_format
        self.tool_parser = tool_parser or parse_tool_calls
        self._eos_ids = _eos_ids(model, tokenizer)
        if not self._eos_ids:
            raise ConfigError("neither the tokenizer nor the model names an end-of-sequence token")
        self._pad_id = tokenizer.pad_token_id
        if self._pad_id is None:
            self._pad_id = min(self._eos_ids)
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="referee-policy")
        dev = torch.device(device)
        self._rng_devices = [dev.index or 0] if dev.type == "cuda" else []

    # ---- prompts ------------------------------------------------------------------------------

    def prompt_text(self, messages: Messages, tools: Tools = None) -> str:
        """The text the model continues: ``prompt_format``, the chat template, or the transcript."""
        if self.prompt_format is not None:
            return self.prompt_format(messages, tools)
        if getattr(self.tokenizer, "chat_template", None):
            template_tools: list[dict[Any, Any] | Callable[..., Any]] | None = (
                list(tools) if tools else None
            )
            text = self.tokenizer.apply_chat_template(
                _for_template(messages),
                tools=template_tools,
                add_generation_prompt=True,
                tokenize=False,
            )
            if not isinstance(text, str):
                raise PolicyError(f"the chat template rendered {type(text).__name__}, not text")
            return text
        return plain_prompt(messages, tools)

    # ---- generation ---------------------------------------------------------------------------

    async def generate(
        self,
        messages: Messages,
        *,
        tools: Tools = None,
        sampling: Sampling = Sampling(),
    ) -> Generation:
        return (await self._run(self._generate_sync, [messages], tools, sampling))[0]

    async def generate_batch(
        self, conversations: list[Messages], sampling: Sampling = Sampling(), *, tools: Tools = None
    ) -> list[Generation]:
        """One assistant message for each conversation, generated as one padded batch."""
        if not conversations:
            return []
        return await self._run(self._generate_sync, conversations, tools, sampling)

    async def _run(self, fn: Callable[..., list[Generation]], *args: Any) -> list[Generation]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, fn, *args)

    def close(self) -> None:
        """Stop the generation thread (after the queued requests). Safe to call twice."""
        self._worker.shutdown(wait=True)

    def _set_threads(self) -> None:
        if self.num_threads is not None and torch.get_num_threads() != self.num_threads:
            torch.set_num_threads(self.num_threads)

    def _generate_sync(
        self, conversations: list[Messages], tools: Tools, sampling: Sampling
    ) -> list[Generation]:
        texts = [self.prompt_text(m, tools) for m in conversations]
        # A chat template writes its own special tokens; a plain transcript gets the usual ones.
        special = self.prompt_format is None and not getattr(self.tokenizer, "chat_template", None)
        enc = self.tokenizer(
            texts,
            return_tensors="pt",
            padding=True,
            padding_side="left",  # generation continues every row from its last real token
            add_special_tokens=special,
        ).to(self.device)
        prompt_len = int(enc["input_ids"].shape[1])
        stopper = _StopStrings(self.tokenizer, sampling.stop, prompt_len, len(texts))
        config = self._generation_config(sampling)
        self._set_threads()
        start = time.perf_counter()
        # A trainer may share this model: evaluation mode (no dropout) only while generating.
        training = self.model.training
        self.model.train(False)
        try:
            with torch.random.fork_rng(devices=self._rng_devices), torch.inference_mode():
                # The seed is set on a forked generator, so a seeded sample neither depends on
                # nor disturbs the caller's random state (a trainer's, for instance).
                if sampling.seed is not None:
                    torch.manual_seed(sampling.seed)
                out = self.model.generate(
                    **enc,
                    generation_config=config,
                    stopping_criteria=StoppingCriteriaList([stopper]) if sampling.stop else None,
                )
        finally:
            self.model.train(training)
        latency = time.perf_counter() - start
        generated = out.sequences[:, prompt_len:]
        logprobs = _chosen_logprobs(out.logits, generated)
        return [
            self._one(
                enc["input_ids"][i],
                enc["attention_mask"][i],
                generated[i],
                logprobs[i],
                stopper.stopped_at.get(i),
                sampling,
                tools,
                latency,
            )
            for i in range(len(texts))
        ]

    def _generation_config(self, sampling: Sampling) -> GenerationConfig:
        sample = sampling.temperature > 0
        # Every knob is set explicitly: unset ones would be filled from the checkpoint's
        # generation_config.json (top_k=20, repetition_penalty=1.05...), and Sampling means
        # exactly what the OpenAI API means.
        return GenerationConfig(  # type: ignore[no-untyped-call]
            max_new_tokens=sampling.max_tokens,
            do_sample=sample,
            temperature=sampling.temperature if sample else 1.0,
            top_p=sampling.top_p if sample else 1.0,
            top_k=0,
            min_p=0.0,
            typical_p=1.0,
            repetition_penalty=1.0,
            num_beams=1,
            num_return_sequences=1,
            eos_token_id=sorted(self._eos_ids),
            pad_token_id=self._pad_id,
            return_dict_in_generate=True,
            output_logits=True,
        )

    def _one(
        self,
        prompt_ids: torch.Tensor,
        mask: torch.Tensor,
        generated: torch.Tensor,
        logprobs: torch.Tensor,
        stop_end: int | None,
        sampling: Sampling,
        tools: Tools,
        latency: float,
    ) -> Generation:
        ids = generated.tolist()
        end, finish = len(ids), "length"
        for j, tok in enumerate(ids):
            if tok in self._eos_ids:
                end, finish = j + 1, "stop"
                break
        if stop_end is not None and stop_end <= end:
            end, finish = stop_end, "stop"
        ids = ids[:end]
        text = _cut_at_stop(_decode(self.tokenizer, ids), sampling.stop)
        content: str | None = text
        tool_calls: list[dict[str, Any]] = []
        if tools:
            content, tool_calls = self.tool_parser(text)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if tool_calls:
            message["tool_calls"] = tool_calls
            finish = "tool_calls" if finish == "stop" else finish
        prompt = [int(t) for t, m in zip(prompt_ids.tolist(), mask.tolist(), strict=True) if m]
        return Generation(
            message=message,
            prompt_token_ids=prompt,
            token_ids=ids,
            logprobs=[float(x) for x in logprobs[:end].tolist()],
            prompt_tokens=len(prompt),
            completion_tokens=len(ids),
            finish_reason=finish,
            latency_s=latency,
        )


class _StopStrings(StoppingCriteria):
    """Ends a row once its decoded completion contains a stop string; remembers where."""

    def __init__(
        self, tokenizer: PreTrainedTokenizerBase, stop: tuple[str, ...], prompt_len: int, rows: int
    ) -> None:
        self.tokenizer = tokenizer
        self.stop = stop
        self.prompt_len = prompt_len
        self.rows = rows
        self.stopped_at: dict[int, int] = {}  # row -> number of completion tokens kept

    def __call__(
        self, input_ids: torch.LongTensor, scores: torch.FloatTensor, **kwargs: Any
    ) -> torch.BoolTensor:
        done = torch.zeros(self.rows, dtype=torch.bool, device=input_ids.device)
        for row in range(self.rows):
            if row in self.stopped_at:
                done[row] = True
                continue
            completion = input_ids[row, self.prompt_len :]
            text = _decode(self.tokenizer, completion.tolist())
            if any(s in text for s in self.stop):
                self.stopped_at[row] = int(completion.shape[0])
                done[row] = True
        return done  # type: ignore[return-value]


def _chosen_logprobs(
    logits: tuple[torch.Tensor, ...] | None, generated: torch.Tensor
) -> torch.Tensor:
    """Log-probability of each generated token under the raw (unprocessed) logits."""
    if not logits:
        raise PolicyError("generate() returned no logits; this transformers version is unsupported")
    steps = []
    for step, step_logits in enumerate(logits):
        # One step at a time: a [batch, steps, vocab] float32 copy would not fit for big vocabs.
        lp = torch.log_softmax(step_logits.float(), dim=-1)
        steps.append(lp.gather(1, generated[:, step : step + 1]).squeeze(1))
    return torch.stack(steps, dim=1)


def _with_adapter(model: PreTrainedModel, adapter: str) -> Any:
    """``model`` with the PEFT adapter of the folder ``adapter`` on it (not merged: merging
    rounds the weights, and the adapter is evaluated as training evaluated it)."""
    from pathlib import Path

    if not (Path(adapter) / "adapter_config.json").is_file():
        raise ConfigError(
            f"--adapter {adapter}: no adapter_config.json there; pass the folder a PEFT adapter "
            "was saved to (a `referee train --model` run folder's adapter/)"
        )
    require_extra("train", ("peft",), needed_for="--adapter")
    from peft import PeftModel

    try:
        return PeftModel.from_pretrained(model, adapter)
    except (OSError, ValueError, RuntimeError, KeyError) as e:
        raise ConfigError(f"--adapter {adapter}: cannot be put on this model: {e}") from e


def _eos_ids(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> set[int]:
    ids: set[int] = set()
    for source in (getattr(model, "generation_config", None), model.config, tokenizer):
        value = getattr(source, "eos_token_id", None)
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    return ids


def _decode(tokenizer: PreTrainedTokenizerBase, ids: list[int]) -> str:
    text = tokenizer.decode(ids, skip_special_tokens=True)
    return text if isinstance(text, str) else "".join(text)


def _cut_at_stop(text: str, stop: tuple[str, ...]) -> str:
    cuts = [i for i in (text.find(s) for s in stop) if i >= 0]
    return text[: min(cuts)] if cuts else text


def _for_template(messages: Messages) -> Messages:
    """Messages as chat templates expect them: tool-call arguments as objects, not JSON text."""
    out = []
    for m in messages:
        calls = m.get("tool_calls")
        if not calls:
            out.append(m)
            continue
        fixed = []
        for c in calls:
            fn = dict(c.get("function") or {})
            if isinstance(fn.get("arguments"), str):
                try:
                    fn["arguments"] = json.loads(fn["arguments"])
                except ValueError:
                    pass  # malformed arguments stay text: the model should see its own mistake
            fixed.append({**c, "function": fn})
        out.append({**m, "tool_calls": fixed})
    return out


def plain_prompt(messages: Messages, tools: Tools = None) -> str:
    """The transcript prompt used when the tokenizer has no chat template (see module doc).

    >>> plain_prompt([{"role": "user", "content": "2+2?"}])
    'user: 2+2?\\nassistant:'
    """
    lines = []
    if tools:
        lines.append(f"tools: {json.dumps(tools)}")
    for m in messages:
        text = m.get("content") or ""
        for c in m.get("tool_calls") or []:
            fn = c.get("function") or {}
            args = fn.get("arguments", "")
            try:
                args = json.loads(args) if isinstance(args, str) else args
            except ValueError:
                pass
            call = json.dumps({"name": fn.get("name", ""), "arguments": args})
            text += f"<tool_call>{call}</tool_call>"
        lines.append(f"{m.get('role', 'user')}: {text}")
    lines.append("assistant:")
    return "\n".join(lines)


def parse_tool_calls(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """Split Hermes/Qwen-style ``<tool_call>{json}</tool_call>`` blocks out of a completion.

    Malformed blocks stay in the text (the environment answers what it cannot parse).

    >>> content, calls = parse_tool_calls('ok <tool_call>{"name": "f", "arguments": {"x": 1}}'
    ...                                   '</tool_call>')
    >>> content, calls[0]["function"]
    ('ok', {'name': 'f', 'arguments': '{"x": 1}'})
    """
    calls: list[dict[str, Any]] = []

    def take(match: re.Match[str]) -> str:
        try:
            obj = json.loads(match.group(1))
        except ValueError:
            return match.group(0)
        if not isinstance(obj, dict) or not isinstance(obj.get("name"), str):
            return match.group(0)
        args = obj.get("arguments", {})
        calls.append(
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {
                    "name": obj["name"],
                    "arguments": args if isinstance(args, str) else json.dumps(args),
                },
            }
        )
        return ""

    rest = _TOOL_CALL.sub(take, text).strip()
    if not calls:
        return text, []
    return rest or None, calls
