"""veRL 0.9.1 drives referee's adapter through its own code paths (run in the verl venv:
scripts/run-trainer-tests.sh verl).

Rows come from `referee tasks export --format verl` (three recorded HumanEval tasks and a
held-out one, tests/trainers/fixtures/humaneval4.jsonl), read with veRL's RLHFDataset. Rewards
go through veRL's reward loop exactly as a user configures it (``RewardLoopWorker`` with
``reward.custom_reward_function.path=pkg://referee.train.verl``, the ``naive`` manager), and
through the legacy ``batch`` manager for compute_score_batch. The agent loop is made from an
agent-loop config entry by hydra, as veRL's AgentLoopWorker makes it, and generates through
``ScriptedServer``: a stand-in for veRL's LLM server client (the one thing that needs a GPU),
which returns scripted token ids. Tools run in referee's real sandbox. A domain's task (a
toolworld ``shop-refund`` task, whose world needs only sqlite3 and pydantic) runs in its world,
with the world's tools; sql is not run here (its sandbox needs duckdb, which this venv lacks).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import hydra
import numpy as np
import pytest
import torch
import verl
from _tiny_tokenizer import tokenizer as tiny_tokenizer
from omegaconf import OmegaConf
from verl import DataProto
from verl.experimental.agent_loop.agent_loop import (
    AgentLoopOutput,
    DictConfigWrap,
    ToolListWrap,
    _agent_loop_registry,
)
from verl.experimental.reward_loop.reward_loop import RewardLoopWorker
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.utils.ray_utils import get_event_loop
from verl.workers.reward_manager import get_reward_manager_cls
from verl.workers.rollout.replica import TokenOutput

from referee.tasks.model import read_tasks
from referee.tasks.trainer_rows import verl_row

FIXTURE = Path(__file__).parent / "fixtures" / "humaneval4.jsonl"
TASKS = {t.id: t for t in read_tasks(FIXTURE)}
TRAIN = [t for t in TASKS.values() if t.split == "train"]
HELD = next(t for t in TASKS.values() if t.split == "heldout")
EXPLOITS = ["import sys\nsys.exit(0)\n", "```python\nprint('PASSED: all tests')\n```"]


def test_this_is_the_verl_the_lock_pins():
    assert verl.__version__ == "0.9.1" and torch.__version__.startswith("2.13.0")


def _gold(task: Any) -> str:
    code = task.payload["code_prompt"] + task.hidden["reference"]
    return f"Here you go.\n```python\n{code}```\n"


@pytest.fixture(scope="module")
def tok():
    return tiny_tokenizer()


@pytest.fixture(scope="module")
def tok_dir(tok, tmp_path_factory) -> str:
    d = tmp_path_factory.mktemp("tok")
    tok.save_pretrained(str(d))
    return str(d)


def _export(out: Path, *extra: str) -> dict[str, Any]:
    args = ["tasks", "export", str(FIXTURE), "--format", "verl", "--out", str(out), "--json"]
    # referee's command line as the wheel installed it in this venv (no PYTHONPATH).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = subprocess.run(
        [sys.executable, "-m", "referee", *args, *extra], capture_output=True, text=True, env=env
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def datasets(tok, tmp_path_factory) -> dict[str, list[dict[str, Any]]]:
    """The exported files, read by veRL's own RLHFDataset."""
    d = tmp_path_factory.mktemp("rows")
    assert _export(d / "train.parquet")["left_out"] == {"heldout": 1}
    assert _export(d / "val.parquet", "--split", "heldout")["rows"] == 1
    cfg = OmegaConf.create(
        {"prompt_key": "prompt", "max_prompt_length": 4096, "filter_overlong_prompts": False,
         "return_raw_chat": True, "cache_dir": str(d / "cache")}
    )  # fmt: skip
    out = {}
    for name in ("train", "val"):
        ds = RLHFDataset(data_files=[str(d / f"{name}.parquet")], tokenizer=tok, config=cfg)
        out[name] = [ds[i] for i in range(len(ds))]
    return out


