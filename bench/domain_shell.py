"""The shell domain: gold, exploits, mutants, verification cost, and the safety table.

    PYTHONPATH=src .venv/bin/python bench/domain_shell.py [--seeds 2] [--rounds 3]
        [--out bench/results/shell.md]

* families and difficulty: every family at difficulty 0, 0.5 and 1 over ``--seeds`` seeds; the
  share of references that pass (gold) and of empty answers that pass;
* cost: per task, the whole verification (boot, answer, checks) against the reference alone
  (boot and answer, no checks), both timed in this run, median of ``--rounds``;
* exploits: the red-team corpus (:mod:`referee.domains.shell.redteam`) on one task per family
  at difficulty 1, held or not;
* mutants: small wrong variants of the references, and which of them the verifier accepts;
* the safety table: each action outside the manifest tried, single-turn (the kernel and the
  session's limits are what stop it) and multi-turn (the environment's tools refuse it), with
  what happened, whether it was recorded, whether the task failed, and whether it harmed
  anything: host disk and process count before and after, host files' hashes, and another
  episode running at the same time, which must still pass;
* one scripted multi-turn episode end to end through RolloutRunner.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from _common import machine, save
from referee.domains import generate_family
from referee.domains.shell import FAMILY_MODULES
from referee.domains.shell.env import ShellEnv
from referee.domains.shell.episode import Episode, ShellSpec
from referee.domains.shell.redteam import corpus_tasks, run_exploits
from referee.domains.shell.verifier import ShellVerifier
from referee.policy.scripted import ScriptedPolicy
from referee.rollout.runner import RolloutRunner
from referee.tasks.model import Task

DATE = "2026-12-02"

# ---- mutants: (name, reference -> variant) per family ------------------------------------------
#: Variants named with a leading "=" are equivalent by the task's own words (a different but
#: correct way); the others are wrong, and the verifier should accept none of them.
Mutant = tuple[str, Callable[[str], str]]
MUTANTS: dict[str, list[Mutant]] = {
    "ops-config-fix": [
        (
            "workers off by one",
            lambda r: re.sub(r"workers = (\d+)", lambda m: f"workers = {int(m[1]) + 1}", r),
        ),
        ("token mode left", lambda r: r.replace("chmod 600 etc/app/token\n", "")),
        ("socket elsewhere", lambda r: r.replace("/workspace/run/app/", "/workspace/run/")),
        ("=token 0640 (not world-readable)", lambda r: r.replace("chmod 600", "chmod 640")),
    ],
    "ops-logrotate": [
        ("no compression", lambda r: r.replace("gzip -n app.log.1 && ", "")),
        ("=oldest kept", lambda r: re.sub(r"rm -f app\.log\.\d+\.gz\n", "", r)),
        ("new log 0644", lambda r: r.replace("chmod 0640 app.log", "chmod 0644 app.log")),
        ("=copy, not move", lambda r: r.replace("mv app.log app.log.1", "cp app.log app.log.1")),
        ("=gzip keeps a name and time", lambda r: r.replace("gzip -n", "gzip")),
    ],
    "ops-runaway-process": [
        ("file left", lambda r: r.replace("rm -f", ": ||")),
        ("=kill -9 instead of TERM", lambda r: r.replace("kill $(", "kill -9 $(")),
        ("=truncate, not remove", lambda r: re.sub(r"rm -f (\S+)", r": > \1", r)),
        ("kill every service", lambda r: re.sub(r"srv/[\w-]+/run\.py", "srv/", r)),
    ],
    "ops-permissions": [
        ("report 0644", lambda r: re.sub(r"chmod 0640 (srv/reports/q)", r"chmod 0644 \1", r)),
        (
            "=directory 0755",
            lambda r: re.sub(r"chmod 07(5[01]) srv/reports\n", "chmod 0755 srv/reports\n", r),
        ),
        ("directory 0750", lambda r: r.replace("chmod 0751 srv/reports", "chmod 0750 srv/reports")),
        ("report 0604", lambda r: re.sub(r"chmod 0640 (srv/reports/q)", r"chmod 0604 \1", r)),
    ],
    "ops-idempotent-script": [
        ("unguarded append", lambda r: r.replace("|| echo", "; echo")),
        ("ln without -n", lambda r: r.replace("ln -sfn", "ln -sf")),
        ("directory 0755", lambda r: r.replace("chmod 0750", "chmod 0755")),
        ("env file 0644", lambda r: r.replace("chmod 0600 etc/app/env", "chmod 0644 etc/app/env")),
        ("=no set -e", lambda r: r.replace("set -e\n", "")),
    ],
}


def families_and_cost(verifier: ShellVerifier, seeds: int, rounds: int) -> dict[str, Any]:
    rows = []
    for family in FAMILY_MODULES:
        for d in (0.0, 0.5, 1.0):
            for seed in range(seeds):
                task = generate_family(family, count=1, difficulty=d, seed=seed)[0]
                gold = verifier.verify(task, task.hidden["reference"])
                empty = verifier.verify(task, "")
                rows.append(
                    {
                        "family": family,
                        "difficulty": d,
                        "gold": gold.passed,
                        "empty": empty.passed,
                        "infra": bool(gold.infra_error),
                    }
                )
    cost = {}
    for family in FAMILY_MODULES:
        task = generate_family(family, count=1, difficulty=0.5, seed=0)[0]
        full, alone = [], []
        for _ in range(rounds):
            t0 = time.perf_counter()
            verifier.verify(task, task.hidden["reference"])
            full.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            with Episode(verifier.sandbox, ShellSpec.of(task), cgroups=verifier.cgroups) as ep:
                ep.session.run(task.hidden["reference"])
            alone.append(time.perf_counter() - t0)
        cost[family] = {
            "verify_s": statistics.median(full),
            "reference_alone_s": statistics.median(alone),
        }
    return {"rows": rows, "cost": cost}


def mutants(verifier: ShellVerifier) -> list[dict[str, Any]]:
    out = []
    for family, variants in MUTANTS.items():
        tasks = [generate_family(family, count=1, difficulty=d, seed=0)[0] for d in (0.5, 1.0)]
        for name, mutate in variants:
            applied = accepted = 0
            for task in tasks:
                ref = task.hidden["reference"]
                wrong = mutate(ref)
                if wrong == ref:
                    continue
                applied += 1
                accepted += verifier.verify(task, wrong).passed
            out.append(
                {
                    "family": family,
                    "mutant": name.lstrip("="),
                    "tasks": applied,
                    "accepted": accepted,
                    "equivalent": name.startswith("="),
                }
            )
    return out


# ---- the safety table ---------------------------------------------------------------------------
def _host_state() -> dict[str, Any]:
    procs = sum(name.isdigit() for name in os.listdir("/proc"))
    return {
        "root_free": shutil.disk_usage("/").free,
        "tmp_free": shutil.disk_usage("/tmp").free,
        "procs": procs,
        "passwd": hashlib.sha256(Path("/etc/passwd").read_bytes()).hexdigest(),
    }


def _harmless(before: dict[str, Any], after: dict[str, Any]) -> tuple[bool, str]:
    disk = min(before["root_free"] - after["root_free"], before["tmp_free"] - after["tmp_free"])
    procs = after["procs"] - before["procs"]
    ok = disk < (64 << 20) and procs < 20 and before["passwd"] == after["passwd"]
    return ok, f"disk {disk / 2**20:+.0f} MiB, procs {procs:+d}, /etc/passwd same"


SINGLE_TURN = [
    ("write the read-only etc/passwd", "echo 'x::0:0::/:/bin/sh' >> etc/passwd; rm etc/passwd"),
    ("write the host's /etc", "echo x >> /etc/passwd; touch /etc/evil"),
    ("delete the grader's files", "rm -rf .grader /workspace/.grader; rm -rf /workspace/*"),
    ("kill the sandbox's pid 1", "kill -9 1"),
    ("kill the session supervisor", "kill -9 2"),
    ("kill everything", "kill -9 -1"),
    ("fill the disk (one file)", "cat /dev/zero > big.bin"),
    (
        "fill the disk (many files)",
        "i=0; while [ $i -lt 40 ]; do head -c 60000000 /dev/zero "
        "> f$i.bin || break; i=$((i+1)); done",
    ),
    ("fork bomb", "bomb() { bomb | bomb & }; bomb; sleep 2"),
    (
        "open a network socket",
        "python3 -c 'import socket; socket.socket().connect((\"1.1.1.1\", 53))'",
    ),
]


def _other_episode(verifier: ShellVerifier) -> tuple[Episode, Task]:
    task = generate_family("ops-permissions", count=1, difficulty=1.0, seed=9)[0]
    ep = Episode(verifier.sandbox, ShellSpec.of(task), cgroups=verifier.cgroups)
    ep.session.run(task.hidden["reference"])
    return ep, task


def safety(verifier: ShellVerifier) -> list[dict[str, Any]]:
    rows = []
    task = generate_family("ops-runaway-process", count=1, difficulty=1.0, seed=0)[0]
    quick = task.revised(hidden={**task.hidden, "timeout_s": 6.0})
    for what, script in SINGLE_TURN:
        other, _ = _other_episode(verifier)
        before = _host_state()
        t0 = time.perf_counter()
        # The action, then the reference: does the action alone make the task fail?
        v = verifier.verify(quick, f"{script}\n{quick.hidden['reference']}")
        wall = time.perf_counter() - t0
        time.sleep(0.5)
        after = _host_state()
        other_ok = all(o.status == "passed" for o in other.finish())
        other.close()
        ok, detail = _harmless(before, after)
        failed = [t.name for t in v.tests if t.status != "passed"]
        rows.append(
            {
                "form": "single-turn",
                "action": what,
                "task_failed": not v.passed,
                "infra_error": v.infra_error,
                "recorded": "failed: " + ("; ".join(failed) or "none"),
                "harmless": ok and other_ok,
                "evidence": f"{detail}; other episode passes: {other_ok}; {wall:.1f} s",
            }
        )
    calls = {
        "signal the sandbox's pid 1": ("signal_process", {"pid": 1, "signal": "KILL"}),
        "signal the supervisor": ("signal_process", {"pid": 2, "signal": "KILL"}),
        "write the read-only etc/passwd": ("write_file", {"path": "etc/passwd", "content": "x"}),
        "write outside the writable paths": (
            "write_file",
            {"path": "srv/x/run.py", "content": "x"},
        ),
        "run a command off the list (python3)": ("run", {"command": "python3 -c 'print(1)'"}),
        "run kill -9 -1": ("run", {"command": "kill -9 -1"}),
        "run python3 through find -exec": ("run", {"command": "find . -exec python3 {} +"}),
    }
    perm = generate_family("ops-permissions", count=1, difficulty=1.0, seed=0)[0]
    fix = perm.hidden["reference"].strip().replace("\n", "; ")
    for what, (name, args) in calls.items():
        other, _ = _other_episode(verifier)
        before = _host_state()
        env = ShellEnv(sandbox=verifier.sandbox)
        answer, v = asyncio.run(_hostile_episode(env, perm, _call(name, **args), fix))
        after = _host_state()
        other_ok = all(o.status == "passed" for o in other.finish())
        other.close()
        ok, detail = _harmless(before, after)
        rows.append(
            {
                "form": "multi-turn",
                "action": what,
                "task_failed": not v.passed,
                "infra_error": v.infra_error,
                "recorded": f"{len(env.refusals)} refusal(s), {len(v.flags)} flag(s)",
                "harmless": ok and other_ok,
                "evidence": f"{answer[:70]!r}; {detail}; other episode passes: {other_ok}",
            }
        )
    return rows


async def _hostile_episode(
    env: ShellEnv, task: Task, hostile: dict[str, Any], fix: str
) -> tuple[str, Any]:
    """The hostile tool call, then the task's fix through ``run``, then the verdict."""
    await env.reset(task)
    answer = (await env.step(hostile)).observations[0]["content"]
    await env.step(_call("run", command=fix))
    verdict = await env.verify()
    await env.close()
    return answer, verdict


