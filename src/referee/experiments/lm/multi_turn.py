"""Multi-turn episodes of a pretrained model (``referee train --model SPEC --tasks FILE --env
code``): the tool environment, its GRPO rollouts and its held-out evaluation.

* **Environment**: :class:`~referee.envs.code.CodeEnv` with the list-ops experiment's tools and
  system prompt (:func:`~referee.experiments.listops.multi_turn.code_env`: ``write_file`` and
  ``submit``, at most :data:`~referee.experiments.listops.multi_turn.MAX_TOOL_CALLS` rounds),
  the user message being the task's own prompt. Every tool call and every verdict runs in
  referee's sandbox (the runtime's).
* **GRPO**: TRL's ``environment_factory`` =
  :func:`~referee.train.trl_env.environment_class` over the GRPO pool, through
  :class:`~referee.experiments.listops.multi_turn.EnvRollouts` (pass/fail rewards; each
  training episode in ``RUN/trajectories.jsonl``).
* **Held-out evaluation**: one greedy episode per task, run as TRL runs them
  (:func:`~referee.experiments.listops.tool_episodes.run_episodes`); pass@1 is the verifier's
  verdict on what the episode left, each episode saved to ``RUN/heldout_episodes.jsonl``.
* **Chat template**: :func:`~referee.experiments.lm.tool_chat.tool_chat_template` (the model's
  own where TRL can render and parse its tool calls, else TRL's qwen2_5 tool template).

>>> episodes = ToolEpisodes(pool, runtime, log=print)                       # doctest: +SKIP
>>> result = episodes.evaluate(model, tok, heldout, "base", cfg, layout)    # doctest: +SKIP
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from referee.envs.runtime import CodeRuntime
from referee.experiments.lm.config import LMConfig
from referee.rollout.evaluate import EvalResult
from referee.tasks.model import Task
from referee.track.layout import RunLayout

__all__ = ["ToolEpisodes", "valid_write"]

Log = Callable[[str], None]


def valid_write(messages: Sequence[dict[str, Any]]) -> bool:
    """Whether an episode's ``write_file`` call ran (its tool result says it wrote a file): the
    model used the tool format at all, whatever its code does."""
    return any(
        m.get("role") == "tool"
        and m.get("name") == "write_file"
        and str(m.get("content", "")).startswith("wrote ")
        for m in messages
    )


class ToolEpisodes:
    """The environment class over ``pool`` (the GRPO pool: train tasks and canaries) on
    ``runtime``, its tools, and the per-stage tool-use numbers of the evaluations."""

    def __init__(self, pool: Sequence[Task], runtime: CodeRuntime, *, log: Log) -> None:
        from referee.experiments.listops.multi_turn import code_env, tool_functions
        from referee.train.trl_env import environment_class

        self.pool = list(pool)
        self.runtime = runtime
        self.log = log
        self.env_class = environment_class(code_env, self.pool, runtime=runtime)
        self.tools = tool_functions(self.env_class)
        self.tool_use: dict[str, dict[str, Any]] = {}

    def evaluate(
        self, model: Any, tok: Any, heldout: Sequence[Task], stage: str, cfg: LMConfig,
        layout: RunLayout,
    ) -> EvalResult:  # fmt: skip
        """Greedy held-out episodes (see the module docstring), appended to
        ``RUN/heldout_episodes.jsonl`` under ``stage``."""
        from referee.experiments.listops.multi_turn import MAX_TOOL_CALLS, code_env
        from referee.experiments.listops.tool_episodes import run_episodes
        from referee.rollout.batched import answer_ran

        t = time.perf_counter()
        eps = run_episodes(
            model, tok, list(heldout), lambda: code_env(self.runtime), self.tools,
            max_tool_calls=MAX_TOOL_CALLS, max_completion_tokens=cfg.max_tokens, seed=cfg.seed,
            batch_size=cfg.eval_batch,
        )  # fmt: skip
        wall = time.perf_counter() - t
        ends: dict[str, int] = {}
        for e in eps:
            ends[e.end] = ends.get(e.end, 0) + 1
        n = max(1, len(eps))
        self.tool_use[stage] = {
            "valid_write_file": round(sum(valid_write(e.messages) for e in eps) / n, 4),
            "submitted": round(sum(e.submitted for e in eps) / n, 4),
            "tool_calls_per_episode": round(sum(e.tool_calls for e in eps) / n, 3),
            "completion_tokens_mean": round(sum(e.completion_tokens for e in eps) / n, 1),
            "end_reasons": ends,
        }
        with layout.heldout_episodes.open("a") as f:
            f.writelines(
                json.dumps({"stage": stage, **e.record()}, default=str) + "\n" for e in eps
            )
        return EvalResult(
            task_ids=[e.task_id for e in eps],
            passed=[e.passed for e in eps],
            rewards=[e.verdict.reward if e.verdict else 0.0 for e in eps],
            # an episode without a verdict, or whose verdict is an infrastructure failure, is
            # counted as such (never a silent fail)
            infra_errors=sum(bool(e.verdict is None or e.verdict.infra_error) for e in eps),
            completions=[json.dumps(e.messages, default=str) for e in eps],
            completion_tokens=sum(e.completion_tokens for e in eps),
            greedy_s=round(wall, 2),
            # the model's code ran: a write_file that ran and a verdict that reached a test (an
            # episode that wrote nothing leaves the task's start file, whose tests run too)
            ran=[
                bool(e.verdict and answer_ran(e.verdict) and valid_write(e.messages)) for e in eps
            ],
        )

    def sample(
        self, model: Any, tok: Any, tasks: Sequence[Task], cfg: LMConfig, *, seed: int
    ) -> list[Any]:
        """One episode per task at the run's temperature, all in one batch (the RFT control's
        answers, sampled as GRPO's are), in the order of ``tasks``."""
        from referee.experiments.listops.multi_turn import MAX_TOOL_CALLS, code_env
        from referee.experiments.listops.tool_episodes import run_episodes

        return run_episodes(
            model, tok, list(tasks), lambda: code_env(self.runtime), self.tools,
            max_tool_calls=MAX_TOOL_CALLS, max_completion_tokens=cfg.max_tokens,
            temperature=cfg.temperature, seed=seed, batch_size=max(1, len(tasks)),
        )  # fmt: skip

    def rollouts(self, layout: RunLayout, cfg: LMConfig) -> Any:
        """GRPO's rollouts: TRL's ``environment_factory`` on this class, pass/fail rewards."""
        from referee.experiments.listops.multi_turn import EnvRollouts

        return EnvRollouts(
            self.env_class, self.env_class.dataset(self.pool), layout, reward="pass",
            steps=cfg.steps, log=self.log,
        )  # fmt: skip

    def close(self) -> None:
        self.env_class.shutdown()
