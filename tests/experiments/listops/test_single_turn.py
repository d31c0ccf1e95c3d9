"""A short real run of the single-turn experiment: fine-tuning, GRPO with sandboxed rewards,
control."""

import json

import pytest

pytest.importorskip("trl")


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    from referee.experiments.listops import TinyConfig, experiment_config, run_experiment

    run = tmp_path_factory.mktemp("run")
    options = dict(
        run_dir=str(run),
        tasks=300,
        difficulties=(0.0,),  # one-step tasks: a few seconds of fine-tuning solve some
        eval_tasks=24,
        # 300 steps: with 8 demonstrator draws per task, 150 were not always enough for the
        # tiny model to solve any task, and GRPO then had no group with differing rewards.
        sft_steps=300,
        sft_batch=16,
        rl_steps=3,
        rl_prompts=4,
        group_size=4,
        max_completion_tokens=32,
        tiny=TinyConfig(hidden=64, layers=2, heads=2, ffn=128),
        report_to="tensorboard",
        metrics_port=0,
        demo_draws=8,
    )
    results = run_experiment(experiment_config(options), log=lambda m: None)
    assert results.rl.steps == 3 and results.sft.steps == 300  # frozen stage results
    return run, results.to_json()


def test_the_run_reports_every_stage_and_writes_its_folder(small_run):
    run, results = small_run
    for key in (
        "heldout_before",
        "heldout_sft",
        "heldout_rl",
        "heldout_sft_control",
        "train_reward",
    ):
        assert 0.0 <= results[key] <= 1.0, key
    assert results["rl"]["steps"] == 3 and results["heldout_tasks"] == 24
    assert set(results["heldout_infra_errors"]) >= {"before", "sft", "rl", "control"}
    assert not any(results["heldout_infra_errors"].values())
    for name in ("config.json", "results.json", "heldout_per_task.json", "rl_metrics.jsonl"):
        assert (run / name).exists(), name
    for model in ("model-sft", "model-rl", "model-control"):
        assert (run / model / "config.json").exists(), model


def test_the_control_gets_grpo_s_wall_time_as_it_always_did(small_run):
    # issue 27 added a CPU clock for the control (multi-turn's default); single-turn keeps the
    # wall clock, so `make demo` sizes its control as before: GRPO's wall seconds at
    # fine-tuning's wall pace.
    _, results = small_run
    sft, rl, control = results["sft"], results["rl"], results["control"]
    assert control["planned_steps"] == int(rl["wall_s"] / (sft["train_s"] / sft["steps"]))
    assert rl["cpu_s"] > 0 and sft["cpu_s"] > 0  # measured, though the wall clock decides


def test_grpo_really_updates_the_model(small_run):
    import torch
    from transformers import AutoModelForCausalLM

    run, results = small_run
    # A gradient needs a group whose rewards differ; the fine-tuned model gets some tasks right.
    assert results["rl"]["frac_zero_std_mean"] < 1.0, results["rl"]
    sft = AutoModelForCausalLM.from_pretrained(run / "model-sft").state_dict()
    rl = AutoModelForCausalLM.from_pretrained(run / "model-rl").state_dict()
    changed = [k for k in sft if not torch.equal(sft[k], rl[k])]
    assert changed, "GRPO left every parameter unchanged"


def test_rollouts_are_verified_training_tasks_only(small_run):
    from referee.track.store import TrackStore

    run, _ = small_run
    with TrackStore(run, create=False) as store:
        (meta,) = store.runs()
        rows = store.trajectories(run_id=meta.run_id)
        metrics = {m.name for m in store.metrics(meta.run_id)}
        assert meta.status == "finished"
    assert len(rows) == 3 * 4 * 4  # steps x tasks x group
    assert sorted({r.step for r in rows}) == [0, 1, 2]
    heldout = set(json.loads((run / "heldout_per_task.json").read_text())["task_ids"])
    assert not heldout & {r.task_id for r in rows}
    assert all(r.verdict is not None and r.verdict.infra_error is None for r in rows)
    assert all(0.0 <= r.verdict.reward <= 1.0 for r in rows if r.verdict)
    # the step metrics and the held-out points the dashboard draws
    assert {"reward_mean", "pass_rate", "heldout_pass_rate"} <= metrics


def test_referee_metrics_reach_the_trainers_logger_and_canaries_the_pool(small_run):
    pytest.importorskip("tensorboardX")
    from referee.track.store import TrackStore
    from tests.track.test_loggers import scalars

    run, results = small_run
    tags = scalars(run / "rl")
    # TRL's own reward and referee's step metrics, side by side in TensorBoard
    assert "train/reward" in tags and "train/referee/reward_mean" in tags, sorted(tags)
    assert len(tags["train/referee/reward_mean"]) == results["rl"]["steps"]
    assert results["rl"]["canaries"] >= 1
    with TrackStore(run, create=False) as store:
        canaries = [t for t in store.tasks() if t.hidden.get("canary")]
    assert len(canaries) == results["rl"]["canaries"]


def test_audit_labels_of_an_earlier_run_keep_its_tasks_out(small_run, tmp_path):
    from referee.experiments.listops.tasks import quarantined_tasks
    from referee.track.audit import AuditQueue
    from referee.track.store import TrackStore

    run, _ = small_run
    with TrackStore(run, create=False) as store:
        (meta,) = store.runs()
        first = store.trajectories(run_id=meta.run_id, limit=1)[0]
        AuditQueue(store).label(first.id, "broken-task", note="test")
    assert quarantined_tasks([str(run)]) == {first.task_id}
    from referee.errors import StoreError

    with pytest.raises(StoreError):
        quarantined_tasks([str(tmp_path)])
