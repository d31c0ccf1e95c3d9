"""A verifiers v1 taskset plugin for the probe (no referee): one task type, one reward.

verifiers resolves `--env.taskset.id probe-taskset` by importing `probe_taskset` and taking the
one Taskset subclass its `__all__` exports (verifiers/v1/utils/loaders.py: _plugin_class).
"""

from __future__ import annotations

import verifiers.v1 as vf


class ProbeData(vf.TaskData):
    task_id: str
    split: str = "train"


class ProbeTask(vf.Task[ProbeData]):
    @vf.reward
    async def passed(self, task: ProbeData, trace: vf.Trace) -> float:
        return 1.0 if "return a + b" in trace.last_reply else 0.0

    @vf.metric
    async def reply_chars(self, trace: vf.Trace) -> float:
        return float(len(trace.last_reply))


class ProbeTaskset(vf.Taskset[ProbeTask]):
    def load(self):
        for tid in ("task-add", "task-sub"):
            yield ProbeTask(
                ProbeData(id=tid, task_id=tid, prompt=f"Write {tid[5:]}(a, b)."), self.config.task
            )


__all__ = ["ProbeTaskset"]
