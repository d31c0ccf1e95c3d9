"""A training run's record: every GRPO rollout as a ``Trajectory`` in the run's ``TrackStore``,
with metrics and the reward-hacking detectors run on each step as it happens.

:class:`RunTracking` is what the embedded experiment (and any trainer loop that sees its
completions and verdicts) calls once per generation batch. It writes ``<run>/track.sqlite``,
which ``referee ui --run <run>``, ``referee audit`` and ``referee export`` read.

>>> tracking = RunTracking(run_dir, run_id="r1", config={"lr": 2e-4},
...                        tasks=[*train, *heldout])                       # doctest: +SKIP
>>> alerts = tracking.log_batch(step, tasks, prompts, completions, verdicts)  # doctest: +SKIP
>>> tracking.heldout(step, pass_rate=0.41, n=256)                           # doctest: +SKIP
>>> tracking.close("finished")                                              # doctest: +SKIP

Every trajectory carries its :class:`~referee.rollout.cost.Cost`: the tokens the trainer
reports, and the sandbox cost and wall time of its verification (``Verdict.sandbox``; a
trainer's loop shows referee nothing else of an episode). ``tracking.ledger`` sums them against
the run's :class:`~referee.rollout.cost.RunBudget`; the trainer's loop asks
``tracking.ledger.exhausted()`` between steps and, when a budget is spent, stops and closes the
run with the :class:`~referee.rollout.cost.BudgetStop` (``close("stopped", stop)``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.rollout.cost import BudgetStop, Cost, CostLedger, RunBudget
from referee.rollout.trajectory import Trajectory, Turn
from referee.sandbox.metering import SandboxUsage
from referee.tasks.model import Task
from referee.track.detectors import Alert
from referee.track.queries import HELDOUT_DIFFICULTY_SPLIT, heldout_by_difficulty
from referee.track.store import TrackStore
from referee.track.tracker import MetricsSink, Tracker
from referee.verify.verdict import Verdict

__all__ = ["RunTracking"]


class RunTracking:
    """The store and the tracker of one training run; see the module docstring."""

    def __init__(
        self,
        run_dir: str | Path,
        *,
        run_id: str,
        config: Mapping[str, Any],
        tasks: Sequence[Task],
        policy: str = "grpo",
        env: str = "code-single",
        name: str | None = None,
        sinks: Sequence[MetricsSink] = (),
        budget: RunBudget | None = None,
    ) -> None:
        self.store = TrackStore(run_dir)
        self.run_id = run_id
        self.policy = policy
        self.env = env
        config = dict(config)
        if budget is not None:
            config["budget"] = budget.model_dump()  # what `referee cost` holds the run to
        self.ledger = CostLedger(budget)
        self.store.start_run(run_id, config, name=name)
        # The tracker records the tasks in the store too (RL exports are built from them).
        self.tracker = Tracker(self.store, tasks=tasks, run_id=run_id, sinks=sinks)
        # Held-out pass rates arrive between batches; the next batch's step carries them to
        # the detectors (the divergence detector compares them with the training reward).
        self._heldout: tuple[float, int] | None = None
        self._difficulty = {t.id: t.difficulty.estimate for t in tasks}
        self.alerts: list[Alert] = []

    def heldout(
        self, step: int, *, pass_rate: float, n: int, passed: Mapping[str, bool] | None = None
    ) -> None:
        """A held-out evaluation at ``step``: stored now, shown to the detectors next batch.
        ``passed``, each task's outcome, adds its pass rate by difficulty (the dashboard's
        held-out bars)."""
        self.store.log_metrics(self.run_id, step, {"heldout_pass_rate": pass_rate}, "heldout")
        if passed:
            by_bin = heldout_by_difficulty(dict(passed), self._difficulty)
            self.store.log_metrics(self.run_id, step, by_bin, HELDOUT_DIFFICULTY_SPLIT)
        self._heldout = (pass_rate, n)

    def log_batch(
        self,
        step: int,
        tasks: Sequence[Task],
        prompts: Sequence[str],
        completions: Sequence[str],
        verdicts: Sequence[Verdict],
        *,
        completion_tokens: Sequence[int] | None = None,
        prompt_tokens: Sequence[int] | None = None,
    ) -> list[Alert]:
        """One generation batch (rows in TRL's group order: G completions per task in a row)."""
        tokens = completion_tokens if completion_tokens is not None else [0] * len(completions)
        given = prompt_tokens if prompt_tokens is not None else [0] * len(completions)
        return self._log(
            step,
            tasks,
            [[{"role": "user", "content": p}] for p in prompts],
            [
                [
                    Turn(
                        index=0,
                        assistant={"role": "assistant", "content": c},
                        prompt_tokens=p,
                        completion_tokens=n,
                    )
                ]
                for c, n, p in zip(completions, tokens, given, strict=True)
            ],
            verdicts,
            end_reason="completion",
        )

    def quarantined_tasks(self) -> set[str]:
        """Task ids an auditor has taken out of training in this run's store (labels given in
        ``referee audit`` or the dashboard while the run goes on count from the next step)."""
        from referee.track.audit import quarantined_task_ids

        return quarantined_task_ids(self.store)

    def log_conversations(
        self,
        step: int,
        tasks: Sequence[Task],
        prompts: Sequence[Sequence[Mapping[str, Any]]],
        conversations: Sequence[Sequence[Mapping[str, Any]]],
        verdicts: Sequence[Verdict | None],
        *,
        sandbox: Sequence[SandboxUsage] | None = None,
    ) -> list[Alert]:
        """One step of multi-turn episodes: the prompt messages, then what TRL's tool loop built
        (assistant messages, each followed by the tool results it caused). ``sandbox``: what
        each episode's sandbox runs cost (tool calls and verification: ``TRLEnvironment.sandbox``);
        without it, the verdict's own."""
        all_turns = []
        for messages in conversations:
            turns: list[Turn] = []
            for m in messages:
                message = dict(m)
                if message.get("role") == "assistant" or not turns:
                    turns.append(Turn(index=len(turns), assistant=message))
                else:
                    turns[-1].observations.append(message)
            all_turns.append(turns)
        prompt_messages = [[dict(m) for m in p] for p in prompts]
        return self._log(
            step, tasks, prompt_messages, all_turns, verdicts, end_reason="episode",
            sandbox=sandbox,
        )  # fmt: skip

    def _log(
        self,
        step: int,
        tasks: Sequence[Task],
        prompts: Sequence[list[dict[str, Any]]],
        turns: Sequence[list[Turn]],
        verdicts: Sequence[Verdict | None],
        *,
        end_reason: str,
        sandbox: Sequence[SandboxUsage] | None = None,
    ) -> list[Alert]:
        """The step's trajectories (G per task, numbered in order) to the tracker, with the
        held-out pass rate that arrived since the last step."""
        now = time.time()
        trajectories = []
        index: dict[str, int] = {}
        usages: Sequence[SandboxUsage | None] = (
            sandbox if sandbox is not None else [v.sandbox if v else None for v in verdicts]
        )
        rows = zip(tasks, prompts, turns, verdicts, usages, strict=True)
        for task, prompt, task_turns, verdict, usage in rows:
            index[task.id] = index.get(task.id, -1) + 1
            trajectories.append(
                Trajectory(
                    run_id=self.run_id,
                    task_id=task.id,
                    split=task.split,
                    policy=self.policy,
                    env=self.env,
                    group_id=f"{self.run_id}:{step}:{task.id}",
                    sample_index=index[task.id],
                    step=step,
                    messages=prompt,
                    turns=task_turns,
                    verdict=verdict,
                    end_reason=end_reason,
                    started_at=now,
                    finished_at=now,
                    cost=Cost.of(
                        usage,
                        wall_s=verdict.timings.get("total_s", 0.0) if verdict is not None else 0.0,
                        prompt_tokens=sum(t.prompt_tokens for t in task_turns),
                        completion_tokens=sum(t.completion_tokens for t in task_turns),
                    ),
                )
            )
            self.ledger.add(trajectories[-1].cost)
        rate, n = self._heldout if self._heldout else (None, None)
        self._heldout = None
        alerts = self.tracker.log(trajectories, step, heldout_pass_rate=rate, heldout_n=n)
        self.alerts += alerts
        return alerts

    def close(self, status: str = "finished", stop: BudgetStop | None = None) -> None:
        """End the run (``stop``: why it stopped early, recorded with it) and close the store."""
        self.store.end_run(self.run_id, status, None if stop is None else stop.model_dump())
        self.store.close()
