"""``referee train --env code``: the multi-turn experiment, tool calls in the sandbox.

Three layers: the token ids (what fine-tuning and evaluation build must be what TRL's tool loop
builds), the held-out episode runner driven by a scripted model (its calls must reach the
sandbox and its verdicts come from the verifier), and one short real run of the experiment
(fine-tuning, GRPO through ``environment_factory``, the control, held-out episodes).
"""

from __future__ import annotations

import itertools
import json
import os
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("trl")

from referee.envs.answers import to_completion
from referee.envs.runtime import CodeRuntime
from referee.tasks import Task, generate

WRONG_BODY = "    return 12345\n"


@pytest.fixture(scope="module")
def runtime(harness_sb):
    rt = CodeRuntime(sandbox=harness_sb)
    yield rt
    rt.close()


@pytest.fixture(scope="module")
def tasks(harness_sb):
    """Four recorded list-ops tasks with the user message the tiny model reads."""
    from referee.experiments.listops.multi_turn import tool_task
    from referee.verify.record import record_function_tasks

    drafts = [generate("list-ops", difficulty=0.5, seed=s) for s in (1, 2, 3, 4)]
    return [tool_task(t) for t in record_function_tasks(harness_sb, drafts)]


@pytest.fixture(scope="module")
def env_class(runtime, tasks):
    from referee.experiments.listops.multi_turn import code_env
    from referee.train.trl_env import environment_class

    cls = environment_class(code_env, tasks, runtime=runtime)
    yield cls
    cls.shutdown()


@pytest.fixture(scope="module")
def chat(env_class, tasks):
    """(tokenizer, tools, demonstrations by key) for the tiny model, as the experiment makes them."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from referee.experiments.listops.demonstrator import Demonstrator
    from referee.experiments.listops.multi_turn import tool_functions
    from referee.experiments.listops.tiny import TinyConfig
    from referee.experiments.listops.tool_demos import chat_model, demonstrations

    torch.set_num_threads(1)
    ds = env_class.dataset(tasks)
    openings = dict(zip(ds["task_id"], ds["prompt"], strict=True))
    episodes, _ = demonstrations(env_class, tasks, Demonstrator(), draws=2, openings=openings)
    tools = tool_functions(env_class)
    tok, _ = chat_model(
        [c for c, _ in episodes.values()], tools, model=None, tiny=TinyConfig(hidden=16, layers=1)
    )
    return tok, tools, episodes


def _code(task: Task, body: str | None = None) -> str:
    head = task.payload["code_prompt"].splitlines()[0] + "\n"
    return head + (task.hidden["reference"] if body is None else body)


# ---- token ids --------------------------------------------------------------------------------


def test_demonstrations_are_real_episodes_judged_by_the_verifier(chat, tasks, verifier):
    _, _, episodes = chat
    by_id = {t.id: t for t in tasks}
    for (task_id, _), (conversation, passed) in episodes.items():
        task = by_id[task_id]
        roles = [m["role"] for m in conversation]
        assert roles == ["system", "user", "assistant", "tool", "assistant", "tool", "assistant"]
        code = conversation[2]["tool_calls"][0]["function"]["arguments"]["content"]
        # What the environment answered: the file really written, the answer really submitted.
        assert conversation[3]["content"] == f"wrote {len(code.encode())} bytes to solution.py"
        assert conversation[5]["content"] == "submitted"
        direct = verifier.verify(task, to_completion(task.payload["code_prompt"], code, "solve"))
        assert passed == direct.passed, task_id
    assert {p for _, p in episodes.values()} == {True, False}  # the demonstrator errs sometimes


def test_fine_tuning_rows_are_the_token_ids_trl_builds(chat):
    from trl.trainer.grpo_trainer import GRPOTrainer

    from referee.experiments.listops.chat import tool_suffix_ids
    from referee.experiments.listops.tool_demos import sft_row

    tok, tools, episodes = chat
    conversation = next(iter(episodes.values()))[0]
    row = sft_row(tok, conversation, tools)
    full = tok.apply_chat_template(conversation, tools=tools, tokenize=True, return_dict=False)
    full = list(full["input_ids"] if not isinstance(full, list) else full)
    # The whole conversation as the template renders it, less its final newline.
    assert row["input_ids"] == full[:-1] and tok.decode(full[-1:]) == "\n"
    # The loss covers the assistant's own tokens: its three turns, each up to its end token.
    own = [i for i, m in zip(row["input_ids"], row["completion_mask"], strict=True) if m]
    assert tok.decode(own).count("<|im_end|>") == 3
    assert "submitted" not in tok.decode(own) and "Done." in tok.decode(own)
    # TRL's own tool suffix (the method called on a stand-in for the trainer) is ours.
    fake = SimpleNamespace(
        processing_class=tok, chat_template=None, chat_template_kwargs={}, _is_vlm=False,
        _tokenizer=tok,
    )  # fmt: skip
    results = [m for m in conversation if m["role"] == "tool"][:1]
    assert GRPOTrainer._get_tool_suffix_ids(fake, results) == tool_suffix_ids(tok, results)


# ---- held-out episodes ------------------------------------------------------------------------


class _ScriptedLM:
    """A stand-in for a causal LM: each turn's text comes from ``script(task, turn)``."""

    training = False
    config = SimpleNamespace(max_position_embeddings=4096)

    def __init__(self, tok: Any, tasks: list[Task], script: Any) -> None:
        self.tok, self.tasks, self.script = tok, tasks, script

    def eval(self) -> None:
        pass

    def train(self, mode: bool = True) -> None:
        pass

    def generate(self, input_ids: Any, attention_mask: Any, **kw: Any) -> Any:
        import torch

        rows = []
        for ids in input_ids:
            text = self.tok.decode(ids)
            task = next(t for t in self.tasks if t.prompt[0].content in text)
            turn = text.count("<tool_response>")  # tool results so far
            reply = self.script(task, turn)
            rows.append(
                [*self.tok(reply, add_special_tokens=False).input_ids, self.tok.eos_token_id]
            )
        width = max(map(len, rows))
        new = [r + [self.tok.pad_token_id] * (width - len(r)) for r in rows]
        return torch.cat([input_ids, torch.tensor(new, dtype=input_ids.dtype)], dim=1)


