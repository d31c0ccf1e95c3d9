"""referee inside NeMo RL: an ``EnvironmentInterface`` to run as a Ray actor.

NeMo RL (``NVIDIA-NeMo/RL``, commit ``7ea279abfbeb698b092856d0dab61e7cf39bc909``) is **not on
the package index here**: this module is written against its published signatures, recorded in
``tests/trainers/fixtures/signatures/nemo-rl.json``, and tested through a recorded-signature
stand-in (``tests/train/test_nemo_rl_adapter.py``). When ``nemo_rl`` is installed,
:class:`RefereeEnvironment` subclasses its ``EnvironmentInterface`` and returns its
``EnvironmentReturn``; otherwise a plain base and :class:`EnvironmentResult`, a NamedTuple with
the same fields in the same order (the rollout code unpacks it positionally).

``step(message_log_batch, metadata)``: one entry per sample; ``metadata[i]`` is the sample's
``extra_env_info`` and names the task (``task_id``, read by
:func:`referee.train.lookup.resolve_task`). The last assistant message is the model's turn:

* single-turn (function tasks by default): the verifier's reward, terminated;
* multi-turn (``multi_turn: true`` in the config, or repository tasks): referee's tools from
  ``<tool_call>`` blocks; the tool results come back as a user observation, the episode kept in
  the actor under ``metadata[i]["referee_episode"]`` (set by the first step), the reward 0 until
  ``submit``/``max_turns``. The tools must be offered in the dataset's prompt.

With ``ray_actors: N`` in the config, the single-turn answers of each ``step`` batch are judged
together on the job's shared pool of N sandbox actors on NeMo RL's own Ray cluster (made by the
first actor that asks: :func:`referee.cluster.shared_pool`; it needs the task file, ``tasks``),
spread over the nodes, instead of one by one in this actor's process.

``rewards`` and ``terminateds`` are float ``torch`` tensors of shape ``[B]``; ``answers`` the
answers judged. Held-out tasks are refused (:class:`~referee.errors.ConfigError`) unless the
config sets ``allow_heldout: true``; a missing task is a ``ConfigError``, never a 0.

What the user writes (before the experiment starts; both registrations are needed:
``get_actor_python_env`` raises for an actor class missing from the second)::

    from referee.train.nemo_rl import register
    register("referee")   # == register_env("referee", "referee.train.nemo_rl.RefereeEnvironment")
                          #  + ACTOR_ENVIRONMENT_REGISTRY[FQN] = PY_EXECUTABLES.SYSTEM
    # config: env.referee: {tasks: /data/tasks.jsonl, multi_turn: false, max_turns: 8}
    # data: task_name referee, extra_env_info {task_id: ...}

NeMo RL constructs it as ``ray.remote(RefereeEnvironment).options(...).remote(cfg)``;
:func:`actor_class` gives the decorated class with the bundled environments' options
(``max_restarts=-1, max_task_retries=-1, max_concurrency=1000``).
"""

from __future__ import annotations

import importlib
import threading
import uuid
from collections.abc import Mapping
from typing import Any, NamedTuple

from referee.train.skyrl import TextEpisode

__all__ = ["FQN", "EnvironmentResult", "RefereeEnvironment", "actor_class", "register"]

FQN = "referee.train.nemo_rl.RefereeEnvironment"


class EnvironmentResult(NamedTuple):
    """``nemo_rl.environments.interfaces.EnvironmentReturn``'s fields, in its order."""

    observations: list[dict[str, str]]
    metadata: list[Any]
    next_stop_strings: list[Any]
    rewards: Any
    terminateds: Any
    answers: list[str | None] | None


def _nemo(module: str, name: str) -> Any:
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


_Base: Any = _nemo("nemo_rl.environments.interfaces", "EnvironmentInterface") or object


