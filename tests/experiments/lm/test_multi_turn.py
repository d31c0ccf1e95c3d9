"""``referee train --model SPEC --tasks FILE --env code`` end to end on a tiny chat model made
here: the tool template installed, greedy held-out episodes before and after, multi-turn GRPO
through TRL's environment_factory with LoRA, the summary, and the refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from referee.cli import app
from referee.tasks.model import read_tasks
from referee.verify.verdict import TestOutcome as Outcome
from referee.verify.verdict import Verdict
from tests.experiments.lm.lora import lora_b_norm, lora_b_norm_of

pytest.importorskip("trl")
pytest.importorskip("peft")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.policy import tiny_lm

    folder = tmp_path_factory.mktemp("tiny-chat")
    tok = tiny_lm.tokenizer(tiny_lm.CHAT_TEMPLATE)
    # TRL's tool template renders the tools' schemas into the prompt: ~600 tokens of this
    # tokenizer's, more than tiny_lm's default 512 positions
    tiny_lm.model(tok, max_positions=2048).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def task_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tasks") / "tasks.jsonl"
    r = CliRunner().invoke(
        app, ["tasks", "generate", "list-ops", "--out", str(out), "--count", "8",
              "--difficulty", "0", "--heldout", "0.4"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return out


class HalfPass:
    """A function verifier that passes every other answer: groups whose rewards differ (so
    GRPO has a gradient), whatever a random model leaves in its workspace. Its ``sandbox`` is
    None, so the runtime makes its own harness sandbox for the tools."""

    sandbox = None

    def __init__(self) -> None:
        self.calls = 0

    def verify(self, task: Any, answer: str) -> Verdict:
        self.calls += 1
        ok = self.calls % 2 == 0
        return Verdict(
            task_id=task.id, reward=float(ok), passed=ok, verifier="half-pass",
            tests=[Outcome(name="t", status="passed" if ok else "failed")],
        )  # fmt: skip

    def close(self) -> None:
        pass


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_multi_turn_grpo_updates_its_adapter_and_saves_the_episodes(
    model_dir: Path, task_file: Path, tmp_path: Path
) -> None:
    from referee.envs.runtime import CodeRuntime
    from referee.experiments.lm import LMConfig, run_lm

    cfg = LMConfig(
        model=str(model_dir), tasks=str(task_file), run_dir=str(tmp_path / "run"), env="code",
        control="none", budget_minutes=0.02, prompts=2, group_size=2, max_tokens=8,
        eval_batch=4, lora_rank=4, lr=1e-2, canary_share=0.0,
    )  # fmt: skip
    verifier = HalfPass()
    runtime = CodeRuntime(function_verifier=verifier)  # type: ignore[arg-type]
    try:
        summary = run_lm(cfg, log=lambda m: None, runtime=runtime)
    finally:
        runtime.close()
    run = tmp_path / "run"
    assert summary["env"] == "code" and summary["chat_template"] == "trl-qwen2_5"
    grpo = summary["grpo"]
    assert grpo["steps"] >= 1 and grpo["episodes"] == 4 * grpo["steps"]
    assert len(grpo["tool_calls_per_episode"]) == grpo["steps"]
    # the reward function asked the environments' verifier for every training episode
    assert verifier.calls >= grpo["episodes"]
    assert lora_b_norm(run / "adapter") > 0  # LoRA's B starts at zero: an update happened
    assert summary["heldout_control"] is None and "control" not in summary
    assert 0.0 <= summary["p_value"] <= 1.0
    n = summary["n_heldout"]
    episodes = _rows(run / "heldout_episodes.jsonl")
    assert [e["stage"] for e in episodes] == ["base"] * n + ["rl"] * n
    assert all(e["messages"][0]["role"] == "system" for e in episodes)
    for stage in ("base", "rl"):
        use = summary["tool_use"][stage]
        assert 0.0 <= use["valid_write_file"] <= 1.0
        assert sum(use["end_reasons"].values()) == n
    trajectories = _rows(run / "trajectories.jsonl")
    assert len(trajectories) == grpo["episodes"]
    assert {t["task_id"] for t in trajectories} <= {
        t.id for t in read_tasks(task_file) if t.split == "train"
    }


def test_the_cli_trains_multi_turn_on_the_real_verifier(
    model_dir: Path, task_file: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    r = CliRunner().invoke(
        app, ["train", "--model", str(model_dir), "--tasks", str(task_file), "--env", "code",
              "--control-kind", "none", "--run-dir", str(run), "--budget-minutes", "0.02",
              "--prompts", "2", "--group-size", "2", "--max-tokens", "8", "--lora-rank", "4",
              "--json"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    summary = json.loads((run / "summary.json").read_text())
    heldout = [t for t in read_tasks(task_file) if t.split == "heldout"]
    assert summary["n_heldout"] == len(heldout)
    for key in ("heldout_base", "heldout_rl", "p_value"):
        assert 0.0 <= summary[key] <= 1.0, key
    assert summary["heldout_control"] is None
    assert set(summary["stage_s"]) >= {"load", "eval_base", "rl", "eval_rl"}
    # the sandboxed verifier judged every held-out episode (a random model's workspace fails)
    assert summary["base"]["infra_errors"] == 0 and summary["rl"]["infra_errors"] == 0
    assert summary["config"]["env"] == "code" and summary["device"] == "cpu"
    for stage in ("base", "rl"):  # code ran only where the model wrote some
        assert summary[stage]["ran"] <= summary["tool_use"][stage]["valid_write_file"]
    rows = _rows(run / "heldout.jsonl")
    assert {r["stage"] for r in rows} == {"base", "rl"}


def test_multi_turn_refuses_unknown_environments(task_file: Path) -> None:
    r = CliRunner().invoke(
        app, ["train", "--tasks", str(task_file), "--model", "x", "--env", "toolworld"]
    )
    assert r.exit_code == 2 and "--env toolworld with --tasks FILE" in r.output


def test_the_multi_turn_control_imitates_passing_episodes_on_the_model_turns_only(
    model_dir: Path, task_file: Path, tmp_path: Path
) -> None:
    """Given episodes, the RFT control trains on the passing ones with labels on the tokens the
    model wrote: the prompt and the tool results appended between turns are never targets."""
    from referee.experiments.listops.tool_episodes import Episode
    from referee.experiments.lm import LMConfig
    from referee.experiments.lm.control import rejection_sampling_fine_tune
    from referee.experiments.lm.model import load_model, make_trainable

    cfg = LMConfig(
        model=str(model_dir), tasks=str(task_file), run_dir=str(tmp_path / "run"), env="code",
        prompts=1, group_size=2, max_tokens=8, lora_rank=4, lr=1e-2,
    )  # fmt: skip
    train = [t for t in read_tasks(task_file) if t.split == "train"]

    def verdict(ok: bool) -> Verdict:
        return Verdict(task_id=train[0].id, reward=float(ok), passed=ok, verifier="stub",
                       tests=[Outcome(name="t", status="passed" if ok else "failed")])  # fmt: skip

    class TwoEpisodes:
        """One passing episode (prompt 3 tokens, model 2, tool 2, model 1) and one failing."""

        def sample(self, model: Any, tok: Any, tasks: Any, cfg: Any, *, seed: int) -> Any:
            good = Episode(train[0].id, [], ids=[5, 6, 7, 10, 11, 20, 21, 12], prompt_len=3,
                           model_mask=[1, 1, 0, 0, 1], verdict=verdict(True))  # fmt: skip
            bad = Episode(train[0].id, [], ids=[5, 6, 7, 13], prompt_len=3, model_mask=[1],
                          verdict=verdict(False))  # fmt: skip
            return [good, bad]

    model, tokenizer, _ = load_model(cfg.model, "cpu")
    model = make_trainable(model, cfg)
    seen: list[Any] = []
    model.register_forward_pre_hook(
        lambda m, args, kwargs: seen.append(kwargs.get("labels")), with_kwargs=True
    )
    result = rejection_sampling_fine_tune(
        model, tokenizer, train, cfg, wall_s=0.0, verifiers=None, log=lambda m: None,
        episodes=TwoEpisodes(),
    )  # fmt: skip
    assert (result.rounds, result.samples, result.passing, result.steps) == (1, 2, 1, 1)
    labels = [x for x in seen if x is not None]
    assert len(labels) == 1 and labels[0].tolist() == [[-100, -100, -100, 10, 11, -100, -100, 12]]
    assert lora_b_norm_of(model) > 0


def test_multi_turn_grpo_and_its_rft_control(
    model_dir: Path, task_file: Path, tmp_path: Path
) -> None:
    """The whole run with the control: its episodes sampled in the sandboxed environment, the
    passing ones (every other, by the stub verifier) imitated, evaluated as GRPO is."""
    from referee.envs.runtime import CodeRuntime
    from referee.experiments.lm import LMConfig, run_lm

    cfg = LMConfig(
        model=str(model_dir), tasks=str(task_file), run_dir=str(tmp_path / "run"), env="code",
        control="rft", budget_minutes=0.02, prompts=2, group_size=2, max_tokens=8,
        eval_batch=4, lora_rank=4, lr=1e-2, canary_share=0.0,
    )  # fmt: skip
    runtime = CodeRuntime(function_verifier=HalfPass())  # type: ignore[arg-type]
    try:
        summary = run_lm(cfg, log=lambda m: None, runtime=runtime)
    finally:
        runtime.close()
    run = tmp_path / "run"
    control = summary["control_run"]
    assert control["rounds"] >= 1 and control["samples"] == 4 * control["rounds"]
    assert control["steps"] >= 1 and control["sampler"] == "curriculum"
    assert lora_b_norm(run / "control-adapter") > 0
    assert 0.0 <= summary["heldout_control"] <= 1.0 and "rl_vs_control" in summary
    n = summary["n_heldout"]
    stages = [e["stage"] for e in _rows(run / "heldout_episodes.jsonl")]
    assert stages == ["base"] * n + ["rl"] * n + ["control"] * n