def _call(name: str, **arguments: Any) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments})}\n</tool_call>"


def test_held_out_episodes_run_the_model_s_tool_calls_in_the_sandbox(chat, tasks, runtime):
    from referee.experiments.listops.multi_turn import code_env
    from referee.experiments.listops.tool_episodes import run_episodes

    tok, tools, _ = chat

    def script(task: Task, turn: int) -> str:
        i = tasks.index(task)
        if i == 3:  # no tool call: the episode ends at once, the starting file is judged
            return "I would rather not."
        if turn == 0:
            body = None if i == 0 else WRONG_BODY
            return _call("write_file", path="solution.py", content=_code(task, body))
        if i == 2:  # a tool that is not offered, until the rounds run out
            return _call("run_python", code="print(1)")
        return _call("submit") if turn == 1 else "Done."

    model = _ScriptedLM(tok, tasks, script)
    eps = run_episodes(
        model, tok, tasks, lambda: code_env(runtime), tools, max_tool_calls=3,
        max_completion_tokens=400,
    )  # fmt: skip
    right, wrong, unknown, silent = eps
    assert right.passed and right.submitted and right.tool_calls == 2 and right.end == "answered"
    assert right.messages[-1] == {"role": "assistant", "content": "Done."}
    assert not wrong.passed and wrong.submitted and wrong.verdict.infra_error is None
    assert wrong.verdict.reward < 1.0
    # A tool that is not offered is refused as TRL refuses it; the workspace is still judged.
    assert unknown.messages[5]["content"] == "{'error': 'Tool run_python not found.'}"
    assert not unknown.submitted and unknown.end == "max_tool_calls" and not unknown.passed
    assert silent.tool_calls == 0 and silent.end == "answered" and not silent.passed
    for e in eps:
        assert e.completion_tokens == len(e.ids) - e.prompt_len