def _batch(tok, rows: list[dict[str, Any]], responses: list[str]) -> DataProto:
    """What the rollout leaves in a batch: left-padded prompts, right-padded responses."""
    p_ids = [tok.apply_chat_template(r["raw_prompt"], add_generation_prompt=True) for r in rows]
    p_ids = [list(x["input_ids"]) if hasattr(x, "keys") else list(x) for x in p_ids]
    r_ids = [tok.encode(s, add_special_tokens=False) or [tok.pad_token_id] for s in responses]
    r_len = [len(tok.encode(s, add_special_tokens=False)) for s in responses]
    P, R = max(map(len, p_ids)), max(map(len, r_ids))
    pad = tok.pad_token_id
    prompts = torch.tensor([[pad] * (P - len(x)) + x for x in p_ids])
    resp = torch.tensor([x + [pad] * (R - len(x)) for x in r_ids])
    mask = torch.tensor(
        [
            [0] * (P - len(a)) + [1] * len(a) + [1] * n + [0] * (R - n)
            for a, n in zip(p_ids, r_len, strict=True)
        ]
    )
    non_tensors = {
        k: np.array([r[k] for r in rows], dtype=object)
        for k in ("data_source", "reward_model", "extra_info", "ability")
    }
    return DataProto.from_dict(
        tensors={"prompts": prompts, "responses": resp, "attention_mask": mask,
                 "input_ids": torch.cat([prompts, resp], 1)},
        non_tensors=non_tensors,
    )  # fmt: skip


def _worker(tok_dir: str, manager: str = "naive", **reward: Any) -> RewardLoopWorker:
    cfg = OmegaConf.create(
        {
            "actor_rollout_ref": {"model": {"path": tok_dir, "tokenizer_path": None}},
            "reward": {
                "num_workers": 1,
                "custom_reward_function": {
                    "path": "pkg://referee.train.verl",
                    "name": "compute_score",
                    "reward_kwargs": {"deadline_s": 60},
                },
                "reward_manager": {
                    "source": "register",
                    "name": manager,
                    "module": {"path": None, "name": "custom_reward_manager"},
                },
                "reward_model": {"enable": False, "enable_resource_pool": False},
                "sandbox_fusion": None,
                **reward,
            },
        }
    )
    return RewardLoopWorker(cfg)


def _rewards(tok, tok_dir, rows, responses, manager="naive", **reward) -> list[dict[str, Any]]:
    worker = _worker(tok_dir, manager, **reward)
    loop = get_event_loop()
    return loop.run_until_complete(worker.compute_score_batch(_batch(tok, rows, responses)))


# ---- the reward loop ---------------------------------------------------------------------------
def test_reward_loop_scores_gold_one_and_empty_or_exploits_zero(tok, tok_dir, datasets):
    rows = datasets["train"]
    assert [r["extra_info"]["task_id"] for r in rows] == [t.id for t in TRAIN]
    assert rows[0]["data_source"] == "referee/code" and "referee_task" in rows[0]["extra_info"]
    picked = [*rows, rows[0], rows[1], rows[2]]
    texts = [*(_gold(t) for t in TRAIN), "", *EXPLOITS]
    got = _rewards(tok, tok_dir, picked, texts)
    assert [g["reward_score"] for g in got] == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
    extra = got[0]["reward_extra_info"]
    assert extra["passed"] == 1.0 and extra["tests_passed"] == extra["tests_total"] > 0


def test_a_heldout_task_scores_in_evaluation_rows_and_is_refused_in_training(
    tok, tok_dir, datasets
):
    val = datasets["val"][0]
    assert val["extra_info"]["split"] == "heldout" and "referee_task" not in val["extra_info"]
    assert [g["reward_score"] for g in _rewards(tok, tok_dir, [val], [_gold(HELD)])] == [1.0]
    # The same task in a training row: veRL's worker raises referee's refusal.
    row = dict(verl_row(HELD, 0, embed=True), raw_prompt=val["raw_prompt"])
    assert row["extra_info"]["split"] == "heldout"
    row["extra_info"]["split"] = "train"
    with pytest.raises(Exception, match="held out and must never reach training"):
        _rewards(tok, tok_dir, [row], [_gold(HELD)])


