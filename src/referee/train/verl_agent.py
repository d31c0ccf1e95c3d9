"""referee's multi-turn environments as a veRL agent loop, registered as ``referee``.

This module imports veRL (``verl.experimental.agent_loop``): import it only where veRL is
installed. veRL's agent-loop workers load it from an agent-loop config file::

    # referee_loops.yaml, named by actor_rollout_ref.rollout.agent.agent_loop_config_path
    - name: referee
      _target_: referee.train.verl_agent.RefereeAgentLoop
      # optional: max_turns: 8, env_tools: [write_file, run_python, submit], binary: false

and the rows select it: ``referee tasks export TASKS.jsonl --format verl --agent-name referee
--out train.parquet``. Each row is one episode on the row's task (found as
:func:`referee.train.verl.compute_score` finds it; a held-out task in a training row is
refused), in the environment its kind calls for (:func:`referee.train.lookup.task_env`):
:class:`~referee.envs.CodeEnv` for a code task, the domain's environment
(``make_env(task.kind.value)``: sql, dataframe, numeric, shell, toolworld, verilog) for a
domain's task, with that environment's tools (a tool world's, read after its reset):

* the first messages are the environment's (a system message on the tools, then the task's
  prompt), rendered with the tool schemas by veRL's continuous-token builder;
* each turn, ``server_manager.generate`` samples the model's tokens (mask 1); veRL's tool
  parser (``actor_rollout_ref.rollout.multi_turn.format``, ``hermes`` by default) reads the
  tool calls out of them; the environment's ``step`` runs them (in referee's sandbox, or the
  domain's), and their results (or a nudge) are appended as tokens with mask 0;
* the episode ends when the model submits or answers without a tool call, at the
  environment's turn or time limits, or when the response reaches ``rollout.response_length``
  (the state as it stands, the workspace say, is then judged).

The verdict is the sample's ``reward_score`` (veRL then skips its reward loop for it), with
``passed``, ``tests_passed``, ``tests_total``, ``hack_flags`` logged as reward extra info. An
infrastructure error is retried once and then raised (never a 0 the model did not earn).

Sandboxes and verifiers: one :class:`~referee.envs.CodeRuntime` per process, made on first
use and shared by every episode of the worker (:func:`runtime`); a domain's environment that
takes a verifier (sql, dataframe, verilog) gets the runtime's, the others (numeric, shell,
toolworld) make the sandbox they need per episode and close it with the episode.
"""

from __future__ import annotations

import atexit
import threading
import time
import uuid
from collections.abc import Sequence
from typing import Any

from verl.experimental.agent_loop.agent_loop import (
    AgentLoopBase,
    AgentLoopMetrics,
    AgentLoopOutput,
    register,
)
from verl.experimental.agent_loop.tool_parser import ToolParser

from referee.envs.base import ChatMessage, Environment, EpisodeLimits
from referee.envs.runtime import CodeRuntime
from referee.tasks.model import Task
from referee.train.lookup import task_env
from referee.train.verl import InfraError, check_split, row_task, scores_of
from referee.verify.verdict import Verdict

__all__ = ["RefereeAgentLoop", "runtime", "set_runtime"]

_lock = threading.Lock()
_runtime: CodeRuntime | None = None
_own_runtime = False


def runtime() -> CodeRuntime:
    """This process's sandboxes and verifiers for episodes (made on first use, closed at exit)."""
    global _runtime, _own_runtime
    with _lock:
        if _runtime is None:
            _runtime, _own_runtime = CodeRuntime(), True
            atexit.register(set_runtime, None)
        return _runtime


def set_runtime(rt: CodeRuntime | None) -> None:
    """Run episodes on ``rt`` from now on (not closed here); None: make one on next use. Closes
    the runtime this module made, if any."""
    global _runtime, _own_runtime
    with _lock:
        made = _runtime if _own_runtime else None
        _runtime, _own_runtime = rt, False
    if made is not None:
        made.close()


