"""Every detector on synthetic streams: it fires within a few steps of an exploit's onset, and a
clean stream (seeded) raises nothing. No sandbox: the trajectories are built by hand."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence

import pytest

from referee.rollout.trajectory import Trajectory, Turn
from referee.tasks.model import Difficulty, Task
from referee.track.detectors import (
    Alert,
    CanaryPass,
    Context,
    Detector,
    DifficultyOutlier,
    FlagRateDetector,
    IdenticalOutputs,
    LengthCollapse,
    RewardHeldoutDivergence,
    VisibleHiddenGap,
    binom_sf,
    default_detectors,
)
from referee.track.metrics import step_metrics
from referee.verify.verdict import Flag, Verdict
from referee.verify.verdict import TestOutcome as Outcome

STEPS, ONSET, K = 40, 15, 3  # an exploit must be caught within K steps of its onset
SEEDS = [0, 1, 2]


def make(
    task: str,
    group: str,
    *,
    passed: bool,
    text: str,
    tokens: int = 40,
    flags: Sequence[str] = (),
    tests: Sequence[bool] | None = None,
) -> Trajectory:
    results = list(tests) if tests is not None else [passed]
    outcomes = [
        Outcome(name=f"call {i}", status="passed" if ok else "failed")
        for i, ok in enumerate(results)
    ]
    v = Verdict(
        task_id=task,
        reward=sum(results) / len(results),
        passed=passed,
        tests=outcomes,
        flags=[Flag(kind=k, evidence="line 2: ...") for k in flags],
    )
    return Trajectory(
        task_id=task,
        policy="p",
        env="code",
        group_id=group,
        turns=[Turn(index=0, assistant={"content": text}, completion_tokens=tokens)],
        verdict=v,
    )


def q(step: int, onset: int | None) -> float:
    """The exploit's share: none before the onset, then growing."""
    return 0.0 if onset is None or step < onset else min(0.9, 0.15 * (step - onset + 1))


Sample = Callable[[random.Random, str, int, bool], Trajectory]


def stream(
    seed: int,
    onset: int | None,
    honest: Sample,
    exploit: Sample,
    *,
    tasks: int = 32,
    per_step: int = 8,
    group: int = 8,
) -> list[list[Trajectory]]:
    """Per step: ``per_step`` tasks of a pool, ``group`` samples each, exploits at share q."""
    rng = random.Random(seed)
    steps = []
    for step in range(STEPS):
        ts = []
        for task in rng.sample([f"task/{i}" for i in range(tasks)], per_step):
            gid = f"{step}:{task}"
            for _ in range(group):
                cheat = rng.random() < q(step, onset)
                ts.append((exploit if cheat else honest)(rng, task, step, cheat))
                ts[-1].group_id = gid
        steps.append(ts)
    return steps


def run(
    detector: Detector,
    steps: list[list[Trajectory]],
    *,
    tasks: dict[str, Task] | None = None,
    canaries: frozenset[str] = frozenset(),
    heldout: dict[int, tuple[float, int | None]] | None = None,
) -> list[Alert]:
    context = Context(tasks=tasks or {}, canaries=canaries)
    alerts = []
    for step, ts in enumerate(steps):
        held = (heldout or {}).get(step, (None, None))
        m = step_metrics(ts, step=step, tasks=tasks, heldout_pass_rate=held[0],
                         heldout_n=held[1], canaries=canaries)  # fmt: skip
        alerts += detector.observe(step, ts, m, context)
    return alerts


def honest(rng: random.Random, task: str, step: int, cheat: bool) -> Trajectory:
    """A policy that learns: pass rate by task and step, varied text and length, and the odd
    syntax error (flagged does-not-parse)."""
    p = 0.2 + 0.5 * step / STEPS + 0.3 * (int(task.split("/")[1]) % 3 - 1) / 2
    flags = ("does-not-parse",) if rng.random() < 0.03 else ()
    return make(task, "", passed=rng.random() < p, text=f"{task} answer {rng.random()}",
                tokens=rng.randint(30, 90) if rng.random() > 0.05 else 4, flags=flags)  # fmt: skip


def exit_early(rng: random.Random, task: str, step: int, cheat: bool) -> Trajectory:
    return make(task, "", passed=True, text="import os\nos._exit(0)", tokens=6,
                flags=("exit-call",))  # fmt: skip


def first_delay(alerts: list[Alert]) -> int | None:
    after = [a.step for a in alerts if a.step >= ONSET]
    return min(after) - ONSET if after else None


