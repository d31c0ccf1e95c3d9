"""Probe: veRL 0.9.1's own reward and agent-loop code paths run on this CPU with a dummy reward.

Run in the verl venv: .venvs/verl/bin/python tests/trainers/probes/verl_probe.py
No referee code here: it proves which trainer code paths a contract test can drive.
"""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
import time

sys.path.insert(0, os.path.dirname(__file__))
T0 = time.perf_counter()

import numpy as np  # noqa: E402
import torch  # noqa: E402
import verl  # noqa: E402
from _tiny_tokenizer import tokenizer  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from verl import DataProto  # noqa: E402

print(f"import verl {verl.__version__}, torch {torch.__version__}: {time.perf_counter() - T0:.1f}s")

# Rows as `referee export --format verl` writes them (src/referee/track/export.py: verl_rows).
ROWS = [
    {
        "data_source": "referee/code",
        "prompt": [{"role": "user", "content": "Write add(a, b)."}],
        "ability": "code",
        "reward_model": {"style": "rule", "ground_truth": "task-add"},
        "extra_info": {"index": 0, "task_id": "task-add", "split": "train"},
    },
    {
        "data_source": "referee/code",
        "prompt": [{"role": "user", "content": "Write add(a, b)."}],
        "ability": "code",
        "reward_model": {"style": "rule", "ground_truth": "task-add"},
        "extra_info": {"index": 1, "task_id": "task-add", "split": "train"},
    },
]
RESPONSES = ["```python\ndef add(a, b):\n    return a + b\n```", "I don't know."]
CALLS: list[dict] = []


def dummy_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
    CALLS.append(
        dict(
            data_source=data_source,
            solution_str=solution_str,
            ground_truth=ground_truth,
            extra_info=dict(extra_info or {}),
            kw=sorted(kw),
        )
    )
    return {"score": 1.0 if "return a + b" in solution_str else 0.0, "probe": 1}


def build_batch(tok) -> DataProto:
    """The tensors the rollout leaves in a batch: left-padded prompts, right-padded responses."""
    p_ids = [
        tok.apply_chat_template(r["prompt"], add_generation_prompt=True, tokenize=True)
        for r in ROWS
    ]
    p_ids = [list(x["input_ids"]) if hasattr(x, "keys") else list(x) for x in p_ids]
    r_ids = [tok.encode(s, add_special_tokens=False) for s in RESPONSES]
    P, R = max(map(len, p_ids)), max(map(len, r_ids))
    pad = tok.pad_token_id
    prompts = torch.tensor([[pad] * (P - len(x)) + x for x in p_ids])
    responses = torch.tensor([x + [pad] * (R - len(x)) for x in r_ids])
    mask = torch.tensor(
        [
            [0] * (P - len(a)) + [1] * len(a) + [1] * len(b) + [0] * (R - len(b))
            for a, b in zip(p_ids, r_ids, strict=True)
        ]
    )
    return DataProto.from_dict(
        tensors={
            "prompts": prompts,
            "responses": responses,
            "attention_mask": mask,
            "input_ids": torch.cat([prompts, responses], 1),
        },
        non_tensors={
            k: np.array([r[k] for r in ROWS], dtype=object)
            for k in ("data_source", "reward_model", "extra_info", "ability")
        },
    )


tok = tokenizer()

# 1. Legacy driver-side manager: verl/workers/reward_manager/naive.py (serial, main thread).
from verl.workers.reward_manager import NaiveRewardManager, get_reward_manager_cls  # noqa: E402

t = time.perf_counter()
mgr = NaiveRewardManager(
    tokenizer=tok, num_examine=0, compute_score=dummy_score, compute_score_timeout=5
)
out = mgr(build_batch(tok), return_dict=True)
rt = out["reward_tensor"]
print(
    "1 legacy NaiveRewardManager: per-row reward",
    rt.sum(-1).tolist(),
    "extra keys",
    sorted(out["reward_extra_info"]),
    f"{time.perf_counter() - t:.2f}s",
)
assert rt.sum(-1).tolist() == [1.0, 0.0]
assert CALLS[0]["solution_str"] == RESPONSES[0] and CALLS[0]["ground_truth"] == "task-add"
print("  compute_score got extra_info keys", sorted(CALLS[0]["extra_info"]))
print(
    "  legacy registry names:",
    sorted(
        n for n in ("naive", "batch", "prime", "dapo", "rate_limited") if get_reward_manager_cls(n)
    ),
)

# 2. The reward loop (default path in 0.9): RewardLoopWorker, as a plain object (veRL wraps it
# in ray.remote and calls compute_score_batch.remote(chunk)), configured like a user would:
# reward.custom_reward_function.path may be a file or `pkg://module.name`.
from verl.experimental.reward_loop.reward_loop import RewardLoopWorker  # noqa: E402
from verl.utils.ray_utils import get_event_loop  # noqa: E402

tmp = tempfile.mkdtemp()
tok.save_pretrained(os.path.join(tmp, "tok"))
sys.path.insert(0, tmp)
with open(os.path.join(tmp, "probe_reward.py"), "w") as f:
    f.write(
        textwrap.dedent("""
        import asyncio, threading
        def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
            return {"score": float("return a + b" in solution_str), "tasks": kw.get("tasks"),
                    "thread": threading.current_thread().name}
        async def async_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
            return {"score": float("return a + b" in solution_str),
                    "thread": threading.current_thread().name}
        async def slow_score(data_source, solution_str, ground_truth, extra_info=None, **kw):
            await asyncio.sleep(5)
            return 1.0
        def raises(data_source, solution_str, ground_truth, extra_info=None, **kw):
            raise KeyError("no such task: " + ground_truth)
    """)
    )