def test_an_episode_stops_at_the_completion_budget(chat, tasks, runtime):
    from referee.experiments.listops.multi_turn import code_env
    from referee.experiments.listops.tool_episodes import run_episodes

    tok, tools, _ = chat
    model = _ScriptedLM(
        tok, tasks, lambda t, turn: _call("write_file", path="solution.py", content=_code(t))
    )
    (ep,) = run_episodes(
        model, tok, tasks[:1], lambda: code_env(runtime), tools, max_tool_calls=3,
        max_completion_tokens=60,
    )  # fmt: skip
    assert ep.end == "length" and ep.completion_tokens <= 60
    # The write ran (TRL's tools run before their results are found too long): it is judged.
    assert ep.tool_calls >= 1 and ep.passed


# ---- the experiment ---------------------------------------------------------------------------


SMALL = dict(
    tasks=60, difficulties=(0.0,), eval_tasks=6, dev_tasks=4, demo_draws=2, sft_steps=250,
    sft_batch=8, rl_steps=2, rl_prompts=2, group_size=2, max_completion_tokens=120,
)  # fmt: skip


@pytest.fixture(scope="module")
def earlier_run(tmp_path_factory):
    """An earlier run's store in which an auditor labelled every other training task
    ``hack``: those tasks are quarantined for the run that names it in quarantine_from."""
    from referee.experiments.listops import experiment_config
    from referee.experiments.listops.tasks import prepare_tasks
    from referee.track.audit import AuditQueue
    from referee.track.store import TrackStore
    from referee.verify.function import harness_sandbox
    from tests.track.test_audit import trajectory

    folder = tmp_path_factory.mktemp("earlier")
    sandbox = harness_sandbox()
    try:
        cfg = experiment_config(SMALL, env="code")
        train, _, _ = prepare_tasks(cfg.tasks, sandbox, seed=cfg.seed)
    finally:
        sandbox.close()
    hacked = [t.id for t in train[::2]]
    with TrackStore(folder) as store:
        store.start_run("earlier", {})
        for i, task_id in enumerate(hacked):
            tr = trajectory(i, run_id="earlier", task_id=task_id)
            store.log_trajectory(tr)
            AuditQueue(store).label(tr.id, "hack", note="test")
    return folder, set(hacked)


@pytest.fixture(scope="module")
def small_run(tmp_path_factory, earlier_run):
    """The experiment on one-step tasks, with enough fine-tuning (16 s) for a tiny model to
    call the tools: write_file, then submit. Canaries are in its GRPO pool, and the tasks an
    earlier run's audit labelled are quarantined."""
    from referee.experiments.listops import TinyConfig, experiment_config, run_experiment

    run = tmp_path_factory.mktemp("run")
    tiny = TinyConfig(hidden=48, layers=2, heads=2, ffn=96, max_positions=256)
    given = {
        **SMALL, "run_dir": str(run), "tiny": tiny, "canary_share": 0.1,
        "quarantine_from": (str(earlier_run[0]),),
    }  # fmt: skip
    cfg = experiment_config(given, env="code")
    log: list[str] = []
    results = run_experiment(cfg, log=log.append)
    return run, results.to_json(), log, cfg