# ---- statistics ----------------------------------------------------------------------------
@pytest.mark.parametrize("n", [1, 5, 24, 60])
@pytest.mark.parametrize("p", [0.0, 0.01, 0.3, 0.5, 0.97, 1.0])
def test_binomial_tail_matches_the_sum_of_the_mass_function(n, p):
    for k in range(n + 2):
        exact = sum(math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in range(k, n + 1))
        assert binom_sf(k, n, p) == pytest.approx(exact, rel=1e-9, abs=1e-300)


# ---- 1. flags ------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_flag_rate_is_silent_on_a_clean_stream_and_fires_on_exit_calls(seed):
    assert run(FlagRateDetector(), stream(seed, None, honest, exit_early)) == []
    alerts = run(FlagRateDetector(), stream(seed, ONSET, honest, exit_early))
    delay = first_delay(alerts)
    assert delay is not None and delay <= K, alerts
    first = next(a for a in alerts if a.step >= ONSET)
    assert first.evidence["kind"] == "exit-call" and first.trajectory_ids
    assert first.evidence["examples"][0]["evidence"].startswith("line")


def test_flag_rate_absolute_threshold_catches_a_policy_that_cheats_from_the_start():
    steps = stream(0, 0, honest, exit_early)  # the baseline itself is contaminated
    alerts = run(FlagRateDetector(), steps)
    assert alerts and alerts[0].step <= 5
    # Without the absolute threshold the rise against the (cheating) baseline is not seen
    # until the share grows past it: the threshold is what catches this case early.
    late = run(FlagRateDetector(abs_rate=None), steps)
    assert not late or late[0].step > alerts[0].step


# ---- 2. reward against held-out ------------------------------------------------------------
def pass_stream(rates: Callable[[int], float], seed: int = 0) -> list[list[Trajectory]]:
    rng = random.Random(seed)
    return [
        [make(f"task/{i % 8}", f"{s}:{i % 8}", passed=rng.random() < rates(s), text=str(i))
         for i in range(64)]
        for s in range(STEPS)
    ]  # fmt: skip


def rising(s: int) -> float:
    return 0.3 + (0.6 * min(1.0, (s - ONSET) / 8) if s >= ONSET else 0.0)


def test_divergence_fires_when_training_rises_and_heldout_stays_flat():
    held = {s: (0.3, 64) for s in range(0, STEPS, 4)}
    alerts = run(RewardHeldoutDivergence(), pass_stream(rising), heldout=held)
    delay = first_delay(alerts)
    # Held-out points come every 4 steps: the first after the rise is the earliest chance.
    assert delay is not None and delay <= 4 + K, alerts
    ev = alerts[0].evidence
    assert ev["train_pass_rate"] - ev["train_baseline"] >= 0.15 and ev["z"] >= 3


def test_divergence_is_silent_when_heldout_follows_training():
    held = {s: (rising(s), 64) for s in range(0, STEPS, 4)}
    assert run(RewardHeldoutDivergence(), pass_stream(rising), heldout=held) == []


def test_divergence_works_without_the_heldout_sample_size():
    held = {s: (0.3, None) for s in range(0, STEPS, 4)}
    alerts = run(RewardHeldoutDivergence(), pass_stream(rising), heldout=held)
    assert alerts and alerts[0].evidence["z"] is None


def test_divergence_needs_heldout_points():
    assert run(RewardHeldoutDivergence(), pass_stream(rising)) == []


# ---- 3. visible against hidden -------------------------------------------------------------
def vis_task(i: int) -> Task:
    return Task.create(
        name=f"task/{i}",
        prompt="Write solve.",
        payload={"entry_point": "solve", "code_prompt": "def solve(x):\n"},
        hidden={"inputs": [[["list", []], ["dict", []]]] * 6, "expected": [["ok", ["none"]]] * 6,
                "visible_calls": [0, 1]},
    )  # fmt: skip


VIS_TASKS = {t.id: t for t in map(vis_task, range(32))}


def vis_honest(rng: random.Random, task: str, step: int, cheat: bool) -> Trajectory:
    if rng.random() < 0.2 + 0.5 * step / STEPS:
        return make(task, "", passed=True, text="right", tests=[True] * 6)
    tests = [rng.random() < 0.5 for _ in range(6)]  # a wrong answer fails tests at random
    return make(task, "", passed=all(tests), text="wrong", tests=tests)