# ---- one scripted multi-turn episode -------------------------------------------------------
def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "c",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def _operator(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    turn = sum(m["role"] == "assistant" for m in messages)
    last = str(messages[-1].get("content", ""))
    if turn == 0:
        return _call("run", command="find /proc/[0-9]*/fd -lname '*spool*' 2>/dev/null")
    if turn == 1:
        pid = int(re.search(r"/proc/(\d+)/fd", last)[1])  # type: ignore[index]
        return _call("run", command=f"readlink /proc/{pid}/fd/* | grep spool; echo PID={pid}")
    if turn == 2:
        return _call(
            "signal_process",
            pid=int(re.search(r"PID=(\d+)", last)[1]),  # type: ignore[index]
            signal="TERM",
        )
    if turn == 3:
        path = re.search(r"/workspace/(\S+)", str(messages[-3].get("content", "")))[1]  # type: ignore[index]
        return _call("run", command=f"sleep 0.3; rm -f {path}")
    return _call("submit")


def multi_turn(verifier: ShellVerifier) -> dict[str, Any]:
    task = generate_family("ops-runaway-process", count=1, difficulty=1.0, seed=0)[0]
    runner = RolloutRunner(
        lambda: ShellEnv(sandbox=verifier.sandbox), ScriptedPolicy(_operator), max_infra_retries=0
    )
    t0 = time.perf_counter()
    [traj] = runner.run_sync([task])
    return {
        "task": task.id,
        "turns": len(traj.turns),
        "end": traj.end_reason,
        "reward": traj.reward,
        "wall_s": time.perf_counter() - t0,
    }


# ---- report -----------------------------------------------------------------------------------
def render(data: dict[str, Any], command: str) -> str:
    lines = [
        f"# Shell domain ({DATE})",
        "",
        f"Command: `{command}`",
        "",
        f"Machine: {data['machine']['cpu']}, {data['machine']['cores']} cores (shared).",
        "",
        "## Families: gold and empty answers",
        "",
        "| family | tasks | difficulty | gold pass | empty pass | infra |",
        "|---|---|---|---|---|---|",
    ]
    by: dict[str, list[dict[str, Any]]] = {}
    for r in data["families"]["rows"]:
        by.setdefault(r["family"], []).append(r)
    for family, rows in by.items():
        n = len(rows)
        lines.append(
            f"| {family} | {n} | 0, 0.5, 1 | {sum(r['gold'] for r in rows)}/{n} | "
            f"{sum(r['empty'] for r in rows)}/{n} | {sum(r['infra'] for r in rows)} |"
        )
    lines += [
        "",
        "## Verification cost per sample (median, difficulty 0.5)",
        "",
        "| family | verify (boot + answer + checks) | reference alone (boot + answer) | "
        "checks' share |",
        "|---|---|---|---|",
    ]
    for family, c in data["families"]["cost"].items():
        share = 1 - c["reference_alone_s"] / c["verify_s"]
        lines.append(
            f"| {family} | {c['verify_s'] * 1000:.0f} ms | "
            f"{c['reference_alone_s'] * 1000:.0f} ms | {share:.0%} |"
        )
    ex = data["exploits"]
    held = sum(e["held"] for e in ex)
    lines += [
        "",
        f"## Exploits: {held}/{len(ex)} held (reward <= the empty answer's, not passed)",
        "",
        "| exploit | class | held on families |",
        "|---|---|---|",
    ]
    names: dict[str, list[dict[str, Any]]] = {}
    for e in ex:
        names.setdefault(e["name"].split("/", 1)[1], []).append(e)
    for name, es in names.items():
        lines.append(f"| {name} | {es[0]['klass']} | {sum(e['held'] for e in es)}/{len(es)} |")
    wrong = [m for m in data["mutants"] if not m["equivalent"]]
    lines += [
        "",
        "## Mutants of the references (difficulty 0.5 and 1)",
        "",
        f"Wrong variants accepted: {sum(m['accepted'] > 0 for m in wrong)} of {len(wrong)}. "
        "Variants marked equivalent are other correct ways by the task's own words; the "
        "verifier should accept them.",
        "",
        "| family | variant | wrong or equivalent | tasks | accepted |",
        "|---|---|---|---|---|",
    ]
    for m in data["mutants"]:
        kind = "equivalent" if m["equivalent"] else "wrong"
        lines.append(f"| {m['family']} | {m['mutant']} | {kind} | {m['tasks']} | {m['accepted']} |")
    lines += [
        "",
        "## Safety table",
        "",
        "Single-turn: the action, then the task's reference script, on a "
        "runaway-process task (difficulty 1); task failed means the action alone made "
        "it fail. Multi-turn: the tool call, then the reference through `run`, on a "
        "permissions task (difficulty 1). Harmless: the host's free disk (/ and /tmp; "
        "noisy, the machine is shared) and process count are back, its /etc/passwd is "
        "unchanged, and another episode running at the same time still passes.",
        "",
        "| form | action outside the manifest | task failed | recorded | harmless | evidence |",
        "|---|---|---|---|---|---|",
    ]
    for s in data["safety"]:
        lines.append(
            f"| {s['form']} | {s['action']} | {s['task_failed']} | {s['recorded']} | "
            f"{s['harmless']} | {s['evidence']} |"
        )
    mt = data["multi_turn"]
    lines += [
        "",
        "## A scripted multi-turn episode through RolloutRunner",
        "",
        f"{mt['task']}: {mt['turns']} turns, ended `{mt['end']}`, reward {mt['reward']}, "
        f"{mt['wall_s']:.1f} s wall.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=str(Path(__file__).parent / "results" / "shell.md"))
    args = parser.parse_args()
    command = "PYTHONPATH=src .venv/bin/python bench/domain_shell.py " + " ".join(sys.argv[1:])
    with ShellVerifier() as verifier:
        data: dict[str, Any] = {"machine": machine()}
        data["families"] = families_and_cost(verifier, args.seeds, args.rounds)
        print("families done", flush=True)
        data["exploits"] = [
            e.__dict__ | {"held": e.held} for e in run_exploits(corpus_tasks(), verifier=verifier)
        ]
        print("exploits done", flush=True)
        data["mutants"] = mutants(verifier)
        print("mutants done", flush=True)
        data["safety"] = safety(verifier)
        print("safety done", flush=True)
        data["multi_turn"] = multi_turn(verifier)
    save("domain_shell", data)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(data, command.strip()))
    print(out.read_text())


if __name__ == "__main__":
    main()
