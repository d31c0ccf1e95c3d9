"""Costs of rollouts (metered sandbox runs, tokens, wall time) and budgets that stop a batch."""

from __future__ import annotations

import asyncio
import time

import pytest

from referee.envs.base import ChatMessage, Environment, StepResult
from referee.errors import ConfigError
from referee.policy import Generation, Sampling
from referee.rollout import (
    BudgetExhausted,
    Cost,
    CostLedger,
    JsonlSink,
    RolloutRunner,
    RunBudget,
    read_jsonl,
)
from referee.sandbox import Limits
from referee.verify.verdict import Verdict
from tests.rollout.fakes import task

BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.2:\n    pass\n"


class SandboxEnv(Environment):
    """One turn; the step and the verification each run a program in the real sandbox (from a
    thread, as CodeEnv does)."""

    name = "sandboxed"

    def __init__(self, sandbox, program: str = BURN) -> None:  # type: ignore[no-untyped-def]
        self.sandbox = sandbox
        self.program = program
        self.task = None
        self._done = False

    async def reset(self, task):  # type: ignore[no-untyped-def]
        self.task = task
        return [{"role": "user", "content": task.user_prompt}]

    def tools(self):  # type: ignore[no-untyped-def]
        return []

    async def step(self, message: ChatMessage) -> StepResult:
        await asyncio.to_thread(self.sandbox.run_python, "print(1)")
        self._done = True
        return StepResult(observations=[], done=True, reason="answered")

    @property
    def done(self) -> bool:
        return self._done

    async def verify(self) -> Verdict:
        r = await asyncio.to_thread(
            self.sandbox.run_python, self.program, limits=Limits(timeout_s=10)
        )
        return Verdict(task_id=self.task.id, reward=1.0, passed=r.ok, verifier="burn")  # type: ignore[union-attr]


class Tokens:
    """A policy that reports fixed token counts."""

    name = "tokens"

    def __init__(self, prompt: int = 7, completion: int = 5, delay_s: float = 0.0) -> None:
        self.prompt, self.completion, self.delay_s = prompt, completion, delay_s

    async def generate(self, messages, *, tools=None, sampling=Sampling()):  # type: ignore[no-untyped-def]
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return Generation(
            message={"role": "assistant", "content": "42"},
            prompt_tokens=self.prompt,
            completion_tokens=self.completion,
        )


def test_every_trajectory_carries_its_metered_cost(sandbox) -> None:
    runner = RolloutRunner(lambda: SandboxEnv(sandbox), Tokens(), concurrency=2, group_size=2)
    ts = runner.run_sync([task("a"), task("b")])
    assert len(ts) == 4 and all(t.passed for t in ts)
    for t in ts:
        c = t.cost
        assert c.sandbox_runs == 2  # the step's run and the verification's
        assert c.sandbox_cpu_s >= 0.15, c  # the verification burns 0.2 s of CPU
        assert c.sandbox_wall_s >= c.sandbox_cpu_s * 0.5
        assert c.peak_memory_mb > 0
        assert (c.prompt_tokens, c.completion_tokens, c.tokens) == (7, 5, 12)
        assert c.wall_s == pytest.approx(t.timings["total_s"], abs=1e-5) and c.wall_s > 0
    total = runner.ledger.spent
    assert total.sandbox_runs == 8 and total.tokens == 48
    assert total.sandbox_cpu_s == pytest.approx(sum(t.cost.sandbox_cpu_s for t in ts), abs=1e-5)


def test_a_spent_token_budget_stops_the_batch_with_whole_records(tmp_path) -> None:
    # One at a time, 12 tokens each: the budget of 30 is spent after the third rollout.
    path = tmp_path / "t.jsonl"
    with JsonlSink(path) as sink:
        runner = RolloutRunner(
            lambda: _Plain(), Tokens(), concurrency=1, store=sink, budget=RunBudget(tokens=30)
        )
        with pytest.raises(BudgetExhausted) as caught:
            runner.run_sync([task(f"t{i}") for i in range(10)])
    stop = caught.value.stop
    assert (stop.reason, stop.budget, stop.limit, stop.spent) == ("budget", "tokens", 30, 36)
    assert "36 of 30 tokens" in str(caught.value)
    done = caught.value.completed
    assert len(done) == 3 and all(t.passed and t.cost.tokens == 12 for t in done)
    stored = read_jsonl(path)
    assert sorted(t.id for t in stored) == sorted(t.id for t in done)
    assert runner.ledger.rollouts == 3
    # Spent stays spent: the next batch starts nothing.
    with pytest.raises(BudgetExhausted) as again:
        runner.run_sync([task("late")])
    assert again.value.completed == []


def test_rollouts_in_flight_finish_when_the_wall_budget_runs_out() -> None:
    runner = RolloutRunner(
        lambda: _Plain(), Tokens(delay_s=0.3), concurrency=3, budget=RunBudget(wall_s=0.2)
    )
    t0 = time.monotonic()
    with pytest.raises(BudgetExhausted) as caught:
        runner.run_sync([task(f"t{i}") for i in range(9)])
    # The first three started before the budget was spent and finished whole; no others ran.
    assert len(caught.value.completed) == 3
    assert all(t.verdict is not None for t in caught.value.completed)
    assert caught.value.stop.budget == "wall_s" and caught.value.stop.spent >= 0.2
    assert time.monotonic() - t0 < 5


def test_a_cpu_budget_counts_sandbox_cpu(sandbox) -> None:
    # 0.1 ms of CPU-hours: spent by the first rollout's 0.2 s burn.
    runner = RolloutRunner(
        lambda: SandboxEnv(sandbox), Tokens(), concurrency=1, budget=RunBudget(cpu_hours=1e-4 / 3.6)
    )
    with pytest.raises(BudgetExhausted) as caught:
        runner.run_sync([task("a"), task("b"), task("c")])
    assert caught.value.stop.budget == "cpu_hours" and len(caught.value.completed) == 1


def test_costs_add_and_budgets_refuse_nonsense() -> None:
    a = Cost(sandbox_cpu_s=1, sandbox_runs=1, peak_memory_mb=20, prompt_tokens=3, bytes_stored=9)
    b = Cost(sandbox_cpu_s=2, sandbox_runs=2, peak_memory_mb=10, completion_tokens=4)
    s = a + b
    assert (s.sandbox_cpu_s, s.sandbox_runs, s.peak_memory_mb, s.tokens, s.bytes_stored) == (
        3, 3, 20, 7, 9,
    )  # fmt: skip
    assert Cost.total([a, b, a]).sandbox_runs == 4
    with pytest.raises(ConfigError, match="budget tokens must be positive"):
        RunBudget.of(tokens=0)
    ledger = CostLedger()
    ledger.add(a)
    assert ledger.exhausted() is None and ledger.status()["spent"]["tokens"] == 3


class _Plain(Environment):
    """One turn, no sandbox: passes on any answer."""

    name = "plain"

    def __init__(self) -> None:
        self.task = None
        self._done = False

    async def reset(self, task):  # type: ignore[no-untyped-def]
        self.task = task
        return [{"role": "user", "content": "?"}]

    def tools(self):  # type: ignore[no-untyped-def]
        return []

    async def step(self, message: ChatMessage) -> StepResult:
        self._done = True
        return StepResult(observations=[], done=True)

    @property
    def done(self) -> bool:
        return self._done

    async def verify(self) -> Verdict:
        return Verdict(task_id=self.task.id, reward=1.0, passed=True)  # type: ignore[union-attr]