def config(manager: str, fn: str, path: str = "pkg://probe_reward", extra: dict | None = None):
    return OmegaConf.create(
        {
            "actor_rollout_ref": {
                "model": {"path": os.path.join(tmp, "tok"), "tokenizer_path": None}
            },
            "reward": {
                "num_workers": 1,
                "custom_reward_function": {
                    "path": path,
                    "name": fn,
                    "reward_kwargs": {"tasks": "tasks.jsonl"},
                },
                "reward_manager": {
                    "source": "register",
                    "name": manager,
                    "module": {"path": None, "name": "custom_reward_manager"},
                },
                "reward_model": {"enable": False, "enable_resource_pool": False},
                "sandbox_fusion": None,
                **(extra or {}),
            },
        }
    )


loop = get_event_loop()


def score(manager, fn, path="pkg://probe_reward", extra=None):
    t = time.perf_counter()
    worker = RewardLoopWorker(config(manager, fn, path, extra))
    res = loop.run_until_complete(worker.compute_score_batch(build_batch(tok)))
    return res, time.perf_counter() - t


res, dt = score("naive", "compute_score")
print(
    f"2a RewardLoopWorker(naive, sync fn via pkg://): {[r['reward_score'] for r in res]} "
    f"extra={res[0]['reward_extra_info']} {dt:.2f}s"
)
assert [r["reward_score"] for r in res] == [1.0, 0.0]
assert res[0]["reward_extra_info"]["tasks"] == "tasks.jsonl"  # reward_kwargs reach the function
res, dt = score("naive", "compute_score", path=os.path.join(tmp, "probe_reward.py"))
print(f"2b same, path given as a file: {[r['reward_score'] for r in res]} {dt:.2f}s")
res, dt = score("naive", "async_score")
print(
    f"2c async compute_score (awaited on the worker's loop): {[r['reward_score'] for r in res]} "
    f"thread={res[0]['reward_extra_info']['thread']} {dt:.2f}s"
)
res, dt = score("rate_limited", "slow_score", extra={"timeout": 0.5, "max_concurrent": 4})
print(
    f"2d rate_limited, reward.timeout=0.5 on a 5 s fn: {[r['reward_score'] for r in res]} "
    f"extra={res[0]['reward_extra_info']} {dt:.2f}s"
)
assert [r["reward_score"] for r in res] == [0.0, 0.0] and res[0]["reward_extra_info"]["timeout"]
res, dt = score("rate_limited", "raises")
print(
    f"2e rate_limited, fn raises: {[r['reward_score'] for r in res]} extra={res[0]['reward_extra_info']}"
)
try:
    score("naive", "raises")
    print("2f naive, fn raises: no error?!")
except Exception as e:
    print(f"2f naive, fn raises: the exception propagates ({type(e).__name__}: {e})")

# 3. Agent loop: a registered AgentLoopBase subclass, instantiated the way AgentLoopWorker does
# (hydra.utils.instantiate on the registry entry) and run with a fake LLM server client.
import hydra  # noqa: E402
from verl.experimental.agent_loop.agent_loop import (  # noqa: E402
    AgentLoopBase,
    AgentLoopMetrics,
    AgentLoopOutput,
    DictConfigWrap,
    ToolListWrap,
    _agent_loop_registry,
    register,
)
from verl.workers.rollout.replica import TokenOutput  # noqa: E402


@register("probe_agent")
class ProbeAgentLoop(AgentLoopBase):
    async def run(self, sampling_params, **kwargs):
        messages = list(kwargs["raw_prompt"])
        prompt_ids = await self.ct_build_initial_tokens(messages)
        out = await self.server_manager.generate(
            request_id="r0", prompt_ids=prompt_ids, sampling_params=sampling_params
        )
        text = self.tokenizer.decode(out.token_ids)
        return AgentLoopOutput(
            prompt_ids=prompt_ids,
            response_ids=out.token_ids,
            response_mask=[1] * len(out.token_ids),
            reward_score=float("return a + b" in text),
            num_turns=2,
            metrics=AgentLoopMetrics(),
            extra_fields={"task_id": kwargs["extra_info"]["task_id"]},
        )


class FakeServer:
    async def generate(self, request_id, prompt_ids, sampling_params, **kw):
        return TokenOutput(token_ids=tok.encode(RESPONSES[0], add_special_tokens=False))


t = time.perf_counter()
trainer_cfg = OmegaConf.create(
    {"actor_rollout_ref": {"rollout": {"prompt_length": 512, "response_length": 512}}, "data": {}}
)
agent = hydra.utils.instantiate(
    config=_agent_loop_registry["probe_agent"],
    trainer_config=DictConfigWrap(config=trainer_cfg),
    server_manager=FakeServer(),
    tokenizer=tok,
    processor=None,
    hf_model_type=None,
    dataset_cls=None,
    data_config=DictConfigWrap(trainer_cfg.data),
    tools=ToolListWrap([]),
)
row = dict(ROWS[0], raw_prompt=ROWS[0]["prompt"], agent_name="probe_agent")
out = loop.run_until_complete(agent.run({"temperature": 1.0}, **row))
print(
    f"3 agent loop {_agent_loop_registry['probe_agent']}: reward_score={out.reward_score} "
    f"prompt_ids={len(out.prompt_ids)} response_ids={len(out.response_ids)} {time.perf_counter() - t:.2f}s"
)
assert out.reward_score == 1.0
print(f"verl probe OK in {time.perf_counter() - T0:.1f}s")
