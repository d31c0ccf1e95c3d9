"""Probe: verifiers 0.4.0 (v1) loads a taskset plugin by id, builds the environment, and scores a
rollout's trace with the task's own @vf.reward hooks — no model, no runtime, no network.

Run in the verifiers venv: .venvs/verifiers/bin/python tests/trainers/probes/verifiers_probe.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "plugins"))
T0 = time.perf_counter()
import verifiers  # noqa: E402
import verifiers.v1 as vf  # noqa: E402
from verifiers.v1.graph import MessageNode  # noqa: E402
from verifiers.v1.trace import AgentInfo, TraceTask  # noqa: E402
from verifiers.v1.utils.loaders import environment_class, load_taskset  # noqa: E402

print(
    f"import verifiers {verifiers.__version__} (v1): {time.perf_counter() - T0:.1f}s; "
    f"top-level names: {[n for n in dir(verifiers) if not n.startswith('_')]}"
)

# 1. The taskset by id, as `--env.taskset.id probe-taskset` resolves it.
ts = load_taskset(vf.TasksetConfig(id="probe-taskset"))
tasks = list(ts)
print(
    "1 load_taskset:", type(ts).__name__, [(t.data.idx, t.data.task_id, t.key[:8]) for t in tasks]
)
print("  environment_class:", environment_class("probe-taskset").__name__)
print("  views:", [t.data.task_id for t in ts.exclude(ids=["task-sub"])])

# 2. The environment around it (SingleAgentEnv: one `agent` seat). Building it needs no model;
# the default agent runtime is PrimeConfig (a hosted sandbox) — a local rollout would pick
# SubprocessConfig and a harness.
try:
    env = vf.SingleAgentEnv(vf.SingleAgentEnvConfig(taskset={"id": "probe-taskset"}))
    print("2 SingleAgentEnv built:", type(env.taskset).__name__, "agents:", list(env._agent_specs))
except Exception as e:
    print(f"2 SingleAgentEnv: {type(e).__name__}: {e}")


# 3. Score a finished rollout: a Trace with the prompt and a sampled assistant reply.
def trace_for(task, reply: str) -> vf.Trace:
    return vf.Trace(
        task=TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        agent=AgentInfo(config=vf.AgentConfig()),
        nodes=[
            MessageNode(message=vf.UserMessage(content=task.data.prompt_text)),
            MessageNode(parent=0, message=vf.AssistantMessage(content=reply), sampled=True),
        ],
    )


async def score(task, reply):
    tr = trace_for(task, reply)
    await task.score(tr)  # runtime=None: hooks that need a runtime are skipped
    return tr


t = time.perf_counter()
good = asyncio.run(score(tasks[0], "```python\ndef add(a, b):\n    return a + b\n```"))
bad = asyncio.run(score(tasks[0], ""))
print(f"3 Task.score: gold reward={good.reward} rewards={good.rewards} metrics={good.metrics}")
print(f"  empty reply reward={bad.reward}; {time.perf_counter() - t:.3f}s")
assert good.reward == 1.0 and bad.reward == 0.0
wire = good.model_dump(mode="json")
print("  trace wire keys:", sorted(wire)[:12], "...")
print(f"verifiers probe OK in {time.perf_counter() - T0:.1f}s")