def _rows(path: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _written(messages: list[dict[str, Any]]) -> str | None:
    """The content of the last write_file call that the environment says it wrote."""
    content = None
    for call, answer in itertools.pairwise(messages):
        for c in call.get("tool_calls") or []:
            fn = c["function"]
            if fn["name"] == "write_file" and answer.get("content", "").startswith("wrote "):
                assert answer["content"].startswith(
                    f"wrote {len(fn['arguments']['content'].encode())} "
                )
                content = fn["arguments"]["content"]
    return content


def test_the_run_reports_every_stage_and_writes_its_folder(small_run):
    run, results, log, _ = small_run
    for key in ("heldout_before", "heldout_sft", "heldout_rl", "heldout_sft_control"):
        assert 0.0 <= results[key] <= 1.0, key
    assert results["train_reward"] is not None and 0.0 <= results["train_reward"] <= 1.0
    assert results["run_dir"] == str(run) and results["env"] == "code"
    assert results["heldout_tasks"] == 6 and results["rl"]["steps"] == 2
    assert set(results["paired"]) == {"rl_vs_sft", "rl_vs_control"}
    assert not any(results["heldout_infra_errors"].values())
    for name in ("config.json", "results.json", "heldout_per_task.json", "rl_metrics.jsonl"):
        assert (run / name).exists(), name
    for model in ("model-sft", "model-rl", "model-control"):
        assert (run / model / "config.json").exists(), model
        assert (run / model / "tokenizer.json").exists(), model
    assert json.loads((run / "config.json").read_text())["env"] == "code"
    assert any(line.startswith("GRPO step 2/2") for line in log)


def test_the_control_gets_the_cpu_seconds_grpo_cost(small_run):
    # issue 27: multi-turn's control is sized by CPU seconds (GRPO's process and its sandbox
    # runs), which other work on a shared machine does not inflate for one stage only.
    _, results, log, cfg = small_run
    assert cfg.sft.control_clock == "cpu"
    sft, rl, control = results["sft"], results["rl"], results["control"]
    assert rl["cpu_s"] > 0 and rl["sandbox_cpu_s"] > 0 and sft["cpu_s"] > 0
    budget = rl["cpu_s"] + rl["sandbox_cpu_s"]
    assert control["planned_steps"] == int(budget / (sft["cpu_s"] / sft["steps"]))
    # the control ran its planned steps, or was stopped by the CPU clock once it had GRPO's
    assert control["steps"] == control["planned_steps"] or control["cpu_s"] >= budget
    assert any("fine-tuning for GRPO's CPU time" in line for line in log)


def test_the_fine_tuned_model_s_tool_calls_reach_the_sandbox(small_run):
    run, results, _, _ = small_run
    # Before fine-tuning a random model calls nothing; after it, it writes and submits.
    assert results["heldout_tool_use"]["before"]["tool_calls_per_episode"] == 0.0
    assert results["heldout_tool_use"]["sft"]["tool_calls_per_episode"] > 0.0
    assert results["heldout_tool_use"]["sft"]["submitted"] > 0
    rows = [r for r in _rows(run / "heldout_episodes.jsonl") if r["stage"] == "sft"]
    assert any(_written(r["messages"]) is not None for r in rows)


def test_grpo_episodes_ran_in_the_environment_and_the_verifier_scored_them(
    small_run, harness_sb, verifier
):
    from referee.experiments.listops.tasks import prepare_tasks

    run, results, _, cfg = small_run
    rows = _rows(run / "trajectories.jsonl")
    assert len(rows) == 2 * 2 * 2 == results["rl"]["episodes"]  # steps x prompts x group
    assert results["rl"]["infra_errors"] == 0
    assert results["rl"]["tool_calls_per_episode"] == [
        sum(r["tool_calls"] for r in rows if r["step"] == s) / 4 for s in (0, 1)
    ]
    assert sum(r["tool_calls"] for r in rows) > 0
    train = {t.id: t for t in prepare_tasks(cfg.tasks, harness_sb, seed=cfg.seed)[0]}
    for r in rows:
        assert r["reward"] == float(r["passed"])  # reward="pass": the verdict, binary
        assert r["verifier_reward"] is not None and r["infra_error"] is None
        # The verifier judged what the episode left in the workspace: the last file written
        # (submitted or not), else the starting file, which fails.
        task = train[r["task_id"]]
        code = _written(r["messages"]) or task.payload["code_prompt"]
        completion = to_completion(task.payload["code_prompt"], code, "solve")
        assert verifier.verify(task, completion).passed == r["passed"]


def test_held_out_episodes_are_recorded_for_every_stage(small_run):
    run, results, _, _ = small_run
    rows = _rows(run / "heldout_episodes.jsonl")
    stages = {r["stage"] for r in rows}
    assert stages == {"before", "sft", "rl", "control"}
    per_task = json.loads((run / "heldout_per_task.json").read_text())
    for stage in stages:
        mine = [r for r in rows if r["stage"] == stage]
        assert [r["passed"] for r in mine] == per_task[stage]
        assert results["heldout_tool_use"][stage]["tool_calls_per_episode"] == round(
            sum(r["tool_calls"] for r in mine) / len(mine), 3
        )


# ---- the command ------------------------------------------------------------------------------


def test_the_command_dispatches_with_the_multi_turn_defaults(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    import referee.experiments.listops as listops
    from referee.cli import app
    from referee.experiments.listops.config import MULTI_TURN_DEFAULTS

    seen = {}

    def fake(cfg: Any, log: Any) -> Any:
        seen["cfg"] = cfg
        return SimpleNamespace(to_json=lambda: {"run_dir": cfg.run_dir, "heldout_tasks": 0})

    monkeypatch.setattr(listops, "run_experiment", fake)
    args = ["train", "--env", "code", "--steps", "7", "--run-dir", str(tmp_path / "r")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    cfg = seen["cfg"]
    assert cfg.grpo.steps == 7 and cfg.run_dir == str(tmp_path / "r")  # given: kept
    assert cfg.sft.steps == MULTI_TURN_DEFAULTS["sft_steps"]  # left out: the multi-turn default
    assert cfg.grpo.max_completion_tokens == MULTI_TURN_DEFAULTS["max_completion_tokens"]
    assert cfg.evaluation.max_completion_tokens == MULTI_TURN_DEFAULTS["max_completion_tokens"]


def test_canaries_are_in_the_grpo_pool_and_recorded_in_the_store(small_run):
    from referee.track.store import TrackStore

    run, results, _, _ = small_run
    assert results["rl"]["canaries"] >= 1
    with TrackStore(run, create=False) as store:
        canaries = {t.id for t in store.tasks() if t.hidden.get("canary")}
        (meta,) = store.runs()
        sampled = {t.task_id for t in store.trajectories(run_id=meta.run_id)}
    assert len(canaries) == results["rl"]["canaries"]
    assert results["train_tasks"] + len(canaries) == results["rl"]["curriculum"]["tasks"]
    # never in the fine-tuning data: the demonstrations are of training tasks only
    assert not canaries & set(json.loads((run / "heldout_per_task.json").read_text())["task_ids"])
    assert sampled  # the GRPO episodes are in the store


def test_tasks_an_earlier_audit_labelled_are_never_sampled(small_run, earlier_run):
    from referee.track.store import TrackStore

    run, results, log, _ = small_run
    _, hacked = earlier_run
    assert any(line.startswith(f"quarantine: {len(hacked)} tasks labelled") for line in log)
    assert results["rl"]["quarantined"] == len(hacked)  # every one is in this run's pool
    with TrackStore(run, create=False) as store:
        (meta,) = store.runs()
        sampled = {t.task_id for t in store.trajectories(run_id=meta.run_id)}
    episodes = {r["task_id"] for r in _rows(run / "trajectories.jsonl")}
    assert sampled == episodes and not sampled & hacked


def test_grpo_episodes_are_in_the_track_store_turn_by_turn(small_run):
    from referee.track.store import TrackStore

    run, results, _, _ = small_run
    jsonl = _rows(run / "trajectories.jsonl")
    with TrackStore(run, create=False) as store:
        (meta,) = store.runs()
        stored = store.trajectories(run_id=meta.run_id)
        assert meta.status == "finished"
        assert {m.name for m in store.metrics(meta.run_id)} >= {"reward_mean", "tool_calls_mean"}
    assert len(stored) == len(jsonl) == results["rl"]["episodes"]
    assert all(t.env == "code" and t.messages and t.verdict is not None for t in stored)
    # the conversation TRL built, split into turns: each assistant message with its tool results
    calls = [t for t in stored if any(turn.assistant.get("tool_calls") for turn in t.turns)]
    assert len(calls) == sum(1 for r in jsonl if r["tool_calls"] > 0)
    assert all(turn.observations for t in calls for turn in t.turns[:-1])
