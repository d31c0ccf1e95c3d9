"""referee inside OpenRLHF: an agent file for ``--train.agent_func_path``, and the remote reward.

Written against ``openrlhf`` 0.11.2 (``openrlhf/utils/agent.py``; the loader is
``openrlhf/trainer/ray/vllm_engine.py: _load_agent_executor``), checked by
``tests/trainers/test_openrlhf_contract.py`` in the ``openrlhf`` venv.

**Route 1, the agent file** (referee's environment in the rollout, single- or multi-turn).
OpenRLHF loads a ``.py`` *path* (``spec_from_file_location("agent_module", path)``), takes its
``AgentExecutor`` (a subclass of ``AgentExecutorBase``) and calls ``AgentExecutor()`` with no
arguments. This file is such a file, so a user can name it directly::

    --train.agent_func_path $(python -c "import referee.train.openrlhf as m; print(m.__file__)")
    --data.label_key task_id          # the dataset column holding the task id
    # REFEREE_TASKS=/data/tasks.jsonl in the environment of OpenRLHF's Ray workers

or write a two-line shim file to pass options::

    # referee_agent.py  (--train.agent_func_path /path/to/referee_agent.py)
    from referee.train.openrlhf import agent_executor
    AgentExecutor = agent_executor(tasks="/data/tasks.jsonl", multi_turn=True, max_turns=6)

``MultiTurnAgentExecutor`` makes a fresh :class:`RefereeAgent` per prompt: ``reset`` reads the
task id from the label (:func:`referee.train.lookup.label_task_id`: the id, or JSON with
``task_id``), finds the task, refuses a held-out one (:class:`~referee.errors.ConfigError`,
which propagates out of OpenRLHF's ``execute``: never a training sample), and starts a
:class:`~referee.train.skyrl.TextEpisode`. Each ``step`` gets the model's ``action_text``:

* **single-turn** (function tasks by default): the text is the answer
  (:func:`referee.envs.answers.text_answer`), the verifier's reward comes back and ``done``;
* **multi-turn** (repository tasks by default, or ``multi_turn=True``): the text's
  ``<tool_call>`` blocks run referee's tools (:mod:`referee.train.text_actions`); their results
  go back as ``environment_feedback``, wrapped by ``feedback_template`` (ChatML by default:
  ``<|im_start|>user ... <|im_end|>`` then the assistant header; set it for another chat
  format). The reward is 0 until ``submit``, a final answer or ``max_turns``, then the
  verifier's. The tools must be offered in the dataset's prompt: :func:`openrlhf_row` writes
  rows that do (``--data.input_key input --data.apply_chat_template``).

Rewards are ``torch`` tensors (OpenRLHF calls ``.item()``; rewards are summed over turns, so
only the last turn is non-zero). An infrastructure failure of the verifier (after 2 retries)
raises, never a 0.

**Route 2, the remote reward** (OpenRLHF's own single-turn rollout, referee as an HTTP reward):
``referee serve --compat openrlhf`` serves ``POST /openrlhf/reward``
(:mod:`referee.service.compat.openrlhf`); the user writes
``--reward.remote_url http://HOST:8000/openrlhf/reward --data.label_key task_id`` (before 0.11:
``--remote_rm_url``). Same label rule, same verifiers.

``AgentExecutor`` / ``AgentInstance`` are made on first use (module ``__getattr__``), so this
module imports without ``openrlhf``.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

from referee.envs.code_tools import TOOL_SCHEMAS
from referee.tasks.kinds import TaskKind
from referee.tasks.model import Task
from referee.train.lookup import CODE_KINDS, TaskSource, label_task_id
from referee.train.skyrl import TextEpisode
from referee.train.text_actions import tools_prompt

__all__ = ["CHATML_FEEDBACK", "RefereeAgent", "agent_executor", "openrlhf_row"]

#: How a tool result is appended to the context after the model's turn (ChatML: Qwen, SmolLM).
CHATML_FEEDBACK = "\n<|im_start|>user\n{observation}<|im_end|>\n<|im_start|>assistant\n"
#: Kinds answered in one turn by default (no tools): functions and whole programs.
_SINGLE_TURN = (TaskKind.FUNCTION, TaskKind.PROGRAM)


def openrlhf_row(task: Task, *, multi_turn: bool | None = None) -> dict[str, Any]:
    """One OpenRLHF dataset row: ``input`` (chat messages; for multi-turn the tools offered in a
    system message) and ``task_id`` (the label column). Never the task's hidden data."""
    multi = task.kind not in _SINGLE_TURN if multi_turn is None else multi_turn
    messages = [m.model_dump() for m in task.prompt]
    if multi:
        offer = tools_prompt(_offered_tools(task))
        if messages and messages[0]["role"] == "system":
            messages[0] = {**messages[0], "content": f"{messages[0]['content']}\n\n{offer}"}
        else:
            messages.insert(0, {"role": "system", "content": offer})
    return {"input": messages, "task_id": task.id, "split": task.split}