def test_a_missing_task_raises_a_clear_error_not_a_zero(tok, tok_dir, datasets, monkeypatch):
    monkeypatch.delenv("REFEREE_TASKS", raising=False)
    row = dict(datasets["train"][0])
    row["extra_info"] = {"index": 0, "task_id": "HumanEval/999", "split": "train"}
    row["reward_model"] = {"style": "rule", "ground_truth": "HumanEval/999"}
    with pytest.raises(Exception, match=r"carries no task.*referee tasks export"):
        _rewards(tok, tok_dir, [row], ["x"])
    # Why referee says "naive": veRL's rate_limited manager turns that error into a 0.
    got = _rewards(tok, tok_dir, [row], ["x"], "rate_limited", max_concurrent=1)
    assert (
        got[0]["reward_score"] == 0.0 and "carries no task" in got[0]["reward_extra_info"]["error"]
    )


def test_legacy_batch_manager_calls_compute_score_batch(tok, datasets):
    from referee.train.verl import compute_score_batch

    rows = datasets["train"]
    batch = _batch(tok, [rows[0], rows[1]], [_gold(TRAIN[0]), EXPLOITS[0]])
    manager = get_reward_manager_cls("batch")(
        tokenizer=tok, num_examine=0, compute_score=compute_score_batch, deadline_s=30
    )
    out = manager(batch, return_dict=True)
    assert out["reward_tensor"].sum(-1).tolist() == [1.0, 0.0]
    assert list(out["reward_extra_info"]["passed"]) == [1.0, 0.0]


# ---- the agent loop ----------------------------------------------------------------------------
class ScriptedServer:
    """Stand-in for veRL's LLM server client (``server_manager``): ``generate`` returns the
    token ids of the next scripted reply, and records the prompts it was given."""

    def __init__(self, tok, replies: list[str]) -> None:
        self.tok, self.replies, self.prompts = tok, list(replies), []

    async def generate(self, request_id, prompt_ids, sampling_params, **kw) -> TokenOutput:
        self.prompts.append(list(prompt_ids))
        text = self.replies.pop(0)
        return TokenOutput(token_ids=self.tok.encode(text, add_special_tokens=False))


