"""``referee train --model SPEC --tasks FILE`` end to end on a tiny chat model made here: base
evaluation, GRPO with LoRA, the RFT control, the summary, and ``referee eval --adapter``
reproducing the trained model's held-out answers."""

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
from tests.experiments.lm.lora import lora_b_norm

pytest.importorskip("trl")
pytest.importorskip("peft")


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.policy import tiny_lm

    folder = tmp_path_factory.mktemp("tiny-chat")
    tok = tiny_lm.tokenizer(tiny_lm.CHAT_TEMPLATE)
    tiny_lm.model(tok).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def task_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tasks") / "tasks.jsonl"
    r = CliRunner().invoke(
        app, ["tasks", "generate", "list-ops", "--out", str(out), "--count", "12",
              "--difficulty", "0", "--heldout", "0.4"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    return out


class HalfPass:
    """Verifiers that pass every other answer they are given: groups with differing rewards
    (so GRPO has a gradient) and passing answers (so the control has something to imitate),
    whatever a random model writes."""

    def __init__(self) -> None:
        self.calls = 0

    def verify_many(self, pairs: Any) -> list[Verdict]:
        out = []
        for task, _ in pairs:
            self.calls += 1
            ok = self.calls % 2 == 0
            out.append(
                Verdict(
                    task_id=task.id,
                    reward=float(ok),
                    passed=ok,
                    verifier="half-pass",
                    tests=[Outcome(name="t", status="passed" if ok else "failed")],
                )
            )
        return out

    def close(self) -> None:
        pass


def test_grpo_and_the_control_update_their_adapters(model_dir: Path, task_file: Path, tmp_path):
    from referee.experiments.lm import LMConfig, run_lm

    cfg = LMConfig(
        model=str(model_dir), tasks=str(task_file), run_dir=str(tmp_path / "run"),
        budget_minutes=0.02, prompts=2, group_size=2, max_tokens=6, eval_batch=3,
        lora_rank=4, lr=1e-2, canary_share=0.0,
    )  # fmt: skip
    summary = run_lm(cfg, log=lambda m: None, verifiers=HalfPass())
    run = tmp_path / "run"
    assert summary["grpo"]["steps"] >= 1 and summary["control_run"]["steps"] >= 1
    # HalfPass alternates within every group of two: no group ties, so no row is skipped
    grpo = summary["grpo"]
    assert grpo["rows_generated"] == 4 * grpo["steps"] and grpo["rows_skipped_as_tied"] == 0
    assert grpo["cpu_s"] > 0
    # LoRA's B matrices start at zero: a non-zero B is an update that happened
    assert lora_b_norm(run / "adapter") > 0
    assert lora_b_norm(run / "control-adapter") > 0
    assert summary["control_run"]["wall_s"] >= summary["grpo"]["wall_s"] * 0.9


def test_a_run_on_the_real_verifier_writes_a_summary_that_referee_eval_reproduces(
    model_dir: Path, task_file: Path, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    r = CliRunner().invoke(
        app, ["train", "--model", str(model_dir), "--tasks", str(task_file), "--run-dir",
              str(run), "--budget-minutes", "0.02", "--prompts", "2", "--group-size", "2",
              "--max-tokens", "6", "--lora-rank", "4", "--json"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    summary = json.loads((run / "summary.json").read_text())
    heldout = [t for t in read_tasks(task_file) if t.split == "heldout"]
    assert summary["n_heldout"] == len(heldout) and summary["n_train"] == 12 - len(heldout)
    for key in ("heldout_base", "heldout_rl", "heldout_control", "p_value"):
        assert 0.0 <= summary[key] <= 1.0, key
    assert summary["tasks_sha256"] and set(summary["stage_s"]) >= {"load", "rl", "control"}
    assert summary["rl"]["infra_errors"] == 0 and summary["base"]["infra_errors"] == 0
    rows = [json.loads(line) for line in (run / "heldout.jsonl").read_text().splitlines()]
    assert {r["stage"] for r in rows} == {"base", "rl", "control"}
    # `referee eval --adapter` gives the trained model's own greedy answers back, and without
    # the adapter the base model's
    from referee.rollout.evaluate import evaluate_policy

    for stage, adapter in (("rl", str(run / "adapter")), ("base", None)):
        again = evaluate_policy(
            f"local:{model_dir}", heldout, max_tokens=6, adapter=adapter, device="cpu"
        )
        answers = [r["answer"] for r in rows if r["stage"] == stage]
        assert again.completions == answers, stage
        assert again.pass_at_1 == summary[f"heldout_{stage}"]


def test_a_task_file_needs_a_model_and_list_ops_options_are_refused(task_file: Path) -> None:
    r = CliRunner().invoke(app, ["train", "--tasks", str(task_file)])
    assert r.exit_code == 2 and "--model" in r.output
    r = CliRunner().invoke(
        app, ["train", "--tasks", str(task_file), "--model", "x", "--sft-steps", "3"]
    )
    assert r.exit_code == 2 and "--sft-steps applies to the list-ops experiment" in r.output
    r = CliRunner().invoke(
        app, ["train", "--tasks", str(task_file), "--model", "x", "--env", "repo"]
    )
    assert r.exit_code == 2 and "--env repo with --tasks FILE" in r.output
    r = CliRunner().invoke(app, ["train", "--budget-minutes", "3"])
    assert r.exit_code == 2 and "--budget-minutes applies to --tasks FILE" in r.output


def test_the_prior_is_fitted_to_the_calibration_and_refused_when_malformed(
    task_file: Path,
) -> None:
    from referee.experiments.lm import LMConfig
    from referee.experiments.lm.recipe import curriculum_config

    cfg = LMConfig(model="m", tasks=str(task_file))
    calibrated = {f"n{i}": [0.0] * 4 for i in range(30)}
    calibrated |= {f"h{i}": [1.0, 1.0, 0.0, 0.0] for i in range(3)}  # a few tasks half solved
    fitted = curriculum_config(cfg, calibrated)
    assert fitted.prior_alpha < 1 < fitted.prior_beta and fitted.unseen_bonus == 0
    # without a calibration: Beta(1, 1), and unseen tasks keep their bonus
    plain = curriculum_config(cfg, {})
    assert (plain.prior_alpha, plain.prior_beta) == (1.0, 1.0) and plain.unseen_bonus > 0
    r = CliRunner().invoke(
        app, ["train", "--tasks", str(task_file), "--model", "x", "--prior", "0,1"]
    )
    assert r.exit_code == 2 and "--prior" in r.output and "positive" in r.output
    r = CliRunner().invoke(app, ["train", "--prior", "1,1"])
    assert r.exit_code == 2 and "--prior applies to --tasks FILE" in r.output


def test_the_control_draws_its_tasks_through_the_curriculum_it_is_given(
    model_dir: Path, task_file: Path, tmp_path: Path
) -> None:
    """GRPO's curriculum, given to the control, is what chooses the control's tasks (here two
    left eligible by quarantine) and learns from the control's verdicts."""
    from referee.experiments.lm import LMConfig
    from referee.experiments.lm.control import rejection_sampling_fine_tune
    from referee.experiments.lm.model import load_model, make_trainable
    from referee.tasks.curriculum import Curriculum

    cfg = LMConfig(
        model=str(model_dir), tasks=str(task_file), run_dir=str(tmp_path / "run"),
        prompts=2, group_size=2, max_tokens=6, lora_rank=4, lr=1e-2,
    )  # fmt: skip
    train = [t for t in read_tasks(task_file) if t.split == "train"]
    cur = Curriculum([t.id for t in train], seed=0)
    kept = {train[0].id, train[1].id}
    cur.quarantine([t.id for t in train if t.id not in kept])
    model, tokenizer, _ = load_model(cfg.model, "cpu")
    model = make_trainable(model, cfg)
    result = rejection_sampling_fine_tune(
        model, tokenizer, train, cfg, wall_s=0.0, verifiers=HalfPass(), log=lambda m: None,
        curriculum=cur,
    )  # fmt: skip
    assert result.rounds == 1 and result.samples == 4
    assert {t.id for t in train if cur.tracker.attempts(t.id)} == kept
    assert all(cur.tracker.attempts(i) == 2 for i in kept)