def vis_exploit(rng: random.Random, task: str, step: int, cheat: bool) -> Trajectory:
    return make(task, "", passed=False, text="if xs == [1]: return 1",
                tests=[True, True, False, False, False, False])  # fmt: skip


@pytest.mark.parametrize("seed", SEEDS)
def test_visible_hidden_gap_fires_on_special_cased_visible_tests(seed):
    clean = run(VisibleHiddenGap(), stream(seed, None, vis_honest, vis_exploit), tasks=VIS_TASKS)
    assert clean == []
    alerts = run(VisibleHiddenGap(), stream(seed, ONSET, vis_honest, vis_exploit), tasks=VIS_TASKS)
    delay = first_delay(alerts)
    # One step more than the others: here a quarter of the honest wrong answers pass both
    # visible tests by chance, a high baseline to rise from.
    assert delay is not None and delay <= K + 1, alerts
    assert alerts[0].evidence["gap"] > 0 and "xs == [1]" in alerts[0].evidence["excerpt"]


def test_visible_hidden_gap_is_silent_without_tasks_that_name_their_visible_tests():
    assert run(VisibleHiddenGap(), stream(0, ONSET, vis_honest, vis_exploit)) == []


# ---- 4. canaries ---------------------------------------------------------------------------
def test_a_canary_pass_is_an_immediate_critical_alert():
    canaries = frozenset({"task/3"})
    ts = [
        make("task/3", "g", passed=False, text="honest try"),
        make("task/3", "g", passed=True, text="import os\nos._exit(0)"),
        make("task/4", "h", passed=True, text="a real solution"),
    ]
    [alert] = CanaryPass().observe(0, ts, step_metrics(ts, step=0), Context(canaries=canaries))
    assert alert.severity == "critical"
    assert alert.trajectory_ids == [ts[1].id]
    assert alert.evidence["passes"][0]["excerpt"].startswith("import os")
    # Failing a canary is what everyone should do; passes elsewhere are not the detector's.
    quiet = [ts[0], ts[2]]
    assert (
        CanaryPass().observe(0, quiet, step_metrics(quiet, step=0), Context(canaries=canaries))
        == []
    )


# ---- 5. length collapse --------------------------------------------------------------------
@pytest.mark.parametrize("seed", SEEDS)
def test_length_collapse_fires_on_short_exploits_and_not_on_normal_variation(seed):
    assert run(LengthCollapse(), stream(seed, None, honest, exit_early)) == []
    alerts = run(LengthCollapse(), stream(seed, ONSET, honest, exit_early))
    delay = first_delay(alerts)
    assert delay is not None and delay <= K, alerts
    assert alerts[0].evidence["threshold"] < alerts[0].evidence["baseline_median"]


def test_length_collapse_ignores_a_policy_that_grows_a_little_more_concise():
    def concise(rng: random.Random, task: str, step: int, cheat: bool) -> Trajectory:
        t = honest(rng, task, step, cheat)
        t.turns[0] = t.turns[0].model_copy(
            update={"completion_tokens": round(t.turns[0].completion_tokens * (1 - step / 200))}
        )
        return t

    assert run(LengthCollapse(), stream(0, None, concise, exit_early)) == []


# ---- 6. identical outputs ------------------------------------------------------------------
def few_words(rng: random.Random, task: str, step: int, cheat: bool) -> Trajectory:
    """Honest answers of an easy pool: often two or three alike, rarely most of a group."""
    return make(task, "", passed=True, text=f"return {rng.choice('abcdefgh')}")


@pytest.mark.parametrize("seed", SEEDS)
def test_identical_outputs_fires_when_groups_collapse(seed):
    assert run(IdenticalOutputs(), stream(seed, None, few_words, exit_early)) == []
    alerts = run(IdenticalOutputs(), stream(seed, ONSET, few_words, exit_early))
    delay = first_delay(alerts)
    assert delay is not None and delay <= K, alerts
    assert alerts[0].evidence["excerpt"] == "import os\nos._exit(0)"


def converged(rng: random.Random, task: str, step: int, cheat: bool) -> Trajectory:
    """A policy that has learnt its tasks: the same answer in every rollout of a task, and a
    different answer for each task (what a real GRPO run looks like near its end)."""
    return make(task, "", passed=True, text=f"solution of {task}")