@register("referee")
class RefereeAgentLoop(AgentLoopBase):
    """One referee episode per row; see the module. ``max_turns`` (default: veRL's
    ``multi_turn.max_assistant_turns``, else 8), ``env_tools`` (CodeEnv's tools offered on a
    code task; default: all six; a domain's environment offers its own), ``single_turn`` (for
    code tasks, and the environments of domains that take it: shell) and ``binary`` come from
    the agent-loop config entry.
    veRL's own ``tools`` (``multi_turn.tool_config_path``) are not used: the environment
    brings its tools."""

    def __init__(
        self,
        *args: Any,
        max_turns: int | None = None,
        env_tools: Sequence[str] | None = None,
        single_turn: bool = False,
        binary: bool = False,
        **kwargs: Any,
    ) -> None:
        kwargs.pop("name", None)  # the config entry's own name, passed on by hydra
        kwargs.pop("tools", None)  # veRL's configured tools: the environment brings its own
        super().__init__(*args, **kwargs)
        multi_turn = self.rollout_config.multi_turn
        self.response_length = int(self.rollout_config.response_length)
        self.max_turns = int(max_turns or multi_turn.get("max_assistant_turns") or 8)
        self.env_tools = list(env_tools) if env_tools is not None else None
        self.single_turn = bool(single_turn)
        self.binary = bool(binary)
        self.tool_parser = ToolParser.get_tool_parser(
            multi_turn.get("format") or "hermes", self.tokenizer
        )

    async def run(self, sampling_params: dict[str, Any], **row: Any) -> AgentLoopOutput:
        extra = dict(row.get("extra_info") or {})
        task = row_task((row.get("reward_model") or {}).get("ground_truth"), extra)
        check_split(task, extra)
        env = task_env(
            task,
            runtime=runtime(),
            single_turn=self.single_turn,
            limits=EpisodeLimits(max_turns=self.max_turns),
            tools=self.env_tools,
        )
        try:
            return await self._episode(env, task, sampling_params)
        finally:
            await env.close()

    async def _episode(
        self, env: Environment, task: Task, sampling_params: dict[str, Any]
    ) -> AgentLoopOutput:
        messages: list[ChatMessage] = await env.reset(task)
        schemas: Any = env.tools() or None  # veRL annotates it list[dict] but means Optional
        token_ids: list[int] = await self.ct_build_initial_tokens(messages, tools=schemas)
        prompt_len = len(token_ids)
        mask: list[int] = []
        logprobs: list[float] | None = None
        request_id = uuid.uuid4().hex
        turns = observations = tool_calls = 0
        end_reason = ""
        gen_s = tool_s = 0.0
        if self.tool_parser.stop_token_ids:
            stops = set(sampling_params.get("stop_token_ids") or []) | set(
                self.tool_parser.stop_token_ids
            )
            sampling_params = {**sampling_params, "stop_token_ids": sorted(stops)}
        while not env.done:
            t0 = time.perf_counter()
            out = await self.server_manager.generate(
                request_id=request_id, prompt_ids=token_ids, sampling_params=sampling_params
            )
            gen_s += time.perf_counter() - t0
            turns += 1
            merged, mask, logprobs = await self.ct_merge_assistant_token(
                token_ids, list(out.token_ids), mask, logprobs, assistant_logprobs=out.log_probs
            )
            token_ids = merged.token_ids
            message = await self._assistant_message(list(out.token_ids), turns)
            messages.append(message)
            t0 = time.perf_counter()
            step = await env.step(message)
            tool_s += time.perf_counter() - t0
            tool_calls += int(step.metrics.get("tool_calls", 0))
            end_reason = step.reason if step.done else ""
            if step.done or len(mask) >= self.response_length or not step.observations:
                break
            previous = list(messages)
            messages.extend(step.observations)
            merged, new_mask, new_logprobs = await self.ct_merge_context_msg(
                previous, messages, token_ids, mask, logprobs, tools=schemas
            )
            if len(new_mask) >= self.response_length:
                break  # no room for the observations, let alone another turn
            token_ids, mask, logprobs = merged.token_ids, new_mask, new_logprobs
            observations += 1
        verdict = await self._verify(env)
        scores = scores_of(verdict, self.binary)
        response = token_ids[prompt_len:]
        n = self.response_length
        return AgentLoopOutput(
            prompt_ids=token_ids[:prompt_len],
            response_ids=response[:n],
            response_mask=mask[:n],
            response_logprobs=logprobs[:n] if logprobs else None,
            reward_score=scores["score"],
            num_turns=turns + observations + 1,
            metrics=AgentLoopMetrics(generate_sequences=gen_s, tool_calls=tool_s),
            extra_fields={
                "reward_extra_info": scores,
                "referee_task_id": task.id,
                "referee_end_reason": end_reason or "response_length",
                "referee_tool_calls": tool_calls,
            },
        )

    async def _assistant_message(self, token_ids: list[int], turn: int) -> ChatMessage:
        """The assistant message the tokens make: text, and tool calls in the chat API's form."""
        content, calls = await self.tool_parser.extract_tool_calls(token_ids)
        message: ChatMessage = {"role": "assistant", "content": content or ""}
        if calls:
            message["tool_calls"] = [
                {
                    "id": c.tool_call_id or f"call_{turn}_{i}",
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for i, c in enumerate(calls)
            ]
        return message

    @staticmethod
    async def _verify(env: Environment) -> Verdict:
        verdict = await env.verify()
        if verdict.infra_error:  # an infrastructure error is not kept: this judges again
            verdict = await env.verify()
        if verdict.infra_error:
            raise InfraError(
                f"task {verdict.task_id}: the episode could not be judged (an infrastructure "
                f"error, not the model's failure: {verdict.infra_error})"
            )
        return verdict