class RefereeEnvironment(_Base):  # type: ignore[misc]
    """referee's tasks and verifiers as a NeMo RL environment (see the module)."""

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        cfg = dict(cfg or {})
        self.tasks = cfg.get("tasks")
        self.multi_turn = cfg.get("multi_turn")
        self.allow_heldout = bool(cfg.get("allow_heldout", False))
        self.max_turns = int(cfg.get("max_turns", 8))
        self.episodes: dict[str, TextEpisode] = {}
        self._lock = threading.Lock()
        #: ``ray_actors: N``: single-turn answers are judged on a pool of N sandbox actors
        #: spread over the cluster (:mod:`referee.cluster`), a batch at a time, instead of one
        #: by one in this actor's process.
        self.ray_actors = int(cfg.get("ray_actors") or 0)
        self.pool: Any = None
        if self.ray_actors:
            from referee.cluster.shared import shared_pool

            self.pool = shared_pool(self.tasks, self.ray_actors)

    def _episode(self, meta: Mapping[str, Any]) -> tuple[str, TextEpisode]:
        key = meta.get("referee_episode")
        with self._lock:
            if isinstance(key, str) and key in self.episodes:
                return key, self.episodes[key]
        episode = TextEpisode(
            {**meta, "max_turns": self.max_turns},
            tasks=self.tasks,
            multi_turn=self.multi_turn,
            allow_heldout=self.allow_heldout,
        )
        if episode.multi_turn:
            episode.init([])
        key = uuid.uuid4().hex
        with self._lock:
            self.episodes[key] = episode
        return key, episode

    def step(self, message_log_batch: list[Any], metadata: list[Any]) -> Any:
        import torch

        observations: list[dict[str, str]] = []
        metas: list[Any] = []
        rewards: list[float] = []
        dones: list[float] = []
        answers: list[str | None] = []
        batch = [self._episode(meta or {}) for meta in metadata]
        texts = [_last_reply(log) for log in message_log_batch]
        judged = self._judge_on_pool(batch, texts) if self.pool is not None else {}
        for (key, episode), text, meta in zip(batch, texts, metadata, strict=True):
            if key in judged:
                obs, reward, done, _ = episode.finish(judged[key])
            else:
                obs, reward, done, _ = episode.step(text)
            if done:
                episode.close()
                with self._lock:
                    self.episodes.pop(key, None)
            content = obs[0]["content"] if obs else ""
            observations.append({"role": "user" if not done else "environment", "content": content})
            metas.append(dict(meta or {}) if done else {**dict(meta or {}), "referee_episode": key})
            rewards.append(float(reward))
            dones.append(1.0 if done else 0.0)
            answers.append(text)
        result = _nemo("nemo_rl.environments.interfaces", "EnvironmentReturn") or EnvironmentResult
        return result(
            observations,
            metas,
            [None] * len(metas),
            torch.tensor(rewards, dtype=torch.float32),
            torch.tensor(dones, dtype=torch.float32),
            answers,
        )

    def _judge_on_pool(
        self, batch: list[tuple[str, TextEpisode]], texts: list[str]
    ) -> dict[str, Any]:
        """The verdicts of the batch's single-turn answers, judged together on the pool."""
        from referee.cluster.shared import judge_texts

        chosen = [(key, ep, text) for (key, ep), text in zip(batch, texts, strict=True)
                  if not ep.multi_turn]  # fmt: skip
        if not chosen:
            return {}
        verdicts = judge_texts(self.pool, [(ep.task, text) for _, ep, text in chosen])
        return {key: v for (key, _, _), v in zip(chosen, verdicts, strict=True)}

    def global_post_process_and_metrics(self, batch: Any) -> tuple[Any, dict[str, Any]]:
        """The batch unchanged; ``accuracy`` (share of rewards of 1) and ``mean_reward``."""
        rewards = batch.get("rewards")
        if rewards is None or len(rewards) == 0:
            return batch, {}
        values = [float(r) for r in rewards]
        return batch, {
            "accuracy": sum(v >= 1.0 for v in values) / len(values),
            "mean_reward": sum(values) / len(values),
        }

    def health(self) -> dict[str, Any]:
        """Open episodes, and each pool actor's health (``ray_actors``; else an empty list)."""
        with self._lock:
            episodes = len(self.episodes)
        return {"episodes": episodes, "pool": self.pool.health() if self.pool is not None else []}

    def shutdown(self) -> None:
        with self._lock:
            episodes, self.episodes = list(self.episodes.values()), {}
        for episode in episodes:
            episode.close()
        if self.pool is not None:
            from referee.cluster.shared import close_shared_pools

            self.pool = None
            close_shared_pools()


def _last_reply(log: list[Any]) -> str:
    said = [m for m in log if m.get("role") == "assistant"]
    return str(said[-1]["content"]) if said else ""


def actor_class(**options: Any) -> Any:
    """``ray.remote(RefereeEnvironment)`` with NeMo RL's usual actor options (overridable)."""
    import ray

    opts = {"max_restarts": -1, "max_task_retries": -1, "max_concurrency": 1000, **options}
    return ray.remote(**opts)(RefereeEnvironment)


def register(env_name: str = "referee") -> None:
    """``register_env(env_name, FQN)`` and ``ACTOR_ENVIRONMENT_REGISTRY[FQN] = SYSTEM``."""
    from nemo_rl.distributed.ray_actor_environment_registry import ACTOR_ENVIRONMENT_REGISTRY
    from nemo_rl.distributed.virtual_cluster import PY_EXECUTABLES
    from nemo_rl.environments.utils import register_env

    register_env(env_name, FQN)
    ACTOR_ENVIRONMENT_REGISTRY[FQN] = PY_EXECUTABLES.SYSTEM