def _offered_tools(task: Task) -> list[dict[str, Any]]:
    """The tools a multi-turn episode of ``task`` offers: CodeEnv's for a code task, else its
    domain environment's (:class:`TextEpisode` runs it there), read from a reset when they
    depend on the task (a tool world's are its world's)."""
    if task.kind in CODE_KINDS:
        return list(TOOL_SCHEMAS.values())
    from referee.envs.base import SyncEnvironment
    from referee.envs.registry import make_env

    env = SyncEnvironment(make_env(task.kind.value))
    try:
        tools = env.tools()
        if not tools:
            env.reset(task)
            tools = env.tools()
        return tools
    finally:
        env.close()


class RefereeAgent:
    """One episode per prompt, the shape of OpenRLHF's ``AgentInstance`` (``reset``/``step`` on
    ``states`` dicts). Options are class attributes; :func:`agent_executor` sets them."""

    tasks: TaskSource = None
    multi_turn: bool | None = None
    allow_heldout: bool = False
    max_turns: int = 8
    feedback_template: str = CHATML_FEEDBACK

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.episode: TextEpisode | None = None

    async def reset(self, states: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]:
        row = {"task_id": label_task_id(states.get("label")), "max_turns": self.max_turns}
        episode = TextEpisode(
            row, tasks=self.tasks, multi_turn=self.multi_turn, allow_heldout=self.allow_heldout
        )
        if episode.multi_turn:
            await asyncio.to_thread(episode.init, [])
        self.episode = episode
        return {"observation": states["observation"]}

    async def step(self, states: Mapping[str, Any], **kwargs: Any) -> dict[str, Any]:
        import torch

        episode = self.episode
        if episode is None:
            raise RuntimeError("reset(states) must come before step(states)")
        obs, reward, done, _ = await asyncio.to_thread(episode.step, states["action_text"])
        feedback = ""
        if done:
            await asyncio.to_thread(episode.close)
        else:
            feedback = self.feedback_template.format(observation=obs[0]["content"] if obs else "")
        logs = {k: torch.tensor(v) for k, v in episode.metrics().items()}
        return {
            "rewards": torch.tensor(float(reward)),
            "scores": torch.tensor(float(reward)),
            "environment_feedback": feedback,
            "done": done,
            "sampling_params": states.get("sampling_params"),
            "extra_logs": logs,
        }


def agent_executor(
    tasks: TaskSource = None,
    *,
    multi_turn: bool | None = None,
    allow_heldout: bool = False,
    max_turns: int = 8,
    feedback_template: str = CHATML_FEEDBACK,
) -> type:
    """An ``AgentExecutor`` class (a ``MultiTurnAgentExecutor``, constructed with no arguments
    as OpenRLHF does) whose agents use these options. Needs ``openrlhf``."""
    from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

    options = {
        "tasks": tasks,
        "multi_turn": multi_turn,
        "allow_heldout": allow_heldout,
        "max_turns": max_turns,
        "feedback_template": feedback_template,
    }
    instance = type("AgentInstance", (RefereeAgent, AgentInstanceBase), options)
    instance.__module__ = __name__

    class AgentExecutor(MultiTurnAgentExecutor):  # type: ignore[misc]
        agent_class = instance

        def __init__(self) -> None:
            super().__init__(instance)

    AgentExecutor.__module__ = __name__
    return AgentExecutor


_lock = threading.Lock()
_default: Any = None


def __getattr__(name: str) -> Any:
    global _default
    if name in ("AgentExecutor", "AgentInstance"):
        with _lock:
            if _default is None:
                _default = agent_executor()
        return _default if name == "AgentExecutor" else _default.agent_class
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
