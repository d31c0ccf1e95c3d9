"""The multi-turn environment: a scripted operator solves a runaway-process task end to end
through RolloutRunner, refusals outside the manifest are recorded and fail the task, dry runs
change nothing, and restore brings back the files and reboots the services."""

from __future__ import annotations

import asyncio
import json
import os
import re
import time
from typing import Any

import pytest

from referee.domains.shell.env import ShellEnv
from referee.envs import make_env
from referee.policy.scripted import ScriptedPolicy
from referee.rollout.runner import RolloutRunner


def call(name: str, **arguments: Any) -> dict[str, Any]:
    fn = {"name": name, "arguments": json.dumps(arguments)}
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "type": "function", "function": fn}],
    }


def operator(messages: list[dict[str, Any]], tools: Any) -> dict[str, Any]:
    """Finds the process holding a spool file open, stops it, removes the file, submits."""
    turn = sum(m["role"] == "assistant" for m in messages)
    last = str(messages[-1].get("content", ""))
    if turn == 0:
        return call("run", command="du -a var | sort -n | tail -5")
    if turn == 1:
        return call("run", command="find /proc/[0-9]*/fd -lname '*spool*' 2>/dev/null")
    if turn == 2:
        pid = int(re.search(r"/proc/(\d+)/fd", last).group(1))  # type: ignore[union-attr]
        return call("run", command=f"readlink /proc/{pid}/fd/* | grep spool; echo PID={pid}")
    if turn == 3:
        path = re.search(r"/workspace/(\S+)", last).group(1)  # type: ignore[union-attr]
        pid = int(re.search(r"PID=(\d+)", last).group(1))  # type: ignore[union-attr]
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "a",
                    "type": "function",
                    "function": {
                        "name": "signal_process",
                        "arguments": json.dumps({"pid": pid, "signal": "TERM"}),
                    },
                },
                {
                    "id": "b",
                    "type": "function",
                    "function": {
                        "name": "run",
                        "arguments": json.dumps({"command": f"sleep 0.3; rm -f {path}"}),
                    },
                },
            ],
        }
    return call("submit")


def test_a_scripted_operator_solves_a_runaway_task_through_the_rollout_runner(
    sandbox, family_tasks
):
    task = family_tasks["ops-runaway-process"]
    runner = RolloutRunner(
        lambda: make_env("shell", sandbox=sandbox), ScriptedPolicy(operator), max_infra_retries=0
    )
    [traj] = runner.run_sync([task])
    assert traj.error is None, traj.error
    assert traj.end_reason == "submitted" and len(traj.turns) == 5
    assert traj.passed and traj.reward == 1.0, traj.verdict
    assert traj.turns[0].observations[0]["content"].endswith("[exit 0]")


def test_actions_outside_the_manifest_are_refused_recorded_and_fail(sandbox, family_tasks):
    async def episode() -> tuple[list[str], Any, ShellEnv]:
        env = ShellEnv(sandbox=sandbox)
        task = family_tasks["ops-runaway-process"]
        await env.reset(task)
        answers = []
        for message in [
            call("signal_process", pid=1, signal="KILL"),
            call("write_file", path="etc/passwd", content="root::0:0::/:/bin/sh\n"),
            call("run", command="python3 -c 'print(1)'"),
            call("run", command="echo x >> etc/passwd"),  # allowed, but the kernel says EROFS
        ]:
            result = await env.step(message)
            answers.append(result.observations[0]["content"])
        verdict = await env.verify()
        await env.close()
        return answers, verdict, env

    answers, verdict, env = asyncio.run(episode())
    assert all(a.startswith("refused:") for a in answers[:3]), answers
    assert "Read-only file system" in answers[3]
    assert [(r.tool, r.harmful) for r in env.refusals] == [
        ("signal_process", True),
        ("write_file", True),
        ("run", False),
    ]
    assert len([f for f in verdict.flags if f.kind == "manifest-refusal"]) == 3
    manifest = next(t for t in verdict.tests if t.name == "stayed within the manifest")
    assert manifest.status == "failed" and not verdict.passed


