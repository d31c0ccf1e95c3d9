"""Benchmark of the toolworld domain: families, gold, exploits, verification cost, a scripted
multi-turn episode through RolloutRunner, and wrong-plan mutants of the references.

Run: ``PYTHONPATH=src python bench/domain_toolworld.py [--per-family 22] [--repeats 5]``.
Writes ``bench/results/toolworld.md`` (a markdown fragment) and prints it.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from referee.domains import generate_family, run_corpus
from referee.domains.toolworld.calls import parse_calls
from referee.domains.toolworld.families import FAMILIES
from referee.domains.toolworld.session import open_session
from referee.domains.toolworld.verifier import ToolworldVerifier
from referee.envs import make_env
from referee.policy.scripted import ScriptedPolicy
from referee.rollout.runner import RolloutRunner
from referee.tasks.model import Task

ROOT = Path(__file__).resolve().parent.parent
#: Calls that change the store or gate a change (a mutant drops or alters one of these).
ACTIONS = {
    "refund_order",
    "exchange_order",
    "cancel_order",
    "update_address",
    "create_event",
    "send_mail",
    "set_priority",
    "assign_team",
    "close_ticket",
    "confirm_with_user",
    "verify_identity",
}
GATES = {"confirm_with_user", "verify_identity"}
IDS = ("order_id", "ticket_id", "recipient_id", "customer_id", "duplicate_of", "new_product_id")


def mutants(task: Task) -> list[tuple[str, str]]:
    """(kind, answer) wrong variants of the reference plan."""
    plan = json.loads(task.hidden["reference"])
    out: list[tuple[str, list[dict[str, Any]]]] = []
    for i, c in enumerate(plan):
        if c["name"] in ACTIONS - GATES:
            out.append(("skip-step", plan[:i] + plan[i + 1 :]))
            out.append((f"repeat-step:{c['name']}", [*plan[: i + 1], c, *plan[i + 1 :]]))
        if c["name"] in GATES:
            out.append(("skip-confirmation", plan[:i] + plan[i + 1 :]))
        if c["name"] in ACTIONS:
            for key in IDS:
                if isinstance(c["arguments"].get(key), int):
                    for delta in (-1, 1):
                        m = copy.deepcopy(plan)
                        m[i]["arguments"][key] += delta
                        out.append(("wrong-id", m))
            if "attendee_ids" in c["arguments"]:
                m = copy.deepcopy(plan)
                m[i]["arguments"]["attendee_ids"] = c["arguments"]["attendee_ids"][:-1] or [2]
                out.append(("wrong-attendees", m))
            for key in ("amount_cents", "start_hour"):
                if key in c["arguments"]:
                    m = copy.deepcopy(plan)
                    m[i]["arguments"][key] -= 1
                    out.append(("wrong-value", m))
    if any(c["name"] == "refund_order" for c in plan):
        db = sqlite3.connect(":memory:")
        db.executescript(task.payload["init_sql"])
        done = {c["arguments"].get("order_id") for c in plan}
        other = next(
            (
                r
                for r in db.execute("SELECT id, paid_cents FROM orders WHERE status='delivered'")
                if r[0] not in done
            ),
            None,
        )
        if other:
            extra = {
                "name": "refund_order",
                "arguments": {"order_id": other[0], "amount_cents": other[1]},
            }
            out.append(("extra-refund", [*plan, extra]))
    return [(k, json.dumps(p)) for k, p in out]


def replay_only(task: Task) -> None:
    """The reference run against a fresh world, nothing judged (the cost floor)."""
    session = open_session(task)
    try:
        session.run_plan(parse_calls(task.hidden["reference"]))
    finally:
        session.close()


def refund_agent(messages: list[dict[str, Any]], tools: Any) -> Any:
    """A scripted agent reading the world's answers (see tests/domains/toolworld/test_env.py)."""
    request = next(m["content"] for m in messages if m["role"] == "user")
    results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]

    def call(name: str, **arguments: Any) -> dict[str, Any]:
        fn = {"name": name, "arguments": json.dumps(arguments)}
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": name, "type": "function", "function": fn}],
        }

    if not results:
        return call("find_customer", email=request.split("(")[1].split(")")[0])
    if len(results) == 1:
        return call("list_orders", customer_id=results[0]["customer_id"])
    if len(results) == 2:
        order = next(
            o
            for o in results[1]
            if f"order of {o['product']} delivered on {o['delivered_on']}" in request
        )
        return call("get_order", order_id=order["order_id"])
    if len(results) == 3:
        return call(
            "refund_order",
            order_id=results[2]["id"],
            amount_cents=results[2]["paid_cents"],
        )
    return "Done."