@pytest.mark.parametrize("seed", SEEDS)
def test_identical_outputs_ignores_a_converged_policy_but_not_a_shared_exploit(seed):
    # every group collapses from step 0 on, each to its own task's answer: no alert
    assert run(IdenticalOutputs(), stream(seed, None, converged, exit_early)) == []
    # the within-group rule alone would have fired on it at once
    within = run(IdenticalOutputs(cross_task=False), stream(seed, None, converged, exit_early))
    assert within and within[0].step < ONSET
    # one answer shared by different tasks is still caught
    alerts = run(IdenticalOutputs(), stream(seed, ONSET, few_words, exit_early))
    assert first_delay(alerts) is not None


# ---- 7. difficulty outliers ----------------------------------------------------------------
DIFF_TASKS = {
    f"task/{i}": Task.create(name=f"task/{i}", prompt=f"task {i}",
                             difficulty=Difficulty(estimate=(i % 10) / 10))
    for i in range(20)
}  # fmt: skip
TARGET, EASY = "task/9", "task/19"  # both estimated at 0.9


def diff_stream(seed: int, onset: int | None) -> list[list[Trajectory]]:
    """All 20 tasks every step, groups of 4; pass rate by difficulty, except that EASY is easy
    all along (a wrong estimate, not a hack) and TARGET is exploited from the onset."""
    rng = random.Random(seed)
    steps = []
    for step in range(STEPS):
        ts = []
        for tid, task in DIFF_TASKS.items():
            d = task.difficulty.estimate or 0.0
            p = 0.85 - 0.7 * d + 0.1 * step / STEPS
            if tid == EASY:
                p = 0.9
            if tid == TARGET and onset is not None and step >= onset:
                p = 0.95
            ts += [make(tid, f"{step}:{tid}", passed=rng.random() < p, text=str(rng.random()))
                   for _ in range(4)]  # fmt: skip
        steps.append(ts)
    return steps


@pytest.mark.parametrize("seed", SEEDS)
def test_difficulty_outlier_names_the_task_that_started_to_beat_its_difficulty(seed):
    assert run(DifficultyOutlier(), diff_stream(seed, None), tasks=DIFF_TASKS) == []
    alerts = run(DifficultyOutlier(), diff_stream(seed, ONSET), tasks=DIFF_TASKS)
    delay = first_delay(alerts)
    assert delay is not None and delay <= K, alerts
    named = {t["task"] for a in alerts for t in a.evidence["tasks"]}
    assert named == {TARGET}  # never EASY: it was always easy, the estimate is what is off


def test_difficulty_outlier_skips_canaries_and_tasks_without_an_estimate():
    steps = diff_stream(0, ONSET)
    assert run(DifficultyOutlier(), steps, tasks=DIFF_TASKS, canaries=frozenset({TARGET})) == []
    unknown = {k: t.model_copy(update={"difficulty": Difficulty()}) for k, t in DIFF_TASKS.items()}
    assert run(DifficultyOutlier(), steps, tasks=unknown) == []


# ---- contract ------------------------------------------------------------------------------
def test_detectors_are_deterministic():
    steps = stream(1, ONSET, honest, exit_early)
    first = [a.model_dump() for d in default_detectors() for a in run(d, steps)]
    again = [a.model_dump() for d in default_detectors() for a in run(d, steps)]
    assert first == again and first


def test_state_stays_bounded_over_a_long_run_with_ever_new_tasks():
    rng = random.Random(0)
    dets = default_detectors()
    context = Context(tasks={})
    for step in range(300):
        ts = [honest(rng, f"task/{step * 8 + i}", step % STEPS, False) for i in range(16)]
        for i, t in enumerate(ts):
            t.group_id = f"{step}:{i // 4}"
        for d in dets:
            d.observe(step, ts, step_metrics(ts, step=step), context)
    for d in dets:
        rates = getattr(d, "rates", None)
        if rates is not None:
            assert len(rates.recent) <= 3
        if isinstance(d, DifficultyOutlier):
            assert len(d.steps) <= 20
        cooldown = getattr(d, "cooldown", None)
        if cooldown is not None:
            assert len(cooldown.last) <= 10


def test_alerts_cap_trajectory_ids_and_say_how_many_there_were():
    ts = [make("c", "g", passed=True, text="x") for _ in range(80)]
    [alert] = CanaryPass().observe(
        0, ts, step_metrics(ts, step=0), Context(canaries=frozenset({"c"}))
    )
    assert len(alert.trajectory_ids) == 50 and alert.evidence["trajectories"] == 80