def test_dry_run_changes_nothing_and_restore_reboots_the_system(sandbox, family_tasks):
    async def episode() -> tuple[str, bool, bool, bool]:
        env = ShellEnv(sandbox=sandbox)
        task = family_tasks["ops-permissions"]
        await env.reset(task)
        ref = task.hidden["reference"].replace("\n", "; ")
        dry = (await env.step(call("dry_run", command=ref))).observations[0]["content"]
        after_dry = (await env.verify()).passed
        await env.reset(task)
        snap = await env.snapshot()
        await env.step(call("run", command=ref))
        fixed = (await env.verify()).passed
        await env.restore(snap)
        restored = (await env.verify()).passed
        await env.close()
        return dry, after_dry, fixed, restored

    dry, after_dry, fixed, restored = asyncio.run(episode())
    assert "~ srv/reports" in dry and "path(s) would change" in dry
    assert not after_dry and fixed and not restored


def test_a_dry_run_reads_as_a_run_and_leaves_no_file_or_process(sandbox, family_tasks):
    # The dry run is a one-shot sandbox on a copy of the files (RESULTS §44): the command's
    # output and status read as the session's `run` gives them, and neither a file it writes
    # nor a job it leaves running reaches the session.
    command = "echo out; ls /nonexistent; touch dry-made; sleep 30 & false"

    async def episode() -> tuple[str, str, bool, str, str]:
        env = ShellEnv(sandbox=sandbox)
        await env.reset(family_tasks["ops-permissions"])
        assert env.episode is not None
        t0 = time.monotonic()
        dry = (await env.step(call("dry_run", command=command))).observations[0]["content"]
        assert time.monotonic() - t0 < 25  # the job left running did not hold the dry run
        made = (env.episode.workspace.root / "dry-made").exists()
        procs = env._list()
        real = await env.step(call("run", command="echo out; ls /nonexistent; false"))
        big = await env.step(call("dry_run", command="head -c 100000 /dev/zero | tr '\\0' x"))
        await env.close()
        return dry, real.observations[0]["content"], made, procs, big.observations[0]["content"]

    dry, real, made, procs, big = asyncio.run(episode())
    assert dry.startswith(real + "\n[dry run: 1 path(s) would change]"), dry
    assert "+ dry-made" in dry and "[exit 1]" in dry and "[stderr]" in dry
    assert not made and "sleep" not in procs
    assert big.startswith("x" * 32768 + "\n[exit 0 [output cut]]\n"), big[-200:]


def test_restore_reboots_the_services_as_new_processes(sandbox, family_tasks):
    async def episode() -> tuple[list[str], list[str], bool]:
        env = ShellEnv(sandbox=sandbox)
        await env.reset(family_tasks["ops-runaway-process"])
        assert env.episode is not None
        snap = await env.snapshot()
        before = dict(env.episode.tracked)  # identity: host pid and start time
        await env.restore(snap)
        after = dict(env.episode.tracked)
        running = env._list().splitlines()
        up = env.episode.session.up
        await env.close()
        changed = sorted(m for m in before if before[m] != after.get(m))
        return sorted(before), changed, up and bool(running)

    markers, changed, up = asyncio.run(episode())
    assert markers and changed == markers and up  # every service runs again, each a new process


def test_a_session_whose_channel_is_past_fd_1024_still_answers(sandbox, family_tasks):
    # A server holding a thousand live sessions has fds past 1024, where select() refuses.
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the hard limit on open files is {hard}, below the 1,200 this needs")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    fillers = []
    try:
        while (fd := os.open(os.devnull, os.O_RDONLY)) < 1030:
            fillers.append(fd)
        fillers.append(fd)

        async def episode() -> tuple[str, bool]:
            env = ShellEnv(sandbox=sandbox)
            task = family_tasks["ops-permissions"]
            await env.reset(task)
            out = (await env.step(call("run", command="echo past-1024"))).observations[0]
            await env.step(call("run", command=task.hidden["reference"].replace("\n", "; ")))
            passed = (await env.verify()).passed
            await env.close()
            return str(out["content"]), passed

        out, passed = asyncio.run(episode())
    finally:
        for fd in fillers:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert "past-1024" in out and passed