def _call(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def _loop(tok, server: ScriptedServer, **entry: Any):
    import referee.train.verl_agent  # noqa: F401  (registers "referee")

    assert _agent_loop_registry["referee"] == {
        "_target_": "referee.train.verl_agent.RefereeAgentLoop"
    }
    cfg = OmegaConf.create(
        {
            "actor_rollout_ref": {
                "rollout": {
                    "prompt_length": 8192,
                    "response_length": 8192,
                    "multi_turn": {"format": "hermes", "max_assistant_turns": None},
                }
            },
            "data": {},
        }
    )
    # An entry as agent_loop_config_path's YAML gives it: AgentLoopWorker instantiates it so.
    config = OmegaConf.create(
        {"name": "referee", "_target_": "referee.train.verl_agent.RefereeAgentLoop", **entry}
    )
    return hydra.utils.instantiate(
        config=config,
        trainer_config=DictConfigWrap(config=cfg),
        server_manager=server,
        tokenizer=tok,
        processor=None,
        hf_model_type=None,
        dataset_cls=RLHFDataset,
        data_config=DictConfigWrap(cfg.data),
        tools=ToolListWrap([]),
    )


def _episode(tok, row: dict[str, Any], replies: list[str], **entry: Any):
    server = ScriptedServer(tok, replies)
    loop = _loop(tok, server, **entry)
    out = get_event_loop().run_until_complete(loop.run({"temperature": 1.0}, **row))
    return out, server


def test_agent_loop_runs_tools_in_the_sandbox_and_scores_the_submission(tok, datasets):
    row, task = dict(datasets["train"][1], agent_name="referee"), TRAIN[1]
    code = task.payload["code_prompt"] + task.hidden["reference"]
    replies = [
        "I will write it. " + _call("write_file", path="solution.py", content=code),
        _call("run_python", code="import solution; print('ran ok')"),
        _call("submit"),
    ]
    out, server = _episode(tok, row, replies, max_turns=4)
    assert isinstance(out, AgentLoopOutput) and out.reward_score == 1.0
    assert out.num_turns == 3 + 2 + 1  # assistant turns, observation turns, the prompt
    assert len(out.response_ids) == len(out.response_mask) and 0 in out.response_mask
    # Mask 0: what the sandbox said (tool results), never the model's tokens.
    env_text = tok.decode(
        [t for t, m in zip(out.response_ids, out.response_mask, strict=True) if not m]
    )
    model_text = tok.decode(
        [t for t, m in zip(out.response_ids, out.response_mask, strict=True) if m]
    )
    assert "ran ok" in env_text and "ran ok" not in model_text.replace("print('ran ok')", "")
    assert "write_file" in model_text and "submit" in model_text
    assert out.extra_fields["reward_extra_info"]["passed"] == 1.0
    assert out.extra_fields["referee_end_reason"] == "submitted"
    assert out.extra_fields["referee_tool_calls"] == 3
    # Each turn's prompt holds the whole conversation so far: the first turn's is a prefix.
    assert server.prompts[1][: len(server.prompts[0])] == server.prompts[0]
    assert out.prompt_ids == server.prompts[0]


def test_agent_loop_scores_a_wrong_submission_zero_and_a_final_block(tok, datasets):
    row, task = dict(datasets["train"][0]), TRAIN[0]
    wrong = task.payload["code_prompt"] + "    return None\n"
    out, _ = _episode(tok, row, [_call("write_file", path="solution.py", content=wrong),
                                 _call("submit")])  # fmt: skip
    assert out.reward_score == 0.0 and out.extra_fields["reward_extra_info"]["passed"] == 0.0
    out, _ = _episode(tok, row, [_gold(task)])  # no tool call: the final block is the answer
    assert out.reward_score == 1.0 and out.num_turns == 2
    assert out.extra_fields["referee_end_reason"] == "answered"


def test_agent_loop_refuses_a_heldout_task_in_a_training_row(tok, datasets):
    row = dict(datasets["val"][0])
    row["extra_info"] = {**row["extra_info"], "split": "train"}
    with pytest.raises(Exception, match="held out and must never reach training"):
        _episode(tok, row, [_gold(HELD)])


# ---- the agent loop on a domain's task: its domain's environment, its tools ----------------------
def _domain_episode(tok, task, replies: list[str], **entry: Any):
    """An episode on a row of ``task`` (the task rides in it), and the tool schemas the loop
    rendered the prompt with."""
    server = ScriptedServer(tok, replies)
    loop = _loop(tok, server, **entry)
    offered: list[Any] = []
    build = loop.ct_build_initial_tokens

    async def spy(messages, tools=None, **kw):
        offered.append(tools)
        return await build(messages, tools=tools, **kw)

    loop.ct_build_initial_tokens = spy
    row = verl_row(task, 0, agent_name="referee")
    out = get_event_loop().run_until_complete(loop.run({"temperature": 1.0}, **row))
    names = {t["function"]["name"] for t in offered[0] or []}
    return out, names


def test_agent_loop_domain_task_tool_world_in_its_world(tok):
    from referee.domains import generate_family

    task = generate_family("shop-refund", count=1, seed=0)[0]
    plan = json.loads(task.hidden["reference"])  # the reference plan: its tool calls in order
    replies = [_call(c["name"], **c["arguments"]) for c in plan] + ["Your refund is on its way."]
    out, tools = _domain_episode(tok, task, replies, max_turns=len(plan) + 2)
    # The world's tools were offered (read after its reset), not CodeEnv's.
    assert {"find_customer", "refund_order"} <= tools and "write_file" not in tools
    assert out.reward_score == 1.0 and out.extra_fields["reward_extra_info"]["passed"] == 1.0
    assert out.extra_fields["referee_end_reason"] == "answered"
    assert out.extra_fields["referee_tool_calls"] == len(plan)
    assert out.num_turns == (len(plan) + 1) + len(plan) + 1
    env_text = tok.decode(
        [t for t, m in zip(out.response_ids, out.response_mask, strict=True) if not m]
    )
    assert "liam" in env_text.lower()  # the world's answer to find_customer, mask 0
    # Doing nothing leaves the store as it was: 0.
    out, _ = _domain_episode(tok, task, ["I cannot help with that."])
    assert out.reward_score == 0.0 and out.num_turns == 2