def imported_cost(repeats: int) -> dict[str, float]:
    from referee.tasks.imports import import_tasks
    from referee.tasks.model import read_tasks

    data = ROOT / "tests" / "domains" / "toolworld" / "data" / "library_rows.jsonl"
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        import_tasks("toolworld-rows", data, Path(d) / "t.jsonl")
        import_s = time.perf_counter() - t0
        task = read_tasks(Path(d) / "t.jsonl")[0]
    v = ToolworldVerifier()
    try:
        v.verify(task, task.hidden["reference"])  # warm the sandbox
        times = []
        for _ in range(repeats * 4):
            t0 = time.perf_counter()
            assert v.verify(task, task.hidden["reference"]).passed
            times.append(time.perf_counter() - t0)
    finally:
        v.close()
    return {"import_s": import_s, "verify_ms": 1000 * statistics.median(times)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-family", type=int, default=22)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "toolworld.md"))
    args = ap.parse_args()
    verifier = ToolworldVerifier()
    rows, mutant_rows = [], defaultdict(Counter)
    all_gold = all_empty = n_tasks = 0
    verify_ms, replay_ms = [], []
    accepted_by: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for family in FAMILIES:
        t0 = time.perf_counter()
        tasks = generate_family(family, count=args.per_family, seed=1000)
        gen_ms = 1000 * (time.perf_counter() - t0) / len(tasks)
        gold = sum(verifier.verify(t, t.hidden["reference"]).passed for t in tasks)
        empty = sum(verifier.verify(t, "").passed for t in tasks)
        steps = [t.difficulty.features["steps"] for t in tasks]
        for t in tasks:
            v_times, r_times = [], []
            for _ in range(args.repeats):  # both in the same run, interleaved
                s = time.perf_counter()
                verifier.verify(t, t.hidden["reference"])
                v_times.append(time.perf_counter() - s)
                s = time.perf_counter()
                replay_only(t)
                r_times.append(time.perf_counter() - s)
            verify_ms.append(1000 * statistics.median(v_times))
            replay_ms.append(1000 * statistics.median(r_times))
            for kind, answer in mutants(t):
                verdict = verifier.verify(t, answer)
                kind, _, tool = kind.partition(":")
                mutant_rows[kind]["total"] += 1
                mutant_rows[kind]["rejected"] += not verdict.passed
                if verdict.passed:
                    accepted_by[kind][tool or family] += 1
        units = len({t.provenance.unit for t in tasks})
        rows.append(
            (family, len(tasks), f"{min(steps):.0f}-{max(steps):.0f}", units, gold, empty, gen_ms)
        )
        all_gold += gold
        all_empty += empty
        n_tasks += len(tasks)
    verifier.close()
    exploits = run_corpus("toolworld")
    # A scripted multi-turn episode end to end through RolloutRunner.
    tasks = generate_family("shop-refund", count=8, difficulty=0.4, seed=77)
    runner = RolloutRunner(
        lambda: make_env("toolworld"), ScriptedPolicy(refund_agent), concurrency=2
    )
    t0 = time.perf_counter()
    trajectories = runner.run_sync(tasks)
    episode_ms = 1000 * (time.perf_counter() - t0) / len(tasks)
    episodes_passed = sum(t.passed for t in trajectories)
    imported = imported_cost(args.repeats)

    lines = [
        "## toolworld (agentic tool worlds)",
        "",
        f"Date 2026-12-02. Command: `PYTHONPATH=src python bench/domain_toolworld.py "
        f"--per-family {args.per_family} --repeats {args.repeats}` (2 cores shared with "
        f"other work: load average {os.getloadavg()[0]:.1f} at the end; the ms figures vary "
        "several-fold between runs on this machine).",
        "",
        "| family | tasks | reference steps | structures | gold passed | empty passed "
        "| generate ms/task |",
        "|---|---|---|---|---|---|---|",
        *[
            f"| {f} | {n} | {s} | {u} | {g}/{n} | {e}/{n} | {ms:.1f} |"
            for f, n, s, u, g, e, ms in rows
        ],
        "",
        f"Gold {all_gold}/{n_tasks} ({100 * all_gold / n_tasks:.0f}%), empty answer "
        f"{all_empty}/{n_tasks}. Difficulty 0..1 spread over 0, 0.1, ..., 1.",
        "",
        f"Exploits: {sum(o.held for o in exploits)}/{len(exploits)} held (reward <= the empty "
        f"answer's and not passed): "
        + ", ".join(f"{o.name} ({o.klass})" + ("" if o.held else " **NOT HELD**") for o in exploits)
        + ".",
        "",
        "| cost per episode (median of per-task medians) | ms |",
        "|---|---|",
        "| reference replayed on a fresh built-in world, nothing judged "
        f"| {statistics.median(replay_ms):.2f} |",
        "| verification (fresh world, replay, whole-store diff, assertions, policy) "
        f"| {statistics.median(verify_ms):.2f} |",
        "| scripted multi-turn episode through RolloutRunner (5 turns, verified), per episode "
        f"| {episode_ms:.1f} |",
        "| imported world (sandboxed tools, store read back read-only), verification "
        f"| {imported['verify_ms']:.1f} |",
        "",
        f"Scripted episodes passed: {episodes_passed}/{len(tasks)}. Import of the 2-row "
        f"library file (sandbox start, tool schemas, empty and reference episodes): "
        f"{imported['import_s']:.2f} s.",
        "",
        "| wrong-plan mutant | rejected |",
        "|---|---|",
        *[
            f"| {k} | {c['rejected']}/{c['total']} ({100 * c['rejected'] / c['total']:.0f}%) |"
            for k, c in sorted(mutant_rows.items())
        ],
        "",
    ]
    for kind, tools in sorted(accepted_by.items()):
        which = ", ".join(f"{t} x{n}" for t, n in tools.most_common())
        lines.append(f"Accepted {kind} mutants, by the call repeated or family: {which}.")
    if accepted_by:
        lines += [
            "",
            "A repeated refund, exchange or cancel is refused by the world (the order is no "
            "longer delivered or pending) and a repeated priority, team or address change sets "
            "the same value: the final store and the log's violations equal the reference's, "
            "so these mutants are equivalent, not misses. A repeated mail or event is a policy "
            "violation "
            "(duplicate-mail, double-booking) and is rejected.",
            "",
        ]
    text = "\n".join(lines)
    Path(args.out).write_text(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
