"""Probe: AReaL's AsyncRewardWrapper (process pool, timeout, retries) around a reward function,
and RLVRWorkflow.arun_episode with a fake inference engine — AReaL's own code, on the CPU.

Run in the areal venv: .venvs/areal/bin/python tests/trainers/probes/areal_probe.py
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
T0 = time.perf_counter()
import areal  # noqa: E402
from _tiny_tokenizer import tokenizer  # noqa: E402
from areal.api.cli_args import GenerationHyperparameters  # noqa: E402
from areal.api.io_struct import ModelResponse  # noqa: E402
from areal.api.reward_api import AsyncRewardWrapper  # noqa: E402
from areal.workflow.rlvr import RLVRWorkflow  # noqa: E402

print(
    f"import areal {areal.__version__} + reward_api + workflow.rlvr: {time.perf_counter() - T0:.1f}s"
)
SEEN: list = []


def reward_fn(prompt, completions, prompt_ids, completion_ids, **row):
    # Runs in a worker process: must be a picklable module-level function.
    return 1.0 if "return a + b" in completions else 0.0


def slow_reward(prompt, completions, prompt_ids, completion_ids, **row):
    time.sleep(3)
    return 1.0


def raising_reward(prompt, completions, prompt_ids, completion_ids, **row):
    raise KeyError("no such task: " + row.get("task_id", "?"))


def kwargs_reward(prompt, completions, prompt_ids, completion_ids, **row):
    return {"pid": os.getpid(), "kwargs": sorted(row)}


ROW = {
    "messages": [{"role": "user", "content": "Write add(a, b)."}],
    "task_id": "task-add",
    "split": "train",
    "query_id": "q0",
}
GOOD = "```python\ndef add(a, b):\n    return a + b\n```"


async def main():
    t = time.perf_counter()
    w = AsyncRewardWrapper(reward_fn, timeout_seconds=15, max_workers=2)
    r = await asyncio.gather(w("p", GOOD, [1], [2], **ROW), w("p", "", [1], [2], **ROW))
    print(
        f"1 AsyncRewardWrapper: gold={r[0]} empty={r[1]} ({time.perf_counter() - t:.2f}s incl. pool start)"
    )
    assert r == [1.0, 0.0]
    info = await AsyncRewardWrapper(kwargs_reward, max_workers=2)("p", GOOD, [1], [2], **ROW)
    print(f"  runs in pid {info['pid']} (probe pid {os.getpid()}); row kwargs {info['kwargs']}")
    t = time.perf_counter()
    r = await AsyncRewardWrapper(slow_reward, timeout_seconds=0.5, max_workers=2, max_retries=1)(
        "p", GOOD, [], []
    )
    print(
        f"2 timeout 0.5 s x 2 attempts on a 3 s fn -> {r!r} after {time.perf_counter() - t:.2f}s "
        "(the worker keeps running the call)"
    )
    try:
        await AsyncRewardWrapper(raising_reward, max_workers=2, max_retries=1)(
            "p", GOOD, [], [], **ROW
        )
    except Exception as e:
        print(f"3 a raising fn: retried, then re-raised to the workflow: {type(e).__name__}: {e}")

    # 4. RLVRWorkflow.arun_episode: the default single-turn workflow, fake engine.
    tok = tokenizer()

    class FakeEngine:
        async def agenerate(self, req):
            out = [*tok.encode(GOOD, add_special_tokens=False), tok.eos_token_id]
            return ModelResponse(
                input_tokens=req.input_ids,
                output_tokens=out,
                output_logprobs=[0.0] * len(out),
                output_versions=[0] * len(out),
                tokenizer=tok,
            )

    t = time.perf_counter()
    wf = RLVRWorkflow(
        reward_fn=f"{__name__}.reward_fn" if __name__ != "__main__" else reward_fn,
        gconfig=GenerationHyperparameters(max_new_tokens=64),
        tokenizer=tok,
    )
    res = await wf.arun_episode(FakeEngine(), ROW)
    print(
        f"4 RLVRWorkflow.arun_episode: rewards={res['rewards'].tolist()} keys={sorted(res)} "
        f"{time.perf_counter() - t:.2f}s"
    )
    assert res["rewards"].tolist() == [1.0]


asyncio.run(main())
print(f"areal probe OK in {time.perf_counter() - T0:.1f}s")
